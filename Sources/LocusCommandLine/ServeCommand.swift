#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Locus
import LocusCore
import LocusIO
import LocusLive
import LocusServe

/// `locus serve`: the engine runs on a replayed trace or a live input, and a browser watches —
/// the floor, locators, zones, tags with their 95 % circles and trails, events, truth (issue #43;
/// docs/serve.md).
///
/// The engine is `locus stream`'s (`LiveStream`: the same reader, routing, clock and bounds); a
/// replay is its standard-input path fed by `ReplayPacer` at `--speed` with the clock following the
/// data (`--tick-ms 0`), so its fixes and events are exactly `locus replay`'s. What the engine
/// releases becomes `frame` messages on the feed (`ServeFrames`, at most every 50 ms of wall time),
/// with a `status` message each second (`ServeStatus`); the HTTP server (`HTTPServer`, its own
/// thread) hands them to every viewer from the shared `FeedLog`, so a slow or vanished browser
/// never holds the engine up.
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
        var server = HTTPServer.Configuration()
        server.host = listen.host
        server.port = listen.port
        server.maximumViewers = try arguments.integer("max-viewers", default: 64, in: 1...10_000)
        server.stallSeconds = try arguments.double("viewer-timeout", default: 30, in: 0.1...86_400)
        let historyBytes = try arguments.integer("history-mb", default: 256, in: 1...65_536) << 20

        var configuration = EngineConfiguration(options)
        configuration.tagLimit = try StreamCommand.tagLimit(arguments)
        let input = try inputURI.map { (uri: String) throws(LocusError) in try StreamEndpoint(parsing: uri, as: .input) }
        let horizon = try arguments.double("future-horizon", default: input == nil || input == .standardStream ? 0 : StreamClock.defaultHorizonSeconds,
                                           in: 0...1e9)
        let tickMilliseconds = replayPath == nil ? try arguments.integer("tick-ms", default: 100, in: 0...3_600_000) : 0
        let positions = try arguments.string("positions").map { (path: String) throws(LocusError) in try ByteSink(path: path, placement: .live) }
        let eventsSink = try arguments.string("events").map { (path: String) throws(LocusError) in try ByteSink(path: path, placement: .live) }
        if arguments.string("positions") == "-" && arguments.string("events") == "-" {
            throw LocusError(.usage, "--positions - and --events - would share standard output (see: locus serve --help)")
        }
        var outputs = StreamOutputs(standardOutput: nil, format: .csv, positions: positions, events: eventsSink,
                                    publisher: nil, topicPrefix: "", console: console)
        var pacer = try replayPath.map { (path: String) throws(LocusError) in try ReplayPacer(path: path) }

        // The engine judges every zone with callInout on; the frames mark the events of the others
        // silent (occupancy is drawn for every zone, events listed as replay writes them).
        var stream = try LiveStream(site: ServeFrames.judgedSite(site), configuration: configuration, futureHorizonSeconds: horizon)
        stream.hearing = LocatorHearing(site: site)
        var frames = ServeFrames(site: site, truth: truth, truthShiftSeconds: truthShift)

        let mode: ServeSiteJSON.Mode = replayPath.map { .replay(source: Self.fileName($0), speed: speed, hasTruth: truth != nil) }
            ?? .live(source: input?.description ?? "-")
        let latestStatus = LatestBytes()
        var resources: [String: HTTPServer.Resource] = [:]
        for asset in ServePage.assets { resources[asset.path] = .fixed(contentType: asset.contentType, body: asset.body) }
        resources["/api/site"] = .fixed(contentType: "application/json", body: ServeSiteJSON.bytes(site: site, mode: mode))
        for (i, floor) in site.floors.enumerated() {
            resources["/api/geometry/\(i)"] = .fixed(contentType: "application/json",
                                                     body: ServeGeometryJSON.bytes(floor: floor, sigmaMeters: options.sigmaMeters))
        }
        resources["/api/status"] = .dynamic(contentType: "application/json", body: { latestStatus.bytes })
        let feed = FeedLog(capacityBytes: historyBytes)
        let http = try HTTPServer(configuration: server, resources: resources, feed: feed)
        defer { http.stop() }
        if http.listensOnEveryInterface {
            console.err("locus serve: warning: listening on every interface: anyone who can reach this machine can watch\n")
        }
        var source = try input.map { (endpoint: StreamEndpoint) throws(LocusError) in
            try LiveInput(endpoint, clientID: arguments.string("client-id") ?? "locus-serve", console: console)
        }
        if let header = pacer?.header {
            try header.withUnsafeBufferPointer { (b: UnsafeBufferPointer<UInt8>) throws(LocusError) in _ = try stream.readHeader(b) }
        }
        TerminationSignals.install()
        let hostText = listen.host == "0.0.0.0" ? "127.0.0.1" : listen.host
        console.err("locus serve: \(source?.description ?? replayPath ?? "") → http://\(hostText):\(http.port)/\n")

        let started = StreamCommand.monotonicSeconds()
        var status = ServeStatus(startSeconds: started)
        let fileBytes = replayPath.flatMap(Self.plainFileSize)
        var lastFrame = started, lastFrameClock = -Double.infinity
        var replayStart: (wall: Double, data: Double)?
        // The data time a replay step has taken rows up to: each step takes at most one second of
        // data, so frames keep a one-second grain in data time even at --speed 0 (the page draws
        // "heard" and scrubs by them).
        var stepDue = -Double.infinity
        var replayEnded = false
        var chunk: [UInt8] = []
        chunk.reserveCapacity(1 << 20)

        // One step: take input (or the pacer's due lines), drain the engine, gather a frame; every
        // 50 ms a frame goes to the feed, every second a status.
        func publish(now: Double, force: Bool) {
            let clock = stream.engine.clockSeconds
            if force || now - lastFrame >= 0.05 || clock - lastFrameClock >= 1 {
                if let bytes = frames.frame(heard: stream.hearing?.take() ?? [], clockSeconds: clock) { feed.append(bytes) }
                lastFrame = now
                lastFrameClock = clock
            }
            if force || status.isDue(nowSeconds: now) {
                status.rows = stream.rows
                status.skipped = stream.skipped
                status.malformed = stream.malformed
                status.clockSeconds = stream.engine.clockSeconds
                let counters = http.counters
                status.viewers = counters.viewers
                status.droppedMessages = counters.messagesDropped
                if let pacer, let fileBytes { status.replayProgress = fileBytes > 0 ? Double(pacer.consumedBytes) / Double(fileBytes) : 1 }
                status.replayDone = replayEnded
                let message = status.message(nowSeconds: now)
                feed.append(message)
                latestStatus.bytes = message
            }
        }
        func step() throws(LocusError) {
            let (fixes, events) = stream.drain()
            let arrival = stream.takeArrival()
            frames.add(fixes: fixes, events: events)
            let shown = events.filter { !frames.isSilent($0) }
            if !fixes.isEmpty || !shown.isEmpty {
                try outputs.write(fixes: fixes, events: shown)
                try outputs.flush()
            }
            let now = StreamCommand.monotonicSeconds()
            status.step(fixes: fixes, events: shown.count, latencyMilliseconds: arrival.map { (now - $0) * 1000 } ?? 0)
        }

        while TerminationSignals.requested == nil {
            if pacer != nil, !replayEnded {
                // (Through `pacer!`, in place: a copy would copy its buffer.)
                let now = StreamCommand.monotonicSeconds()
                let next = try pacer!.nextSeconds()
                if replayStart == nil, let next { replayStart = (now, next) }
                let target = speed == 0 || replayStart == nil ? Double.infinity : replayStart!.data + (now - replayStart!.wall) * speed
                // One second of data at most; a gap in the data is stepped over at once.
                if let next, next > stepDue + 1, next <= target { stepDue = next }
                stepDue = min(target, stepDue + 1)
                chunk.removeAll(keepingCapacity: true)
                try pacer!.take(dueSeconds: stepDue, into: &chunk)
                if !chunk.isEmpty { chunk.withUnsafeBufferPointer { stream.ingestCSVLines($0) } }
                if pacer!.isFinished {
                    stream.finish()
                    replayEnded = true
                } else if chunk.isEmpty, speed > 0, let next = try pacer!.nextSeconds(), next > target, let start = replayStart {
                    // Sleep until the next line is due (at most 50 ms: frames and status go on).
                    let wait = min(0.05, max(0, (next - start.data) / speed - (now - start.wall)))
                    _ = poll(nil, 0, Int32((wait * 1000).rounded(.up)))
                }
                try step()
                if replayEnded {
                    publish(now: StreamCommand.monotonicSeconds(), force: true)
                    feed.append(frames.end(clockSeconds: stream.engine.clockSeconds))
                    console.err("locus serve: the replay is done (\(stream.rows) rows, \(status.fixes) fixes); serving until SIGINT or SIGTERM\n")
                    continue
                }
            } else if source != nil {
                let alive = try source!.wait(timeoutMilliseconds: tickMilliseconds == 0 ? 200 : Int32(tickMilliseconds), into: &stream)
                if tickMilliseconds > 0 {
                    let now = stream.clockSeconds
                    if now.isFinite { stream.advance(toSeconds: now) }
                }
                try step()
                if !alive {
                    stream.finish()
                    try step()
                    publish(now: StreamCommand.monotonicSeconds(), force: true)
                    console.err("locus serve: the input ended; serving until SIGINT or SIGTERM\n")
                    source!.close()
                    source = nil
                    continue
                }
            } else {
                // Nothing left to feed: serve (and report status) until told to stop.
                _ = poll(nil, 0, 200)
            }
            publish(now: StreamCommand.monotonicSeconds(), force: false)
        }
        // Stopped: as locus stream drains — what the input already holds, then every open epoch
        // solved — so --positions/--events end as stream's would; a replay stopped midway is
        // finished where it stands.
        if source != nil {
            var taken = -1
            while source!.taken != taken {
                taken = source!.taken
                guard try source!.wait(timeoutMilliseconds: 0, into: &stream) else { break }
            }
        }
        if source != nil || (pacer != nil && !replayEnded) {
            stream.finish()
            try step()
            publish(now: StreamCommand.monotonicSeconds(), force: true)
        }
        source?.close()
        try outputs.close()
        let counters = http.counters
        console.err("locus serve: stopped: \(stream.rows) rows, \(status.fixes) fixes, \(status.events) events; \(counters.viewersTotal) viewers, \(counters.messagesDropped) messages dropped for slow viewers\n")
        return 0
    }

    /// The last path component (the page shows which file is played, not where it lies).
    static func fileName(_ path: String) -> String {
        String(path.split(separator: "/").last ?? Substring(path))
    }

    /// The size of an uncompressed regular file (the replay's progress), nil otherwise.
    static func plainFileSize(_ path: String) -> Int? {
        guard !path.hasSuffix(".gz") else { return nil }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }
}

/// The newest `status` message, shared with the server thread (`/api/status`).
private final class LatestBytes: Sendable {
    private let value = Mutex<[UInt8]>(Array(#"{"type":"status"}"#.utf8))
    var bytes: [UInt8] {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
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
