import LocusCore

/// One output record (a CSV row or a JSON Lines record) written into caller-owned scratch memory,
/// then appended to the output buffer in one copy.
///
/// Every `append…` either writes its whole item and returns true, or writes nothing and returns
/// false (no room, or a value its fast path cannot spell exactly): the writer then writes the
/// record again through the exact path (`PositionsWriter.appendExact`, `ZoneEventWriter` via
/// `JSONWriter`). Numbers are spelled exactly as `JSONNumberFormat` spells them; the tests compare
/// the two on seeded random values and on edge cases.
struct ScratchRow {
    private let base: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    /// Bytes written so far.
    private(set) var count = 0

    /// A row writing into `capacity` bytes at `base` (the caller keeps the memory alive).
    init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// The bytes written.
    var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    /// Appends one byte; false when full.
    @inline(__always)
    mutating func append(_ byte: UInt8) -> Bool {
        guard count < capacity else { return false }
        base[count] = byte
        count += 1
        return true
    }

    /// Appends ASCII bytes given as a static string (keys, punctuation); false when full.
    @inline(__always)
    mutating func append(_ text: StaticString) -> Bool {
        let n = text.utf8CodeUnitCount
        guard count + n <= capacity else { return false }
        (base + count).update(from: text.utf8Start, count: n)
        count += n
        return true
    }

