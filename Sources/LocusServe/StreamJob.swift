import Locus
import LocusCore
import LocusIO
import LocusLive

/// `locus stream`'s run: live ranges in — standard input, UDP datagrams or an MQTT subscription —,
/// positions and zone events out as they happen (docs/stream.md). The command parses its options
/// into one of these, calls `run`, and prints the summary.
///
/// `LiveInput` waits on the input and hands it to `LiveStream` (decoding, routing, the stream's
/// clock, one engine); `StreamOutputs` writes standard output, files and, through `LivePublisher`,
/// the broker; SIGINT or SIGTERM (`TerminationSignals`) or the input's end drains.
package struct StreamJob {
    private var stream: LiveStream
    private let input: StreamEndpoint
    private let output: StreamEndpoint
    private let jsonLines: Bool
    private let positions: ByteSink?
    private let events: ByteSink?
    private let tickMilliseconds: Int
    private let clientID: String
    private let summaryJSON: Bool
    private let startedSeconds = LiveClock.monotonicSeconds()

    /// A stream of `site` through an engine with `options`, its live tags bounded by
    /// `tagLimit` (at most `maximumTags` at once, one idle for `idleSeconds` evicted), from `input` to `output` (`jsonLines`: standard output's form; else the positions CSV),
    /// also writing `positions` and `events` as `locus replay` does. `tickMilliseconds` (0: the clock
    /// follows the data alone) moves the engine's clock while nothing arrives;
    /// `futureHorizonSeconds` (nil: 5 for udp:// and mqtt://, 0 for standard input) bounds how far
    /// ahead of the stream's clock a row may be (`StreamClock`). `summaryJSON`: the closing summary
    /// as one JSON object (`--json`) instead of lines of text. `maximumLagSeconds` (`--max-lag`): how
    /// late, in data time, a tag's rows may arrive and still come out in time order (`LiveStream`).
    /// - Throws: the engine's configuration errors (E1003).
    package init(site: Site, options: EngineOptions, tagLimit: (maximumTags: Int, idleSeconds: Double),
                 input: StreamEndpoint, output: StreamEndpoint,
                 jsonLines: Bool, positions: ByteSink?, events: ByteSink?, tickMilliseconds: Int,
                 futureHorizonSeconds: Double?, maximumLagSeconds: Double = 0, clientID: String,
                 summaryJSON: Bool) throws(LocusError) {
        let horizon = futureHorizonSeconds ?? (input == .standardStream ? 0 : StreamClock.defaultHorizonSeconds)
        stream = try LiveStream(site: site, options: options, tagLimit: tagLimit, futureHorizonSeconds: horizon,
                                maximumLagSeconds: maximumLagSeconds)
        self.input = input
        self.output = output
        self.jsonLines = jsonLines
        self.positions = positions
        self.events = events
        self.tickMilliseconds = tickMilliseconds
        self.clientID = clientID
        self.summaryJSON = summaryJSON
    }

    /// Opens the input and the outputs, streams until the input ends or SIGINT/SIGTERM, drains, and
    /// says the closing counts (`StreamSummary`). `log` gets the start line, warnings, the MQTT
    /// clients' lines and the summary.
    /// - Throws: E5008 (exit 1) for a port that cannot be bound or an unreachable broker; E5001 for
    ///   standard input that cannot be read; its header's errors; file errors.
    package mutating func run(log: @escaping @Sendable (String) -> Void) throws(LocusError) {
        // First: a SIGINT/SIGTERM while the inputs open (a slow broker, or a warning a supervisor acts
        // on) is then a request to stop — the loop drains and exits 0 — not the default action
        // that kills the process half-started.
        TerminationSignals.install()
        var source = try LiveInput(input, clientID: clientID, log: log)
        let publisher = try LivePublisher(output, clientID: clientID + "-out", log: log)
        var outputs = StreamOutputs(standardOutput: output == .standardStream ? try ByteSink(path: "-") : nil, jsonLines: jsonLines,
                                    positions: positions, events: events, publisher: publisher, log: log)
        log("locus stream: \(source.description) → \(output.description)\(tickMilliseconds == 0 ? "" : ", tick \(tickMilliseconds) ms")\n")

        // The tick (> 0): the engine follows the stream's clock — the latest data time plus the wall
        // time since that row arrived, the same rule for every input (`StreamClock`) — so a fix at
        // the clock's own time leaves as soon as its batch is done, and silent tags leave their zones
        // on time while nothing arrives.
        let timeout: Int32 = tickMilliseconds == 0 ? 200 : Int32(tickMilliseconds)
        while TerminationSignals.requested == nil {
            let alive = try source.wait(timeoutMilliseconds: timeout, into: &stream)
            if tickMilliseconds > 0 {
                let now = stream.clockSeconds
                if now.isFinite { stream.advance(toSeconds: now) }
            }
            try stream.drain(into: &outputs)
            try outputs.flush()
            if !alive { break }
        }
        // Drain: what the input already holds (the socket's queue, messages received), then every
        // open epoch solved, every output flushed.
        if TerminationSignals.requested != nil {
            var taken = -1
            while source.taken != taken {
                taken = source.taken
                guard try source.wait(timeoutMilliseconds: 0, into: &stream) else { break }
                try stream.drain(into: &outputs)
            }
        }
        stream.finish()
        try stream.drain(into: &outputs)
        try outputs.close()
        source.close()
        publisher?.close()

        let summary = StreamSummary(rows: stream.rows, fixes: outputs.fixCount, events: outputs.eventCounts,
                             skipped: stream.skipped, malformed: stream.malformed, firstMalformed: stream.firstMalformed,
                             diagnostics: stream.engine.diagnostics, input: source.counts,
                             publishFailures: publisher == nil ? nil : outputs.publishFailures,
                             elapsedSeconds: LiveClock.monotonicSeconds() - startedSeconds,
                             signal: TerminationSignals.requested)
        log(summaryJSON ? JSONWriter(style: .compact).string(summary.json) + "\n" : summary.text)
    }
}
