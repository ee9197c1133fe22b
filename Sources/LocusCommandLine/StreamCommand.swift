import Locus
import LocusCore
import LocusIO
import LocusLive
import LocusServe

/// `locus stream`: live ranges in — standard input, UDP datagrams or an MQTT subscription —,
/// positions and zone events out as they happen (issue 16; docs/stream.md).
enum StreamCommand: LocusCommand {
    static let spec = CommandSpec(
        name: "stream",
        summary: "Live: ranges in from stdin, UDP or MQTT; positions and zone events out as they happen.",
        options: [
            .value("site", "SITE", "Site JSON (SPEC §1).", required: true),
            .value("input", "URI", "Where ranges come from: - (standard input: trace CSV with its header, or JSON Lines; default), udp://HOST:PORT (datagrams of CSV rows t,tag,anchor,range_m[,floor] without a header, or JSON), mqtt://HOST:PORT/TOPIC (subscribe, QoS 1; payload a JSON object {\"t\",\"tag\",\"anchor\",\"range_m\",\"floor\"} or an array of them; t optional: the receive time). A range difference (TDoA) row has anchor_a, anchor_b, tdoa_m in place of anchor, range_m (JSON; CSV with a header naming them on stdin)."),
            .value("output", "URI", "Where positions and events go: - (standard output; default) or mqtt://HOST:PORT/PREFIX (PREFIX/tags/<tag>/position and PREFIX/tags/<tag>/zone, JSON, QoS 1; <tag> is the id percent-encoded into one topic level: every byte outside A-Z a-z 0-9 . _ ~ - as %XY)."),
            .value("format", "FORMAT", "Standard output's form: csv (the positions CSV, default) or jsonl (positions and zone events as JSON Lines, in time order).",
                   choices: ["csv", "jsonl"]),
            .value("positions", "OUT.csv", "Also write the positions CSV, exactly as locus replay writes it."),
            .value("events", "OUT.jsonl", "Also write the zone events, exactly as locus replay writes them."),
            .value("tick-ms", "MS", "While no data arrives, the engine's clock follows the wall clock, moved every MS ms (default 100; silent tags then leave their zones on time). 0: the clock follows the data alone, as in replay."),
            .value("future-horizon", "S", "Skip a row stamped more than S seconds ahead of the stream's clock (the latest accepted time plus the wall time since it arrived) as future_time, so one sender cannot move every tag's clock. Default 5 for udp:// and mqtt://, 0 (off) for standard input, which is often a recording piped faster than real time. Rows without t (the receive time) are checked even when off."),
            .value("max-lag", "S", "Hold each position S seconds of data time (default 0) so that a tag whose rows arrive up to S late — behind a slower gateway, say — still comes out in time order and its zone events at their own times, exactly as locus replay gives them; without it such a tag's fixes come out after later ones and its events at the stream's clock. Costs S of latency."),
            .value("client-id", "ID", "MQTT client id (default locus-stream): the broker keeps this session's QoS 1 messages while it reconnects."),
            .value("max-tags", "N", "At most N tags hold state at once (default 16384): a row of a new tag beyond them is skipped as tag_limit; live tags are never displaced."),
            .value("tag-idle", "S", "A tag silent for more than S seconds of data time is evicted, its state let go (default 60); a zone it is inside exits first, as outPeriod says. Counted as tags_evicted."),
            .flag("json", "Print the closing summary as one JSON object (on stderr)."),
        ] + EngineOptions.optionSpecs,
        discussion: """
        Rows are solved as they arrive: a tag's round is solved as soon as it is complete (its usual
        locators have reported), otherwise after the pause of half the period. Every received row is
        used or counted as skipped by reason (the replay's reasons); a datagram or message that is not
        rows is counted as malformed; neither stops the stream. Tag ids over 128 bytes, not UTF-8 or
        holding a control character are skipped as invalid_tag; rows too far ahead of the stream's
        clock as future_time (--future-horizon); a publish the broker client refuses is counted
        (publish_failures), never fatal. SIGINT or SIGTERM drains: every open epoch is solved, every output flushed, a summary goes to stderr, exit 0. The end of standard
        input does the same. With --tick-ms 0 and --positions/--events, the files hold exactly what
        locus replay writes for the same rows. Schemas, buffering and backpressure: docs/stream.md.
        Exit codes: 0 drained, 1 failure at run time (an unreachable broker: E5008), 2 usage error or
        invalid input.
        """)

