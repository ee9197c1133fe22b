import LocusCore
import LocusIO

/// The feed's `status` message (docs/serve.md), about once a second of wall time: the counters of
/// `locus stream` — rows, fixes, events, skipped rows by reason, malformed messages — with the rates
/// and latencies of the last interval and the server's viewers and dropped messages.
///
/// Latency: per engine step (an input batch, a pacer batch or a tick), the wall time from the
/// batch's arrival to the moment what it released was handed to the feed, in milliseconds; the
/// interval's median, 99th percentile (nearest rank) and maximum over the steps that released a fix.
struct ServeStatus {
    /// Counts since the start.
    var rows = 0, fixes = 0, events = 0, malformed = 0
    var skipped = SkipTally()
    /// The engine's clock (seconds of data time).
    var clockSeconds = -Double.infinity
    /// The server's counters: viewers now, messages skipped for viewers that fell behind.
    var viewers = 0, droppedMessages = 0
    /// Replay only: the part of the trace read (0…1) and whether it is done.
    var replayProgress: Double?
    var replayDone = false

    /// This interval: latencies (ms), fixes, distinct tags with a fix, its start (monotonic seconds).
    private var latencies: [Double] = []
    private var intervalFixes = 0
    private var intervalTags = Set<TagID>()
    private var intervalStart: Double

    init(startSeconds: Double) { intervalStart = startSeconds }

    /// One engine step released `fixes` after `latencyMilliseconds`.
    mutating func step(fixes released: [PositionFix], events: Int, latencyMilliseconds: Double) {
        fixes += released.count
        self.events += events
        guard !released.isEmpty else { return }
        intervalFixes += released.count
        for f in released { intervalTags.insert(f.tag) }
        if latencies.count < 1 << 20 { latencies.append(latencyMilliseconds) }
    }

    /// True once a second has passed since the interval began.
    func isDue(nowSeconds: Double) -> Bool { nowSeconds - intervalStart >= 1 }

    /// The message for the interval ending `nowSeconds` (monotonic); starts the next interval.
    mutating func message(nowSeconds: Double) -> [UInt8] {
        let seconds = max(nowSeconds - intervalStart, 1e-3)
        latencies.sort()
        func rank(_ q: Double) -> JSONValue {
            guard !latencies.isEmpty else { return .null }
            let k = min(latencies.count - 1, max(0, Int((q * Double(latencies.count)).rounded(.up)) - 1))
            return .number(latencies[k], .fixed(3))
        }
        var members: [(String, JSONValue)] = [
            ("type", .string("status")), ("clock", ServeFrames.time(clockSeconds)),
            ("rows", .integer(rows)), ("fixes", .integer(fixes)), ("events", .integer(events)),
            ("tags", .integer(intervalTags.count)),
            ("skipped", .object(skipped.nonZero.map { ($0.reason.rawValue, JSONValue.integer($0.count)) })),
            ("malformed", .integer(malformed)),
            ("fixesPerSecond", .number(Double(intervalFixes) / seconds, .fixed(1))),
            ("latencyMs", .object([("p50", rank(0.5)), ("p99", rank(0.99)), ("max", latencies.last.map { .number($0, .fixed(3)) } ?? .null)])),
            ("viewers", .integer(viewers)), ("droppedFrames", .integer(droppedMessages)),
        ]
        if let replayProgress {
            members.append(("replay", .object([("progress", .number(min(1, max(0, replayProgress)), .fixed(3))), ("done", .bool(replayDone))])))
        }
        latencies.removeAll(keepingCapacity: true)
        intervalFixes = 0
        intervalTags.removeAll(keepingCapacity: true)
        intervalStart = nowSeconds
        return Array(JSONWriter(style: .compact).string(.object(members)).utf8)
    }
}
