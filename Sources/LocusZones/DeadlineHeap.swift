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

    /// Adds an entry: sift-up by moving parents into the hole. O(log n).
    mutating func push(_ entry: Entry) {
        entries.append(entry)
        entries.withUnsafeMutableBufferPointer { e in
            var i = e.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard Entry.before(entry, e[parent]) else { break }
                e[i] = e[parent]
                i = parent
            }
            e[i] = entry
        }
    }

    /// Removes and returns the earliest entry: sift-down of the last entry by moving the smaller
    /// child into the hole. O(log n).
    mutating func popTop() -> Entry? {
        guard let first = entries.first else { return nil }
        let last = entries.removeLast()
        guard !entries.isEmpty else { return first }
        entries.withUnsafeMutableBufferPointer { e in
            let n = e.count
            var i = 0
            while true {
                var child = 2 * i + 1
                if child >= n { break }
                if child + 1 < n, Entry.before(e[child + 1], e[child]) { child += 1 }
                guard Entry.before(e[child], last) else { break }
                e[i] = e[child]
                i = child
            }
            e[i] = last
        }
        return first
    }
}
