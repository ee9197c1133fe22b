/// A tag's (tag, zone) pair slots that are counting or inside, in the order the judge keeps them:
/// the first four inline, any more in an array.
///
/// A tag is in reach of a few zones at a time, so the list is nearly always inline: judging a fix
/// reads it from the tag's entry itself, with no second allocation to fetch from memory (with
/// 100,000 live tags each list was a cache miss of its own), and the judge can prefetch the pair
/// states it names (`ZoneJudge.prefetchPairs(of:)`). Removal swaps the last slot into the hole, as
/// the array it replaces did.
struct PairSlotList: RandomAccessCollection, Sendable {
    /// Slots held inline.
    static let inlineCapacity = 4
    private var near = InlineArray<4, Int32>(repeating: -1)
    /// Slots past the fourth (rare: a tag in reach of more than four zones' rules at once).
    private var far: [Int32] = []
    private(set) var count = 0

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(i: Int) -> Int32 {
        get {
            precondition(i >= 0 && i < count, "PairSlotList: index out of range")
            return i < Self.inlineCapacity ? near[i] : far[i - Self.inlineCapacity]
        }
        set {
            precondition(i >= 0 && i < count, "PairSlotList: index out of range")
            if i < Self.inlineCapacity { near[i] = newValue } else { far[i - Self.inlineCapacity] = newValue }
        }
    }

    /// The index of the first slot for which `matches` holds: the inline slots, then the array's
    /// buffer, each read directly (the collection's default walks `subscript`, which tests which part
    /// an index is in and checks its bounds at every element: with a tag near many zones, as with
    /// 10,000 zones on a floor, that was ≈ 12 % more of the zone judge's work).
    @inline(__always)
    func firstIndex(where matches: (Int32) throws -> Bool) rethrows -> Int? {
        let inline = Swift.min(count, Self.inlineCapacity)
        var i = 0
        while i < inline {
            if try matches(near[i]) { return i }
            i += 1
        }
        guard count > Self.inlineCapacity else { return nil }
        return try far.withUnsafeBufferPointer { rest in
            for k in rest.indices where try matches(rest[k]) { return k + Self.inlineCapacity }
            return nil
        }
    }

    /// The index of `slot`, if the list holds it.
    @inline(__always)
    func firstIndex(of slot: Int32) -> Int? { firstIndex { $0 == slot } }

    /// Adds `slot` at the end.
    mutating func append(_ slot: Int32) {
        if count < Self.inlineCapacity { near[count] = slot } else { far.append(slot) }
        count += 1
    }

    /// Removes the element at `i`, moving the last one into its place.
    mutating func swapRemove(at i: Int) {
        let last = count - 1
        self[i] = self[last]
        if last >= Self.inlineCapacity { far.removeLast() }
        count = last
    }
}
