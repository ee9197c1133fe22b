import LocusCore

/// Tag id → dense tag index, for the engine's per-row lookup: open addressing with linear probing
/// on an FNV-1a hash of the id's UTF-8 bytes (h ← (h ⊕ b)·0x100000001b3), checked by a stored
/// 64-bit hash before the string compare. About 3× cheaper than `Dictionary`'s SipHash for short
/// ids, and 24 bytes per tag (id, hash) plus 4 bytes per slot at a load of at most ½.
///
/// FNV is not flooding-resistant: ids crafted to collide make lookups O(n). Tag ids come from the
/// operator's own hardware, which is why the engine accepts that.
struct TagTable: Sendable {
    private var slots = [Int32](repeating: -1, count: 16)
    private var hashes: [UInt64] = []
    private(set) var ids: [TagID] = []

    /// The number of ids.
    var count: Int { ids.count }

    /// FNV-1a over the UTF-8 bytes, folded.
    @inline(__always)
    static func hash(_ id: TagID) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in id.rawValue.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        return h ^ (h >> 29)
    }

    /// The index of `id`, or nil. O(1) expected.
    func index(of id: TagID, hash h: UInt64) -> Int? {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let k = Int(slots[i])
            if k < 0 { return nil }
            if hashes[k] == h && ids[k] == id { return k }
            i = (i + 1) & mask
        }
    }

    /// Adds `id` (not present) and returns its index (the previous count).
    mutating func insert(_ id: TagID, hash h: UInt64) -> Int {
        let index = ids.count
        precondition(index < Int(Int32.max), "TagTable: more than 2³¹ − 1 tags")
        ids.append(id)
        hashes.append(h)
        if ids.count * 2 > slots.count {
            slots = [Int32](repeating: -1, count: slots.count * 2)
            for k in ids.indices { place(k) }
        } else {
            place(index)
        }
        return index
    }

    private mutating func place(_ k: Int) {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: hashes[k]) & mask
        while slots[i] >= 0 { i = (i + 1) & mask }
        slots[i] = Int32(truncatingIfNeeded: k)
    }
}
