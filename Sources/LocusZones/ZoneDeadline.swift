import LocusCore

/// The earliest time at which the zone state of a (tag, zone) pair slot may produce an event, as
/// the judge's `MinHeap` orders it: by time, and at equal times a non-strict deadline (due when the
/// clock reaches it) before a strict one (due only once the clock has passed it).
struct ZoneDeadline: Sendable, Comparable {
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

    static func < (a: ZoneDeadline, b: ZoneDeadline) -> Bool {
        if a.timeSeconds != b.timeSeconds { return a.timeSeconds < b.timeSeconds }
        return !a.isStrict && b.isStrict
    }

    /// Equal in the heap's order (neither precedes the other); slot and generation are not compared.
    static func == (a: ZoneDeadline, b: ZoneDeadline) -> Bool { !(a < b) && !(b < a) }
}
