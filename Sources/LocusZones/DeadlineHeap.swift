/// A binary min-heap of zone-state deadlines, ordered by (time, strictness): at equal times a
/// non-strict deadline (due when the clock reaches it) comes before a strict one (due only once
/// the clock has passed it). Push and pop O(log n); no allocation once capacity is reached.
struct DeadlineHeap: Sendable {
    /// One deadline: the earliest time at which the state in `slot` may produce an event.
    struct Entry: Sendable {
        var timeSeconds: Double
        /// True when due only once the clock is strictly past `timeSeconds` (an exit deadline).
        var isStrict: Bool
        var slot: Int32
        /// The slot's generation when pushed; a freed and reused slot makes the entry stale.
        var generation: UInt32

        /// Due at clock c: t < c, or t == c for a non-strict deadline.
        func isDue(atClock clockSeconds: Double) -> Bool {
            timeSeconds < clockSeconds || (timeSeconds == clockSeconds && !isStrict)
        }

        static func before(_ a: Entry, _ b: Entry) -> Bool {
            if a.timeSeconds != b.timeSeconds { return a.timeSeconds < b.timeSeconds }
            return !a.isStrict && b.isStrict
        }
    }

    private(set) var entries: [Entry] = []

    var top: Entry? { entries.first }
    var count: Int { entries.count }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var i = entries.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard Entry.before(entries[i], entries[parent]) else { break }
            entries.swapAt(i, parent)
            i = parent
        }
    }

    mutating func popTop() -> Entry? {
        guard let first = entries.first else { return nil }
        let last = entries.removeLast()
        if entries.isEmpty { return first }
        entries[0] = last
        var i = 0
        let n = entries.count
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < n, Entry.before(entries[l], entries[m]) { m = l }
            if r < n, Entry.before(entries[r], entries[m]) { m = r }
            if m == i { break }
            entries.swapAt(i, m)
            i = m
        }
        return first
    }
}
