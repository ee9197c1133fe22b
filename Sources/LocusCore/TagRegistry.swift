/// Tag id → `TagIndex`, the one tag registry of an engine (every stage downstream takes the index).
///
/// Open addressing with linear probing on the `FNV1a` hash of the id's UTF-8 bytes, checked by a stored
/// 64-bit hash before the string compare: about 3× cheaper than `Dictionary`'s SipHash for short
/// ids, 24 bytes per tag (id, hash) plus 4 bytes per slot at a load of at most ½. In front of the
/// table, the four ids most recently looked up (round robin): rows of a few tags interleave in time
/// order, so most rows cost a short string compare and no hash.
///
/// FNV is not flooding-resistant: ids crafted to collide make lookups O(n). Tag ids come from the
/// operator's own hardware, which is why the engine accepts that. Indices only name tags: no
/// iteration order of the table reaches any output.
///
/// Indices are recycled when a bounded engine evicts a tag (`unregister(_:)`): the index goes to a
/// free list and the next new id takes it (the most recently freed first), so `ids` never grows
/// beyond the most tags live at once.
///
/// `@usableFromInline` with `@inlinable` members (like `MinHeap`), so that the per-row lookup inlines
/// into the engine across modules.
@usableFromInline package struct TagRegistry: Sendable {
    @usableFromInline var slots = [Int32](repeating: -1, count: 16)
    @usableFromInline var hashes: [UInt64] = []
    /// The ids, by index.
    @usableFromInline package private(set) var ids: [TagID] = []
    /// The recent lookups: (id, index) × 4, index −1 when empty.
    @usableFromInline var recent: (TagID, Int, TagID, Int, TagID, Int, TagID, Int) = ("", -1, "", -1, "", -1, "", -1)
    @usableFromInline var recentNext = 0
    /// Indices given back by `unregister(_:)`, taken again by the next new ids (last freed first).
    @usableFromInline var freeIndices: [Int32] = []

    /// An empty registry.
    package init() {}

    /// The number of indices handed out (registered tags plus freed indices not yet taken again).
    @inlinable var count: Int { ids.count }

    /// The number of tags registered now (`count` less the freed indices).
    @inlinable package var liveCount: Int { ids.count - freeIndices.count }

    /// True when `index` names a tag now (false for a freed index).
    func isLive(_ index: TagIndex) -> Bool {
        let k = index.rawValue
        guard k >= 0, k < ids.count else { return false }
        return find(ids[k], hash: hashes[k]) == k
    }

    /// The id of tag `index`.
    @inlinable subscript(index: TagIndex) -> TagID { ids[index.rawValue] }

    /// The index of `id`, or nil when it was never registered. O(1) expected.
    @inlinable package func index(of id: TagID) -> TagIndex? {
        find(id, hash: Self.hash(id)).map(TagIndex.init)
    }

    /// The index of `id`, registering it when new (`isNew` then true). O(1) expected (amortised).
    @inlinable package mutating func register(_ id: TagID) -> (index: TagIndex, isNew: Bool) {
        if recent.1 >= 0 && recent.0 == id { return (TagIndex(recent.1), false) }
        if recent.3 >= 0 && recent.2 == id { return (TagIndex(recent.3), false) }
        if recent.5 >= 0 && recent.4 == id { return (TagIndex(recent.5), false) }
        if recent.7 >= 0 && recent.6 == id { return (TagIndex(recent.7), false) }
        return registerHashed(id)
    }

    /// `register(_:)` past the recent-lookup cache, which it updates.
    @usableFromInline mutating func registerHashed(_ id: TagID) -> (index: TagIndex, isNew: Bool) {
        let h = Self.hash(id)
        var isNew = false
        let index: Int
        if let known = find(id, hash: h) {
            index = known
        } else {
            index = insert(id, hash: h)
            isNew = true
        }
        switch recentNext {
        case 0: recent.0 = id; recent.1 = index
        case 1: recent.2 = id; recent.3 = index
        case 2: recent.4 = id; recent.5 = index
        default: recent.6 = id; recent.7 = index
        }
        recentNext = (recentNext + 1) & 3
        return (TagIndex(index), isNew)
    }

    /// `FNV1a` over the UTF-8 bytes.
    @inlinable @inline(__always)
    static func hash(_ id: TagID) -> UInt64 { FNV1a.hash(id.rawValue.utf8) }

    /// The index of `id` with hash `h`, or nil.
    @inlinable func find(_ id: TagID, hash h: UInt64) -> Int? {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let k = Int(slots[i])
            if k < 0 { return nil }
            if hashes[k] == h && ids[k] == id { return k }
            i = (i + 1) & mask
        }
    }

    /// Adds `id` (not present) and returns its index: a freed one when there is one, else the
    /// previous count.
    @usableFromInline mutating func insert(_ id: TagID, hash h: UInt64) -> Int {
        if let free = freeIndices.popLast() {
            let index = Int(free)
            ids[index] = id
            hashes[index] = h
            place(index)
            return index
        }
        let index = ids.count
        precondition(index < Int(Int32.max), "TagRegistry: more than 2³¹ − 1 tags")
        ids.append(id)
        hashes.append(h)
        if ids.count * 2 > slots.count {
            // (Only with no freed index: every index names a tag.)
            slots = [Int32](repeating: -1, count: slots.count * 2)
            for k in ids.indices { place(k) }
        } else {
            place(index)
        }
        return index
    }

    /// Forgets the tag at `index` (a bounded engine evicted it): its id is no longer found, and
    /// the index goes to the free list for the next new id. O(1) expected: the table's cluster
    /// after the slot is shifted back (deletion without tombstones, so lookups stay as short as if
    /// the id had never been added). The recent-lookup cache forgets the index too.
    package mutating func unregister(_ index: TagIndex) {
        let k = index.rawValue
        precondition(isLive(index), "TagRegistry.unregister: index \(k) names no tag")
        let mask = slots.count - 1
        var hole = Int(truncatingIfNeeded: hashes[k]) & mask
        while Int(slots[hole]) != k { hole = (hole + 1) & mask }
        slots[hole] = -1
        // Backward-shift deletion: an entry after the hole moves into it unless its home slot lies
        // cyclically in (hole, j] (then it is still reachable from home without the hole).
        var j = hole
        while true {
            j = (j + 1) & mask
            let e = Int(slots[j])
            if e < 0 { break }
            let home = Int(truncatingIfNeeded: hashes[e]) & mask
            let reachable = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j)
            if !reachable {
                slots[hole] = slots[j]
                slots[j] = -1
                hole = j
            }
        }
        ids[k] = TagID("")
        freeIndices.append(Int32(truncatingIfNeeded: k))
        if recent.1 == k { recent.1 = -1 }
        if recent.3 == k { recent.3 = -1 }
        if recent.5 == k { recent.5 = -1 }
        if recent.7 == k { recent.7 = -1 }
    }

    private mutating func place(_ k: Int) {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: hashes[k]) & mask
        while slots[i] >= 0 { i = (i + 1) & mask }
        slots[i] = Int32(truncatingIfNeeded: k)
    }
}
