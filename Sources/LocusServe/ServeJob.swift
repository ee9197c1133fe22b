#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Locus
import LocusCore
import LocusIO
import LocusLive

/// `locus serve`'s run: the engine runs on a replayed trace or a live input, and a browser watches —
/// the floor, locators, zones, tags with their 95 % circles and trails, events, truth (issue #43;
/// docs/serve.md). The command parses its options into one of these and calls `run`.
///
/// The engine is `locus stream`'s (`LiveStream`: the same reader, routing, clock and bounds); a
/// replay is its standard-input path fed by `ReplayPacer` at `speed` with the clock following the
/// data (tick 0), so its fixes and events are exactly `locus replay`'s. What the engine releases
/// becomes `frame` messages on the feed (`ServeFrames`, at most every 50 ms of wall time), with a
/// `status` message each second (`ServeStatus`); the HTTP server (`HTTPServer`, its own thread)
/// hands them to every viewer from its shared feed (`publish`), so a slow or vanished browser never holds
/// the engine up.
package struct ServeJob {
    private let site: Site
    private let options: EngineOptions
    private let tagLimit: (maximumTags: Int, idleSeconds: Double)
    private let replayPath: String?
    private let speed: Double
    private let truth: GroundTruth?
    private let truthShift: Double
    private let input: StreamEndpoint?
    private let clientID: String
    private let positions: ByteSink?
    private let events: ByteSink?
    private let listenHost: String
    private let listenPort: UInt16
    private let maximumViewers: Int
    private let viewerTimeoutSeconds: Double
    private let historyBytes: Int
    private let tickMilliseconds: Int
    private let horizon: Double
    private let maximumLagSeconds: Double

    /// Serves `site` through an engine with `options` (their σ also that of the HDOP overlay; live
    /// tags bounded by `tagLimit`, as `StreamJob`'s): a replay of the trace at
    /// `replayPath` at `speed` (0: as fast as it goes; `truth` compared at t +
    /// `truthShiftSeconds`), or the live `input` (`clientID` for MQTT, the clock
    /// moved every `tickMilliseconds` while nothing arrives, `futureHorizonSeconds` as
    /// `StreamJob`'s; nil: 5 for udp:// and mqtt://, 0 otherwise); `positions` and `events` written
    /// as `locus replay` writes them. The page at `listenHost`:`listenPort` (0: a free port), at most
    /// `maximumViewers` at once, one that takes nothing for `viewerTimeoutSeconds` disconnected, the
    /// feed's history `historyBytes` long; `maximumLagSeconds` as `StreamJob`'s.
    package init(site: Site, options: EngineOptions, tagLimit: (maximumTags: Int, idleSeconds: Double),
                 replayPath: String?, speed: Double, truth: GroundTruth?, truthShiftSeconds: Double,
                 input: StreamEndpoint?, clientID: String, positions: ByteSink?, events: ByteSink?,
                 listenHost: String, listenPort: UInt16, maximumViewers: Int, viewerTimeoutSeconds: Double,
                 historyBytes: Int, tickMilliseconds: Int, futureHorizonSeconds: Double?, maximumLagSeconds: Double = 0) {
        self.site = site
        self.options = options
        self.tagLimit = tagLimit
        self.replayPath = replayPath
        self.speed = speed
        self.truth = truth
        truthShift = truthShiftSeconds
        self.input = input
        self.clientID = clientID
        self.positions = positions
        self.events = events
        self.listenHost = listenHost
        self.listenPort = listenPort
        self.maximumViewers = maximumViewers
        self.viewerTimeoutSeconds = viewerTimeoutSeconds
        self.historyBytes = historyBytes
        self.tickMilliseconds = tickMilliseconds
        horizon = futureHorizonSeconds ?? (input == nil || input == .standardStream ? 0 : StreamClock.defaultHorizonSeconds)
        self.maximumLagSeconds = maximumLagSeconds
    }

    /// Opens the trace or the input, binds the page's port, and serves until SIGINT or SIGTERM;
    /// `log` gets the URL, warnings, the replay's or input's end and the closing counts.
    /// - Throws: E5008 (exit 1) for a port that cannot be bound or an unreachable broker; the
    ///   trace's and files' errors; the engine's configuration errors.
    package func run(log: @escaping @Sendable (String) -> Void) throws(LocusError) {
        // First: a SIGINT/SIGTERM while the inputs open (a slow broker, or a warning a supervisor acts
        // on) is then a request to stop — the loop drains and exits 0 — not the default action
        // that kills the process half-started.
        TerminationSignals.install()
        var outputs = StreamOutputs(standardOutput: nil, jsonLines: false, positions: positions, events: events,
                                    publisher: nil, log: log)
        var pacer = try replayPath.map { (path: String) throws(LocusError) in try ReplayPacer(path: path) }

        // The engine judges every zone with callInout on; the frames mark the events of the others
        // silent (occupancy is drawn for every zone, events listed as replay writes them).
        var stream = try LiveStream(site: ServeFrames.judgedSite(site), options: options, tagLimit: tagLimit, futureHorizonSeconds: horizon,
                                    maximumLagSeconds: maximumLagSeconds)
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
        let http = try HTTPServer(host: listenHost, port: listenPort, maximumViewers: maximumViewers, stallSeconds: viewerTimeoutSeconds,
                                  historyBytes: historyBytes, resources: resources)
        defer { http.stop() }
        if http.listensOnEveryInterface {
            log("locus serve: warning: listening on every interface: anyone who can reach this machine can watch\n")
        }
        var source = try input.map { (endpoint: StreamEndpoint) throws(LocusError) in
            try LiveInput(endpoint, clientID: clientID, log: log)
        }
        if let header = pacer?.header {
            try header.withUnsafeBufferPointer { (b: UnsafeBufferPointer<UInt8>) throws(LocusError) in _ = try stream.readHeader(b) }
        }
        let hostText = listenHost == "0.0.0.0" ? "127.0.0.1" : listenHost
        log("locus serve: \(source?.description ?? replayPath ?? "") → http://\(hostText):\(http.port)/\n")

        let started = LiveClock.monotonicSeconds()
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
                if let bytes = frames.frame(heard: stream.hearing?.take() ?? [], clockSeconds: clock) { http.publish(bytes) }
                lastFrame = now
                lastFrameClock = clock
            }
            if force || status.isDue(nowSeconds: now) {
                status.rows = stream.rows
                status.skipped = stream.skipped
                status.malformed = stream.malformed
                status.clockSeconds = stream.engine.clockSeconds
                let counters = http.viewerCounts
                status.viewers = counters.viewers
                status.droppedMessages = counters.messagesDropped
                if let pacer, let fileBytes { status.replayProgress = fileBytes > 0 ? Double(pacer.consumedBytes) / Double(fileBytes) : 1 }
                status.replayDone = replayEnded
                let message = status.message(nowSeconds: now)
                http.publish(message)
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
            let now = LiveClock.monotonicSeconds()
            status.step(fixes: fixes, events: shown.count, latencyMilliseconds: arrival.map { (now - $0) * 1000 } ?? 0)
        }

        while TerminationSignals.requested == nil {
            if pacer != nil, !replayEnded {
                // (Through `pacer!`, in place: a copy would copy its buffer.)
                let now = LiveClock.monotonicSeconds()
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
                    publish(now: LiveClock.monotonicSeconds(), force: true)
                    http.publish(frames.end(clockSeconds: stream.engine.clockSeconds))
                    log("locus serve: the replay is done (\(stream.rows) rows, \(status.fixes) fixes); serving until SIGINT or SIGTERM\n")
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
                    publish(now: LiveClock.monotonicSeconds(), force: true)
                    log("locus serve: the input ended; serving until SIGINT or SIGTERM\n")
                    source!.close()
                    source = nil
                    continue
                }
            } else {
                // Nothing left to feed: serve (and report status) until told to stop.
                _ = poll(nil, 0, 200)
            }
            publish(now: LiveClock.monotonicSeconds(), force: false)
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
            publish(now: LiveClock.monotonicSeconds(), force: true)
        }
        source?.close()
        try outputs.close()
        let counters = http.viewerCounts
        log("locus serve: stopped: \(stream.rows) rows, \(status.fixes) fixes, \(status.events) events; \(counters.viewersTotal) viewers, \(counters.messagesDropped) messages dropped for slow viewers\n")
    }

    /// The last path component (the page shows which file is played, not where it lies).
    private static func fileName(_ path: String) -> String {
        String(path.split(separator: "/").last ?? Substring(path))
    }

    /// The size of an uncompressed regular file (the replay's progress), nil otherwise.
    private static func plainFileSize(_ path: String) -> Int? {
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
