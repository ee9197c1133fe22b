import Locus
import LocusCore
import LocusIO
import LocusLive
import LocusServe

/// `locus serve`: the engine runs on a replayed trace or a live input, and a browser watches —
/// the floor, locators, zones, tags with their 95 % circles and trails, events, truth (issue #43;
/// docs/serve.md). The options become a `ServeJob` (LocusServe), which does the work.
enum ServeCommand: LocusCommand {
    static let spec = CommandSpec(
        name: "serve",
        summary: "A live map in the browser: positions, zones and events of a replay or a live stream.",
        options: [
            .value("site", "SITE", "Site JSON (SPEC §1).", required: true),
            .value("replay", "TRACE", "Play this trace (CSV, or .gz) through the engine at --speed; the outputs are exactly locus replay's. Give --replay or --input."),
            .value("truth", "TRUTH", "With --replay: ground truth CSV (t,tag,x,y[,z]); the page draws the truth track and each fix's error."),
            .value("truth-shift", "S", "With --truth: compare a fix at time t with the truth at t + S (default 0)."),
            .value("speed", "X", "With --replay: data time runs X times as fast as the wall clock (default 1; 0: as fast as it goes)."),
            .value("input", "URI", "Live ranges, as locus stream --input: - (standard input), udp://HOST:PORT or mqtt://HOST:PORT/TOPIC."),
            .value("positions", "OUT.csv", "Also write the positions CSV as they are released, exactly as locus replay (or locus stream) writes it (- for standard output)."),
            .value("events", "OUT.jsonl", "Also write the zone events, exactly as locus replay writes them (- for standard output)."),
            .value("listen", "HOST:PORT", "Where the page is served (default 127.0.0.1:0: this machine only, a free port; the URL is printed). 0.0.0.0 serves every interface: anyone who can reach this machine can watch."),
            .value("max-viewers", "N", "At most N browsers watch at once (default 64); more are refused (503)."),
            .value("viewer-timeout", "S", "A browser that takes nothing of its feed for S seconds is disconnected, the messages it missed counted as dropped frames (default 30)."),
            .value("history-mb", "MB", "The feed keeps the last MB megabytes of messages for viewers that join late or fall behind (default 256); a viewer behind that skips ahead, counted as dropped frames."),
            .value("tick-ms", "MS", "With --input: while no data arrives, the engine's clock follows the wall clock, moved every MS ms (default 100), as in locus stream."),
            .value("future-horizon", "S", "With --input: as locus stream --future-horizon (default 5 for udp:// and mqtt://, 0 for standard input)."),
            .value("max-lag", "S", "With --input: hold each position S seconds of data time (default 0) so that a tag whose rows arrive up to S late still comes out in time order, its zone events at their own times, as in locus stream."),
            .value("client-id", "ID", "With an mqtt:// input: the MQTT client id (default locus-serve)."),
            .value("max-tags", "N", "At most N tags hold state at once (default 16384), as in locus stream."),
            .value("tag-idle", "S", "A tag silent for S seconds of data time is evicted (default 60), as in locus stream."),
        ] + EngineOptions.optionSpecs,
        discussion: """
        Open the printed URL in a browser. The page shows each floor with its locators (heard or not,
        the age of their last range), zones (with their inDist margin, lit while occupied, with the
        occupant count), each tag with its 95 % circle, a fading trail and its id, the zone events,
        an HDOP overlay (locus geometry's map) and the counters of locus stream; a replay adds the
        truth track, each fix's error, and a time slider with play, pause and speed. The server is
        read-only (GET and HEAD), listens on 127.0.0.1 unless told otherwise, refuses requests naming
        another host (DNS rebinding), and never waits for a browser: each viewer reads from a shared,
        bounded history. SIGINT or SIGTERM stops it (exit 0), with a summary on stderr. Exit codes:
        0 stopped, 1 failure at run time (a port that cannot be bound, an unreachable broker: E5008),
        2 usage error or invalid input.
        """)

