import LocusCore
import LocusZones

// Taking the engine's output, and looking inside it.
extension PositioningEngine {
    /// Takes the fixes released so far: the array is handed over, and the engine starts the next
    /// one with room for as many (at most 1,024). Emptying the handed-over array "keeping capacity"
    /// instead would copy-on-write it into a fresh buffer of its whole capacity: after one burst
    /// (a live stream's start), ~1 MB allocated and freed per drain, each a `brk` and a trim.
    package mutating func drainFixes() -> [PositionFix] {
        let taken = fixes
        fixes = []
        fixes.reserveCapacity(min(taken.count, 1024))
        fixTags.removeAll(keepingCapacity: true)
        return taken
    }

    /// Takes the zone events released so far (handed over as `drainFixes()` hands the fixes).
    package mutating func drainEvents() -> [ZoneEvent] {
        let taken = events
        events = []
        events.reserveCapacity(min(taken.count, 1024))
        return taken
    }

    /// Hands the fixes released so far, and their tags' indices (`fixTags`), to `body`, then forgets
    /// them keeping the storage: a consumer that writes or forwards them as they come allocates
    /// nothing per call (`drainFixes()` hands the array over, so the engine's next fix needs a new one).
    package mutating func takeFixes<R>(_ body: ([PositionFix], [Int32]) throws -> R) rethrows -> R {
        defer { fixes.removeAll(keepingCapacity: true); fixTags.removeAll(keepingCapacity: true) }
        return try body(fixes, fixTags)
    }

    /// `takeFixes(_:)` for the zone events released so far.
    package mutating func takeEvents<R>(_ body: ([ZoneEvent]) throws -> R) rethrows -> R {
        defer { events.removeAll(keepingCapacity: true) }
        return try body(events)
    }

    /// Adds rows a caller skipped before they reached the engine (so one tally reports them all).
    mutating func recordSkipped(_ tally: SkipTally) {
        diagnostics.skipped.merge(tally)
    }

    /// No fix released from now on is earlier than this, seconds: the release watermark
    /// min(clock, earliest open epoch start), lowered to a parked fix; +∞ once finished.
    mutating func fixFrontier() -> Double {
        guard !hasFinished else { return .infinity }
        var frontier = schedule.watermark(clock: releaseClockSeconds)
        if let parked = reorder.earliestSeconds { frontier = min(frontier, parked) }
        return frontier
    }

    /// No zone event released from now on is earlier than this, seconds: `fixFrontier()`, lowered to
    /// the clock of a judge that holds events or pairs (their exits and dwells come at or after it).
    mutating func eventFrontier() -> Double {
        min(fixFrontier(), judges.eventFrontier)
    }

    /// The floor index of a floor id, or nil (`Site.floorIndex(of:)`).
    func floorIndex(_ id: FloorID) -> FloorIndex? { site.floorIndex(of: id) }

    /// The floor of index `floor`.
    func floor(_ floor: FloorIndex) -> Floor { floors[floor.rawValue].floor }

    /// The configuration warnings of every floor's zones (SPEC §4.2), in floor order.
    var zoneWarnings: [ZoneConfigurationWarning] { judges.configurationWarnings }

    /// What the engine holds between rows, by kind (for tests of bounded state): queue entries (due
    /// and start queues: open epochs plus stale entries not yet popped), fixes waiting for release,
    /// parking slots ever used, and the zone judges' own counts summed over floors.
    var retainedCounts: (dueQueue: Int, startQueue: Int, waiting: Int, parkingSlots: Int,
                                 judgePairs: Int, judgeDeadlines: Int, judgeHeldEvents: Int) {
        var pairs = 0, deadlines = 0, held = 0
        for j in judges.judges {
            let c = j.retainedCounts
            pairs += c.pairs; deadlines += c.deadlines; held += c.heldEvents
        }
        let queues = schedule.queueCounts
        return (queues.due, queues.start, reorder.count, reorder.slotCount, pairs, deadlines, held)
    }
}
