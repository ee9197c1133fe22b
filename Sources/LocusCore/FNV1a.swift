/// The 64-bit FNV-1a hash, folded: h ← (h ⊕ b)·0x100000001b3 from 0xcbf29ce484222325 over the bytes,
/// then h ⊕ (h ≫ 29) so that the low bits (table slots) see the high ones. Cheap and deterministic
/// (no per-process seed), for the id tables of the hot paths (`TagRegistry`, the CSV reader's field
/// cache); not flooding-resistant, which is why only the operator's own ids go through it.
@usableFromInline package struct FNV1a: Sendable {
    /// The running state.
    @usableFromInline var state: UInt64 = 0xcbf2_9ce4_8422_2325

    /// The empty input's state.
    @inlinable package init() {}

    /// Mixes in one byte.
    @inlinable @inline(__always)
    package mutating func combine(_ byte: UInt8) { state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }

    /// The folded hash of the bytes so far.
    @inlinable package var value: UInt64 { state ^ (state >> 29) }

    /// The folded hash of `bytes`.
    @inlinable @inline(__always)
    static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var h = FNV1a()
        for b in bytes { h.combine(b) }
        return h.value
    }
}