    /// Appends the UTF-8 of `text` unchanged when it fits and holds no byte in `forbidden`
    /// (ASCII control bytes below 0x20 are always refused); false otherwise.
    mutating func appendPlain(_ text: String, forbidding first: UInt8, _ second: UInt8) -> Bool {
        let stored = text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard count + utf8.count <= capacity else { return false }
            for b in utf8 where b < 0x20 || b == first || b == second { return false }
            (base + count).update(from: utf8.baseAddress!, count: utf8.count)
            count += utf8.count
            return true
        }
        if let stored { return stored }
        var text = text
        return text.withUTF8 { utf8 in
            guard count + utf8.count <= capacity else { return false }
            for b in utf8 where b < 0x20 || b == first || b == second { return false }
            for (k, b) in utf8.enumerated() { base[count + k] = b }
            count += utf8.count
            return true
        }
    }

    /// Appends `x` as `JSONNumberFormat.fixed(decimals)` would, when its fast path decides: p =
    /// |x|·10ⁿ rounded half away from zero, for p < 10¹² and p's fraction clearly away from ½ (the
    /// argument is on `JSONNumberFormat.appendFixedFast`); `decimals` in 0…12. False otherwise
    /// (including NaN and infinities), writing nothing. (Transparent, inlined even at the eleven sites of
    /// one positions row, where `@inline(__always)` left a call.)
    @_transparent
    mutating func appendFixed(_ x: Double, decimals: Int) -> Bool {
        let scaled = abs(x) * Self.powerOfTen(decimals)
        guard scaled < 1e12 else { return false }  // also refuses NaN and ±∞
        // ⌊scaled⌋ by a signed conversion (one instruction each way on x86-64; `rounded(.down)` is a
        // libm call without SSE4.1 and UInt64 ↔ Double conversions take several instructions).
        let whole = Int64(scaled)
        let fraction = scaled - Double(whole)  // exact: scaled < 2⁵²
        let guardBand = (scaled + 1) * 1e-14
        guard abs(fraction - 0.5) > guardBand else { return false }
        let n = UInt64(whole) + (fraction > 0.5 ? 1 : 0)
        return appendDigits(n, negative: x < 0, decimals: decimals)
    }

    /// Appends a whole number in decimal.
    mutating func appendInteger(_ n: Int) -> Bool {
        appendDigits(UInt64(n.magnitude), negative: n < 0, decimals: 0)
    }

    /// Appends a 16-bit locator address as `LocatorAddress.description` spells it: `0x` and four
    /// upper-case hex digits.
    mutating func appendAddress(_ address: UInt16) -> Bool {
        guard count + 6 <= capacity else { return false }
        base[count] = UInt8(ascii: "0")
        base[count + 1] = UInt8(ascii: "x")
        for k in 0..<4 {
            let nibble = UInt8(truncatingIfNeeded: address >> (12 - 4 * k)) & 0xF
            base[count + 2 + k] = nibble < 10 ? 0x30 + nibble : 0x37 + nibble
        }
        count += 6
        return true
    }

    /// Writes n·10⁻ᵈ with exactly d decimals (at least one digit before the point); the sign only
    /// when n ≠ 0 — `JSONNumberFormat.appendDigits`'s bytes.
    ///
    /// Right to left, two digits at a time from a 100-pair table (one odd fraction digit first):
    /// ⌈digits/2⌉ divisions by the literal 100, which compile to a multiplication and a shift —
    /// no `div` even when d is not known where this is inlined.
    @inline(__always)
    mutating func appendDigits(_ n: UInt64, negative: Bool, decimals: Int) -> Bool {
        if n < 100_000_000, decimals < 8, count + 24 <= capacity {
            appendEightDigits(n, negative: negative, decimals: decimals)
            return true
        }
        return appendManyDigits(n, negative: negative, decimals: decimals)
    }

    /// `appendDigits` for any n and d (out of line: the usual numbers take `appendEightDigits`, and
    /// this loop inlined at every call site kept `appendFixed` itself from being inlined).
    @inline(never)
    private mutating func appendManyDigits(_ n: UInt64, negative: Bool, decimals: Int) -> Bool {
        let sign = negative && n != 0 ? 1 : 0
        let wholeDigits = max(Self.decimalDigitCount(n) - decimals, 1)
        let length = sign + wholeDigits + (decimals > 0 ? decimals + 1 : 0)
        guard count + length <= capacity else { return false }
        var position = count + length
        var rest = n
        var left = decimals
        if left & 1 == 1 {
            position -= 1
            base[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
            left -= 1
        }
        while left > 0 {
            position -= 2
            writePair(Int(truncatingIfNeeded: rest % 100), at: position)
            rest /= 100
            left -= 2
        }
        if decimals > 0 {
            position -= 1
            base[position] = UInt8(ascii: ".")
        }
        while rest >= 100 {
            position -= 2
            writePair(Int(truncatingIfNeeded: rest % 100), at: position)
            rest /= 100
        }
        if rest >= 10 {
            position -= 2
            writePair(Int(truncatingIfNeeded: rest), at: position)
        } else {
            position -= 1
            base[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest)
        }
        if sign == 1 { base[count] = UInt8(ascii: "-") }
        count += length
        return true
    }

    /// `appendDigits` for n < 10⁸ and d < 8, with at least 24 bytes of room (its stores are 8 bytes
    /// wide): n as eight digits in one word (`eightDigits`), the leading zeros cut (but for the one
    /// before the point), then the whole digits and the fraction stored as two words around the point.
    @inline(__always)
    private mutating func appendEightDigits(_ n: UInt64, negative: Bool, decimals: Int) {
        let values = Self.eightDigits(n)
        // Leading zero digits are zero bytes at the low end (all eight for n = 0).
        let leadingZeros = values == 0 ? 8 : values.trailingZeroBitCount >> 3
        let total = max(8 - leadingZeros, decimals + 1)
        let whole = total - decimals
        let text = (values | 0x3030_3030_3030_3030) &>> UInt64(truncatingIfNeeded: 8 &* (8 &- total))
        var at = count
        if negative && n != 0 {
            base[at] = UInt8(ascii: "-")
            at += 1
        }
        let raw = UnsafeMutableRawPointer(base)
        raw.storeBytes(of: UInt64(littleEndian: text), toByteOffset: at, as: UInt64.self)
        if decimals > 0 {
            base[at + whole] = UInt8(ascii: ".")
            raw.storeBytes(of: UInt64(littleEndian: text &>> UInt64(truncatingIfNeeded: 8 &* whole)), toByteOffset: at + whole + 1, as: UInt64.self)
            at += 1
        }
        count = at + total
    }

    /// The eight decimal digits of n < 10⁸ as byte values 0…9, the most significant in the lowest
    /// byte (memory order), by multiplications in parallel lanes: n = 10⁴h + l puts h and l in two
    /// 32-bit lanes; q = ⌊x·10486 / 2²⁰⌋ = ⌊x/100⌋ for x < 10⁴ splits each into two 16-bit lanes
    /// (q, x − 100q); q = ⌊x·103 / 2¹⁰⌋ = ⌊x/10⌋ for x < 100 splits those into bytes. No lane
    /// overflows into the next (10⁴·10486 < 2³², 100·103 < 2¹⁶), nor the word (checked for every n
    /// by the tests, through `JSONNumberFormat`'s spelling).
    @inline(__always)
    static func eightDigits(_ n: UInt64) -> UInt64 {
        var v = n / 10_000 | (n % 10_000) << 32
        let hundreds = ((v &* 10486) >> 20) & 0x0000_007F_0000_007F
        v = hundreds | (v &- hundreds &* 100) << 16
        let tens = ((v &* 103) >> 10) & 0x000F_000F_000F_000F
        return tens | (v &- tens &* 10) << 8
    }

    /// "00", "01", …, "99": the two digits of k at offset 2k.
    private static var digitPairs: StaticString {
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
    }

    /// Writes the two decimal digits of `pair` (0…99) at `position`.
    @inline(__always)
    private func writePair(_ pair: Int, at position: Int) {
        let digits = Self.digitPairs.utf8Start + 2 * pair
        base[position] = digits[0]
        base[position + 1] = digits[1]
    }

    /// The number of decimal digits of n (1 for 0).
    @inline(__always)
    private static func decimalDigitCount(_ n: UInt64) -> Int {
        var digits = 1
        var rest = n
        while rest >= 10_000 { rest /= 10_000; digits += 4 }
        if rest >= 100 { rest /= 100; digits += 2 }
        if rest >= 10 { digits += 1 }
        return digits
    }

    /// 10ⁿ for n in 0…12 (exact); +∞ otherwise, so `appendFixed` declines.
    @inline(__always)
    private static func powerOfTen(_ n: Int) -> Double {
        n >= 0 && n <= 12 ? CSVNumberParser.exactPowerOfTen(n) : .infinity
    }
}
