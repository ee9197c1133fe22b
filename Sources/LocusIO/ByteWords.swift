/// Eight bytes at a time in one 64-bit register ("SWAR"): the byte tests and the digit conversion
/// behind the trace parser's fast rows (`TraceRowParser`).
///
/// A word is eight consecutive input bytes loaded little-endian, so the byte at offset j is bits
/// 8j…8j+7 and the first byte in memory is the lowest. Every test below is exact per byte (no
/// borrow or carry crosses from one byte into the next), so a mask bit can be trusted without a
/// second look at the byte.
enum ByteWords {
    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let highBits: UInt64 = 0x8080_8080_8080_8080
    static let lowSeven: UInt64 = 0x7F7F_7F7F_7F7F_7F7F

    /// The eight bytes at `offset` (any alignment); the caller guarantees `offset + 8 ≤ count`.
    @inline(__always)
    static func load(_ base: UnsafePointer<UInt8>, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self))
    }

    /// Bit 8j+7 set exactly where byte j of `w` is below `limit` (1…128): with x the low seven bits
    /// of a byte, x + (128 − limit) reaches bit 7 iff x ≥ limit, and never carries out of the byte
    /// (x + 127 < 256); a byte with its own bit 7 set (≥ 128) is not below.
    @inline(__always)
    static func below(_ w: UInt64, _ limit: UInt8) -> UInt64 {
        let step = UInt64(128 &- limit) &* ones
        return ~(((w & lowSeven) &+ step) | w) & highBits
    }

    /// Bit 8j+7 set exactly where byte j of `w` equals `byte` (a zero byte of w ^ byte·0x01…01).
    @inline(__always)
    static func equal(_ w: UInt64, _ byte: UInt8) -> UInt64 {
        let x = w ^ (UInt64(byte) &* ones)
        return ~(((x & lowSeven) &+ lowSeven) | x | lowSeven)
    }

    /// The value of the `n` (0…8) ASCII digits in the low bytes of `w` (the first byte the most
    /// significant digit), or nil when one of them is not `0`…`9`; 0 for n = 0.
    ///
    /// The n bytes are shifted to the top of the word, so the bytes below them are zero (leading
    /// zero digits). A byte b is a digit iff its high nibble is 3 and b + 6 keeps it (b ≤ 0x39); a
    /// zero byte passes both tests as the expected zero. Then pairs, quads and the two halves are
    /// combined by three multiplications: 10a + b per 16 bits, 100a + b per 32, 10⁴a + b for all
    /// (the byte order makes the lower-addressed half the high part).
    @inline(__always)
    static func digits(_ w: UInt64, count n: Int) -> UInt64? {
        let shift = UInt64(truncatingIfNeeded: 64 &- 8 &* n)
        let x = n == 0 ? 0 : w &<< shift
        let expected = n == 0 ? 0 : 0x3030_3030_3030_3030 &<< shift
        let nibbles: UInt64 = 0xF0F0_F0F0_F0F0_F0F0
        guard x & nibbles == expected, (x &+ 0x0606_0606_0606_0606) & nibbles == expected else { return nil }
        var v = x & 0x0F0F_0F0F_0F0F_0F0F
        v = (v &* 2561) &>> 8
        v = ((v & 0x00FF_00FF_00FF_00FF) &* 6_553_601) &>> 16
        v = ((v & 0x0000_FFFF_0000_FFFF) &* 42_949_672_960_001) &>> 32
        return v
    }
}
