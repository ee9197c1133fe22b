import LocusCore

/// Open-addressing hash table from a tag id to its index in the judge's tag list: FNV-1a over the
/// id's UTF-8 bytes, h ← (h ⊕ b)·1099511628211 from 14695981039346656037, linear probing, load ≤ ½.
/// Cheaper than `Dictionary`'s seeded SipHash on the per-fix path; it only maps ids to indices, so no
/// iteration order can reach the output.
struct TagTable: Sendable {
    /// Tag index + 1 per bucket; 0 is empty.
    private var buckets = [Int32](repeating: 0, count: 16)
    private var count = 0

    private static func hash(_ id: TagID) -> Int {
        var h: UInt64 = 14_695_981_039_346_656_037
        let fast: Void? = id.rawValue.utf8.withContiguousStorageIfAvailable { bytes in
            for b in bytes { h = (h ^ UInt64(b)) &* 1_099_511_628_211 }
        }
        if fast == nil {
            for b in id.rawValue.utf8 { h = (h ^ UInt64(b)) &* 1_099_511_628_211 }
        }
        return Int(truncatingIfNeeded: h ^ (h >> 29))
    }

    /// The index of `id` in `tags`, or nil. O(1) expected.
    func find(_ id: TagID, in tags: [ZoneJudge.TagState]) -> Int? {
        let mask = buckets.count - 1
        var i = Self.hash(id) & mask
        while true {
            let slot = Int(buckets[i])
            if slot == 0 { return nil }
            if tags[slot - 1].id == id { return slot - 1 }
            i = (i + 1) & mask
        }
    }

    /// Records that `id` has index `index` in `tags` (not present yet). Amortised O(1).
    mutating func insert(_ id: TagID, index: Int, in tags: [ZoneJudge.TagState]) {
        if 2 * (count + 1) > buckets.count {
            let old = buckets
            buckets = [Int32](repeating: 0, count: old.count * 2)
            for slot in old where slot != 0 { place(tags[Int(slot) - 1].id, slot: slot) }
        }
        place(id, slot: Int32(index + 1))
        count += 1
    }

    private mutating func place(_ id: TagID, slot: Int32) {
        let mask = buckets.count - 1
        var i = Self.hash(id) & mask
        while buckets[i] != 0 { i = (i + 1) & mask }
        buckets[i] = slot
    }
}
