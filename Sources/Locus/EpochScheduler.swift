import LocusCore
import LocusNumerics

/// Every tag's open epoch (`EpochTable`) and when each is due: the engine's schedule.
///
/// - The **due queue** holds, per open epoch, a lower bound of the time at which no later range can
///   join it (the clock passing it closes the epoch: `nextDue(at:)`).
/// - The **start queue** holds each open epoch's first range time: no fix still to come can be
///   earlier than the earliest of them, so fixes before min(clock, earliest start) — the
///   **watermark** — can be released in order.
///
/// Both are `RunQueue`s, min-priority queues ordered by (time, tag): an epoch opens at its first
/// range's time t and is queued at t + pause (due) and t (start), so with rows in time order every
/// entry is pushed in order and taken from the queue's run in O(1), touching memory sequentially —
/// with 100,000 live tags a binary heap's O(log n) levels were a cache miss each. Out-of-order
/// entries (rows late across tags, requeues) go to the queue's heap; the order out is the same.
///
/// Entries carry the epoch's generation: closing an epoch (`reset(_:)`) makes its entries stale,
/// and they are dropped when they surface (O(1) amortised per epoch). The earliest open start is
/// kept up to date as epochs open and is recomputed only when the epoch holding it closes, about once
/// per fix, not per row.
struct EpochScheduler: Sendable {
    /// The open epochs, by tag index (row).
    private(set) var epochs: EpochTable
    private var dueQueue = RunQueue<Entry>()
    private var startQueue = RunQueue<Entry>()
    /// The earliest start of an open epoch (+∞ with none), as `watermark(clock:)` last found it and
    /// kept up to date since; nil once the epoch that started then may have closed.
    private var earliestOpenStart: Double?

    /// An open epoch in a queue: `key` is its due-time lower bound (due queue) or its start (start
    /// queue); `generation` (the row's, `EpochTable.generation`) tells whether the epoch is still the
    /// one that was pushed. 16 bytes: a tag index fits 32 bits (the engine's `TagIndex` rows do).
    private struct Entry: Sendable, Comparable {
        var key: Double
        private var tagIndex: Int32
        var generation: UInt32
        init(key: Double, tag: Int, generation: UInt32) {
            self.key = key
            tagIndex = Int32(truncatingIfNeeded: tag)
            self.generation = generation
        }
        var tag: Int { Int(tagIndex) }
        static func < (a: Entry, b: Entry) -> Bool { a.key < b.key || (a.key == b.key && a.tagIndex < b.tagIndex) }
    }

    /// A schedule with rows of `stride` slots, cutting epochs at `rateHertz`, keeping each range's time
    /// when `keepsRangeTimes` (see `EpochTable`).
    init(stride: Int, rateHertz: Double, keepsRangeTimes: Bool = false) {
        epochs = EpochTable(stride: stride, rateHertz: rateHertz, keepsRangeTimes: keepsRangeTimes)
    }

    /// Adds a tag (the next row) with no open epoch.
    mutating func appendTag() {
        precondition(epochs.count < Int(Int32.max), "EpochScheduler: more than 2³¹ − 1 tags")
        epochs.appendRow()
    }

    /// How many due entries ahead of the one surfacing `nextDue` prefetches.
    private static let prefetchDistance = 8

    /// Prefetches what `tag`'s next epoch will touch here: its row (generation included).
    @inline(__always)
    func prefetch(_ tag: Int) { epochs.prefetchRow(tag) }

    /// Adds a range to `tag`'s epoch (opening one when none is open: then it is scheduled), unless it is
    /// a straggler of the tag's last round (`.late`: nothing to schedule).
    @inline(__always) @discardableResult
    mutating func add(_ tag: Int, slot: Int, rangeMeters range: Double, timeSeconds t: Double) -> EpochTable.Added {
        let added = epochs.add(tag, slot: slot, rangeMeters: range, timeSeconds: t)
        guard added == .opened else { return added }
        let g = epochs.generation(tag)
        dueQueue.push(Entry(key: epochs.dueSeconds(tag), tag: tag, generation: g))
        startQueue.push(Entry(key: t, tag: tag, generation: g))
        // The earliest open start stays known: min(known, t) (t when none was open).
        if let known = earliestOpenStart { earliestOpenStart = min(known, t) }
        return .opened
    }

    /// Forgets `tag`'s round model (it moved to another floor).
    mutating func forgetRounds(_ tag: Int) { epochs.forgetRounds(tag) }

    /// Records `t` as `tag`'s latest admitted time without a range (a ready fix from a provider).
    mutating func admit(_ tag: Int, atSeconds t: Double) { epochs.admit(tag, atSeconds: t) }

    /// Empties `tag`'s open epoch and retires its queue entries (a new generation); `ending` teaches
    /// the tag's round model (`EpochTable`).
    @inline(__always)
    mutating func reset(_ tag: Int, ending: EpochTable.Ending?) {
        // The earliest open start stays known unless this epoch may have been the one holding it.
        if let known = earliestOpenStart, epochs.isOpen(tag), !(epochs.startSeconds(tag) > known) {
            earliestOpenStart = nil
        }
        epochs.reset(tag, ending: ending)  // (the row's next generation)
    }

    /// Whether some open epoch may be due at clock t (one compare: most rows close nothing).
    @inline(__always)
    func mayBeDue(at t: Double) -> Bool {
        guard let top = dueQueue.top else { return false }
        return top.key <= t
    }

    /// The next tag whose epoch is due at clock t (its entry popped), in (due time, tag) order, or nil.
    /// Entries of epochs that took ranges since they were pushed are requeued at their later due time.
    mutating func nextDue(at t: Double) -> Int? {
        while let top = dueQueue.top, top.key <= t {
            // Most due entries surface long after their tag's round closed (complete, at its last
            // range): its row and generation are cold by then. The entry that surfaces a few pops
            // from now has them prefetched now.
            if epochs.count >= CachePrefetch.minimumTags, let ahead = dueQueue.runElement(ahead: Self.prefetchDistance) {
                prefetch(ahead.tag)
            }
            guard epochs.generation(top.tag) == top.generation, epochs.isOpen(top.tag) else {
                dueQueue.pop()
                continue
            }
            if epochs.isDue(top.tag, at: t) {
                dueQueue.pop()
                return top.tag
            }
            // Ranges joined since the entry was pushed: requeue at the later due time.
            dueQueue.replaceTop(with: Entry(key: epochs.dueSeconds(top.tag), tag: top.tag, generation: top.generation))
        }
        return nil
    }

    /// True when a fix at `timeSeconds` is known to be held back by an open epoch that started no
    /// later (without looking into the start queue).
    @inline(__always)
    func isKnownHeld(_ timeSeconds: Double) -> Bool {
        guard let known = earliestOpenStart else { return false }
        return timeSeconds >= known
    }

    /// min(clock, the earliest start of an open epoch): no fix still to come can be earlier (an open
    /// epoch's fix time is at least its start). Drops the stale heads of the start queue.
    mutating func watermark(clock: Double) -> Double {
        if let known = earliestOpenStart { return min(clock, known) }
        var earliest = Double.infinity
        while let top = startQueue.top {
            if epochs.generation(top.tag) == top.generation && epochs.isOpen(top.tag) {
                earliest = top.key
                break
            }
            startQueue.pop()
        }
        earliestOpenStart = earliest
        return min(clock, earliest)
    }

    /// Queue entries held (open epochs plus stale entries not yet popped), for tests of bounded state.
    var queueCounts: (due: Int, start: Int) { (dueQueue.count, startQueue.count) }
}
