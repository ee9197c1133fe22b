import LocusCore

/// Used by the soak test (Tests/LocusTests/SoakTests.swift) and the soak executable (Fuzz/Soak).
///
/// Compares two streams of fixes and events that must be identical, without holding either
/// whole: each side's output waits in a queue until the other side has produced the same item.
///
/// Also checks each (tag, zone) pair's event sequence as it goes (SPEC §4): `enter` only while
/// outside, `dwell` and `exit` only while inside (zones with `callInout` on), dwell times strictly
/// increasing — so an event lost or written twice is caught even where both runs agree.
public struct StreamComparator {
    public init() {}
    private var pendingFixes: [[PositionFix]] = [[], []]
    private var pendingEvents: [[ZoneEvent]] = [[], []]
    /// Items compared equal so far.
    public private(set) var matchedFixes = 0
    public private(set) var matchedEvents = 0
    /// Items that differ between the runs (should stay 0).
    public private(set) var mismatches = 0
    /// Event sequences that break the enter/dwell/exit rules (should stay 0).
    public private(set) var sequenceViolations = 0
    /// Events by kind (from the reference run).
    public private(set) var eventCounts: [ZoneEvent.Kind: Int] = [:]
    private var inside: [String: Double] = [:]
    /// The first problems, for the report.
    public private(set) var problems: [String] = []

    /// Adds output of `side` (0 = reference, 1 = streamed) and compares what both sides have.
    public mutating func add(side: Int, fixes: [PositionFix], events: [ZoneEvent]) {
        pendingFixes[side] += fixes
        pendingEvents[side] += events
        let f = min(pendingFixes[0].count, pendingFixes[1].count)
        for k in 0..<f where pendingFixes[0][k] != pendingFixes[1][k] { note("fix \(matchedFixes + k) differs") }
        matchedFixes += f
        pendingFixes[0].removeFirst(f); pendingFixes[1].removeFirst(f)
        let e = min(pendingEvents[0].count, pendingEvents[1].count)
        for k in 0..<e {
            let event = pendingEvents[0][k]
            if event != pendingEvents[1][k] { note("event \(matchedEvents + k) differs") }
            check(event)
        }
        matchedEvents += e
        pendingEvents[0].removeFirst(e); pendingEvents[1].removeFirst(e)
    }

    /// Items one side produced that the other did not (after both finished: should be 0).
    public var unmatched: Int { pendingFixes[0].count + pendingFixes[1].count + pendingEvents[0].count + pendingEvents[1].count }

    private mutating func check(_ e: ZoneEvent) {
        eventCounts[e.kind, default: 0] += 1
        guard e.timeSeconds.isFinite else { violation("non-finite event time"); return }
        let key = e.tag.rawValue + "\u{1F}" + e.zone.rawValue
        switch e.kind {
        case .enter:
            if inside[key] != nil { violation("\(e.tag) entered \(e.zone) twice (t \(e.timeSeconds))") }
            inside[key] = 0
        case .dwell:
            guard let last = inside[key] else { violation("dwell in \(e.zone) for \(e.tag) while outside"); return }
            if let d = e.dwellSeconds, d > last { inside[key] = d } else { violation("dwell of \(e.tag) in \(e.zone) not increasing") }
        case .exit:
            if inside.removeValue(forKey: key) == nil { violation("\(e.tag) left \(e.zone) without entering (t \(e.timeSeconds))") }
        }
    }

    private mutating func note(_ message: String) {
        mismatches += 1
        if problems.count < 10 { problems.append(message) }
    }

    private mutating func violation(_ message: String) {
        sequenceViolations += 1
        if problems.count < 10 { problems.append(message) }
    }
}