    static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32 {
        let sitePath = arguments.string("site") ?? ""
        let site = try SiteDecoder.load(path: sitePath)
        let options = try EngineOptions(arguments)
        _ = try site.floorIndex(options.defaultFloor)
        let replayPath = arguments.string("replay")
        let inputURI = arguments.string("input")
        guard (replayPath == nil) != (inputURI == nil) else {
            throw LocusError(.usage, "give --replay TRACE or --input URI, one of them (see: locus serve --help)")
        }
        if replayPath == nil, arguments.string("truth") != nil || arguments.string("speed") != nil {
            throw LocusError(.usage, "--truth and --speed go with --replay (see: locus serve --help)")
        }
        let speed = try arguments.double("speed", default: 1, in: 0...1e6)
        let truthShift = try arguments.double("truth-shift", default: 0, in: -1e6...1e6)
        let truth = try arguments.string("truth").map { (path: String) throws(LocusError) in try GroundTruth.read(path: path) }
        let listen = try ListenAddress(parsing: arguments.string("listen") ?? "127.0.0.1:0")
        let maximumViewers = try arguments.integer("max-viewers", default: 64, in: 1...10_000)
        let viewerTimeout = try arguments.double("viewer-timeout", default: 30, in: 0.1...86_400)
        let historyBytes = try arguments.integer("history-mb", default: 256, in: 1...65_536) << 20

        let limit = try StreamCommand.tagLimit(arguments)
        let input = try inputURI.map { (uri: String) throws(LocusError) in try StreamEndpoint(parsing: uri, as: .input) }
        let horizon = try StreamCommand.futureHorizon(arguments)
        let lag = try StreamCommand.maximumLag(arguments)
        let tickMilliseconds = replayPath == nil ? try arguments.integer("tick-ms", default: 100, in: 0...3_600_000) : 0
        let positions = try arguments.string("positions").map { (path: String) throws(LocusError) in try ByteSink(path: path, placement: .live) }
        let events = try arguments.string("events").map { (path: String) throws(LocusError) in try ByteSink(path: path, placement: .live) }
        if arguments.string("positions") == "-" && arguments.string("events") == "-" {
            throw LocusError(.usage, "--positions - and --events - would share standard output (see: locus serve --help)")
        }
        let job = ServeJob(site: site, options: options, tagLimit: limit,
                           replayPath: replayPath, speed: speed, truth: truth, truthShiftSeconds: truthShift,
                           input: input, clientID: arguments.string("client-id") ?? "locus-serve", positions: positions, events: events,
                           listenHost: listen.host, listenPort: listen.port, maximumViewers: maximumViewers,
                           viewerTimeoutSeconds: viewerTimeout, historyBytes: historyBytes,
                           tickMilliseconds: tickMilliseconds, futureHorizonSeconds: horizon, maximumLagSeconds: lag)
        try job.run(log: console.err)
        return 0
    }
}

/// `--listen HOST:PORT`: an IPv4 address (or `localhost`) and a port (0: a free one).
struct ListenAddress: Equatable {
    var host: String
    var port: UInt16

    /// - Throws: E1001 naming the text and what is wrong.
    init(parsing text: String) throws(LocusError) {
        guard let colon = text.lastIndex(of: ":") else {
            throw LocusError(.usage, "--listen '\(text)': expected HOST:PORT, e.g. 127.0.0.1:8080")
        }
        var host = String(text[..<colon])
        if host == "localhost" { host = "127.0.0.1" }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ !$0.isEmpty && $0.count <= 3 && UInt8($0) != nil }) else {
            throw LocusError(.usage, "--listen '\(text)': the host must be an IPv4 address such as 127.0.0.1")
        }
        guard let port = UInt16(text[text.index(after: colon)...]) else {
            throw LocusError(.usage, "--listen '\(text)': the port must be a number 0–65535")
        }
        self.host = host
        self.port = port
    }
}