    static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32 {
        let site = try SiteDecoder.load(path: arguments.string("site") ?? "")
        let options = try EngineOptions(arguments)
        _ = try site.floorIndex(options.defaultFloor)  // an unknown --floor is an error before any input
        let input = try StreamEndpoint(parsing: arguments.string("input") ?? "-", as: .input)
        let output = try StreamEndpoint(parsing: arguments.string("output") ?? "-", as: .output)
        let jsonLines = arguments.string("format") == "jsonl"
        let tickMilliseconds = try arguments.integer("tick-ms", default: 100, in: 0...3_600_000)
        let clientID = arguments.string("client-id") ?? "locus-stream"
        let positions = try arguments.string("positions").map { (path: String) throws(LocusError) in try ByteSink(path: path, placement: .live) }
        let events = try arguments.string("events").map { (path: String) throws(LocusError) in try ByteSink(path: path, placement: .live) }
        if (arguments.string("positions") == "-" || arguments.string("events") == "-") && output == .standardStream {
            throw LocusError(.usage, "--positions - and --events - would share standard output with --output - (see: locus stream --help)")
        }
        let horizon = try futureHorizon(arguments)
        let limit = try tagLimit(arguments)
        let lag = try maximumLag(arguments)
        var job = try StreamJob(site: site, options: options, tagLimit: limit,
                                input: input, output: output, jsonLines: jsonLines,
                                positions: positions, events: events, tickMilliseconds: tickMilliseconds,
                                futureHorizonSeconds: horizon, maximumLagSeconds: lag, clientID: clientID,
                                summaryJSON: arguments.flag("json"))
        try job.run(log: console.err)
        return 0
    }

    /// `--future-horizon`, checked; nil when not given (the stream's default for its input).
    /// - Throws: E1001/E1003 for a value that is not a number in 0…10⁹.
    static func futureHorizon(_ arguments: ParsedArguments) throws(LocusError) -> Double? {
        guard arguments.string("future-horizon") != nil else { return nil }
        return try arguments.double("future-horizon", default: 0, in: 0...1e9)
    }

    /// The bound on live tags (`--max-tags`, `--tag-idle`). A live input trusts no sender: each new
    /// id costs the engine about 1.6 KB (docs/benchmarks.md), so without a bound a sender inventing
    /// ids grows memory for good (issue #41: 696 MB for 300,000 ids). 16,384 holds the live
    /// benchmark's 10,000 tags with room to spare and keeps a flood of new ids within 64 MB of the
    /// baseline (docs/benchmarks.md, "Issue #41: bounded tags"). 60 s: longer than any sensible
    /// `outPeriod` and far longer than a tag's gaps between rounds; a tag back after that starts
    /// its filter afresh, which a minute of silence calls for anyway.
    /// - Throws: E1001 for a limit below 1 or an idle time that is not a positive number.
    static func tagLimit(_ arguments: ParsedArguments) throws(LocusError) -> (maximumTags: Int, idleSeconds: Double) {
        (try arguments.integer("max-tags", default: 16_384, in: 1...100_000_000),
         try arguments.double("tag-idle", default: 60, in: 0.001...1e9))
    }

    /// `--max-lag` (stream and serve): seconds of data time fixes wait behind the clock, 0 to 3600
    /// (`EngineConfiguration.releaseLatenessSeconds`).
    static func maximumLag(_ arguments: ParsedArguments) throws(LocusError) -> Double {
        try arguments.double("max-lag", default: 0, in: 0...3600)
    }
}
