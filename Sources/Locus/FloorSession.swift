import LocusCore
import LocusIO
import LocusSolvers
import Synchronization

/// The SDK-style session over one `Site`: ranges (or a provider) in; positions, zone events,
/// batches for a sink and log messages out. Names follow the console SDK: `begin()`,
/// `begin(provider:)`, `end()`, `isRunning`, `floor`, `setFloorMap(_:buildingID:)`,
/// `refreshZones()`, `send()`, `empty()`, callbacks `onPosition`, `onZoneEnter`, `onZoneExit`,
/// `onZoneDwell`, and `positionStream()`/`zoneEventStream()` as `AsyncStream`s.
///
/// **Determinism.** Positions and events come from a `PositioningEngine`: they depend on the data
/// alone (its timestamps), never on call sizes, threads or the wall clock, and equal `locus
/// replay`'s output for the same trace.
///
/// **Threads.** Every method may be called from any thread. State sits behind one lock; callbacks,
/// streams, the sink and the log hook are called outside it, in order, by one thread at a time (the
/// caller whose call produced them, or the one already dispatching). A callback may call back into
/// the session; what that produces is delivered after the current callback returns.
///
/// **Delivery.** With a sink, positions are batched (`DeliveryPolicy`: 300 positions or 60 s of
/// data time, and on `send()` and `end()`); `empty()` discards what is buffered. With a spool
/// directory, batches are durable: a killed process loses no position, and the next session on
/// the same spool delivers the pending batches first.
///
/// Several sessions may coexist (one per venue or stream); they share nothing.
public final class FloorSession: Sendable {
    /// Receives a position (`onPosition`).
    public typealias PositionHandler = @Sendable (PositionFix) -> Void
    /// Receives a zone enter or exit: the zone (from the site) and the event.
    public typealias ZoneHandler = @Sendable (Zone, ZoneEvent) -> Void
    /// Receives a dwell: the zone, the seconds since entry, and the event.
    public typealias DwellHandler = @Sendable (Zone, Double, ZoneEvent) -> Void
    /// Receives log messages: their level and their text (with the code) in the session's language.
    public typealias LogHandler = @Sendable (LogLevel, String) -> Void

    /// The site the session positions in.
    public let site: Site
    private let engineConfiguration: EngineConfiguration
    /// Whether the run is recorded for `smoothedPositions()`.
    private let keepsForSmoothing: Bool
    private let initialFloor: FloorIndex?
    let sink: (any PositionSink)?
    let zonesByFloor: [FloorID: [ZoneID: Zone]]
    let state: Mutex<State>

    struct Handlers: Sendable {
        var position: PositionHandler?
        var zoneEnter: ZoneHandler?
        var zoneExit: ZoneHandler?
        var zoneDwell: DwellHandler?
        var log: LogHandler?
        var minimumLevel: LogLevel = .log
        var language: LogLanguage?
    }

    enum Item: Sendable {
        case position(PositionFix)
        case event(ZoneEvent)
        case log(LogMessage)
        case deliverPending
        case finishStreams
    }

    struct State {
        /// The engine, driven as every single-engine face drives it (with smoothing: alongside).
        var driver: EngineDriver
        var isRunning = false
        var floorIndex: FloorIndex?
        var tagFloors: [TagID: FloorIndex] = [:]
        var provider: (any PositioningProvider)?
        var generation = 0
        var delivery: PositionDelivery
        var handlers = Handlers()
        var positionContinuations: [Int: AsyncStream<PositionFix>.Continuation] = [:]
        var eventContinuations: [Int: AsyncStream<ZoneEvent>.Continuation] = [:]
        var nextContinuation = 0
        var queue: [Item] = []
        var isDispatching = false
        var loggedFailures: [LocusErrorCode: Int] = [:]
        var droppedNoFloor = 0
        var droppedNotRunning = 0
        var unknownFloors: Set<FloorID> = []
        var positionsSinceBegin = 0
        var eventsSinceBegin = 0
    }

    /// A session over `site`.
    /// - Parameters:
    ///   - sink: where batches of positions go; nil for callbacks and streams only.
    /// - Throws: `E1003` for a rate, σ or batch limits out of range; `E3002` when `configuration.floor`
    ///   names no floor of the site; `E3107` for a site without floors; `E5005`/`E5001` when the
    ///   spool directory cannot be created or read; the zone codes for invalid zones.
    public convenience init(site: Site, configuration: Configuration = .standard, sink: (any PositionSink)? = nil) throws(LocusError) {
        let options = configuration.engineOptions
        try options.validate(naming: ("rateHertz", "rangeSigmaMeters"))
        try self.init(site: site, engineConfiguration: EngineConfiguration(options), floor: configuration.floor,
                      smoothing: options.smooth, delivery: configuration.delivery, sink: sink)
    }

    /// A session over the site file at `sitePath` (SPEC §1).
    /// - Throws: the site decoder's codes (E3xxx, E5001, E5002), and those of `init(site:configuration:sink:)`.
    public convenience init(sitePath: String, configuration: Configuration = .standard, sink: (any PositionSink)? = nil) throws(LocusError) {
        try self.init(site: try SiteDecoder.load(path: sitePath), configuration: configuration, sink: sink)
    }

    /// A session with a full engine configuration (for the command line, the C ABI and tests).
    /// - Throws: see `init(site:configuration:sink:)`.
    init(site: Site, engineConfiguration: EngineConfiguration, floor: FloorID?, smoothing: Bool = false,
                 delivery: DeliveryPolicy, sink: (any PositionSink)?) throws(LocusError) {
        var configuration = engineConfiguration
        configuration.defaultFloor = nil
        let engine = try PositioningEngine(site: site, configuration: configuration)
        var initialFloor: FloorIndex? = nil
        if let floor {
            guard let i = engine.floorIndex(floor) else {
                throw LocusError(.unknownFloor, "no floor '\(floor)' in the site (floors: \(site.floors.map(\.id.rawValue).joined(separator: ", ")))")
            }
            initialFloor = i
        } else if site.floors.count == 1 {
            // One floor: it is the floor map (as `locus replay` uses the site's floor).
            initialFloor = FloorIndex(0)
        }
        self.site = site
        self.keepsForSmoothing = smoothing
        self.engineConfiguration = configuration
        self.initialFloor = initialFloor
        self.sink = sink
        var zones: [FloorID: [ZoneID: Zone]] = [:]
        for f in site.floors { zones[f.id] = Dictionary(f.zones.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a }) }
        zonesByFloor = zones
        let delivery = try PositionDelivery(policy: delivery)
        var state = State(driver: EngineDriver(engine: engine, smoothing: smoothing ? .alongside : .none), delivery: delivery)
        state.floorIndex = initialFloor
        if let initialFloor { state.driver.setDefaultFloor(initialFloor) }
        self.state = Mutex(state)
    }

    deinit {
        let (undelivered, spooled, handlers) = state.withLock { s in
            (s.delivery.undeliveredCount, s.delivery.spool != nil, s.handlers)
        }
        if undelivered > 0 && sink != nil {
            let message = LogMessage(spooled ? .warn : .error, .undeliveredPositions, .undelivered(positions: undelivered, spooled: spooled))
            emit(message, handlers)
        }
    }

    // MARK: lifecycle

    /// True between `begin()` and `end()`.
    public var isRunning: Bool { state.withLock { $0.isRunning } }

    /// The current floor map, nil when none is set.
    public var floor: Floor? { state.withLock { s in s.floorIndex.map { site.floors[$0.rawValue] } } }

    /// Starts the session; ranges are taken from now on. Batches left in the spool by an earlier
    /// process are delivered first. A session that ended starts afresh (new tracks, new zone state).
    /// - Throws: `E1002` when it is already running.
    public func begin() throws(LocusError) {
        try state.withLock { (s: inout State) throws(LocusError) in try start(&s) }
        dispatch()
    }

    /// Starts the session fed by `provider` (see `begin()`); `end()` stops the provider.
    /// - Throws: `E1002` when it is already running.
    public func begin(provider: some PositioningProvider) throws(LocusError) {
        let generation = try state.withLock { (s: inout State) throws(LocusError) -> Int in
            try start(&s)
            s.provider = provider
            return s.generation
        }
        dispatch()
        provider.start(output: ProviderOutput(session: self, generation: generation))
    }

    private func start(_ s: inout State) throws(LocusError) {
        guard !s.isRunning else { throw LocusError(.callOrder, "the session is already running: call end() first") }
        if s.driver.engine.hasFinished {
            // A new run: fresh tracks and zone state (and a fresh run for the smoother), the floor map kept.
            do throws(LocusError) {
                s.driver = try EngineDriver(site: site, configuration: engineConfiguration,
                                            smoothing: keepsForSmoothing ? .alongside : .none)
            } catch {
                preconditionFailure("a site that made an engine once makes it again: \(error)")
            }
            if let f = s.floorIndex { s.driver.setDefaultFloor(f) }
        }
        s.isRunning = true
        s.generation += 1
        s.loggedFailures.removeAll()
        s.positionsSinceBegin = 0
        s.eventsSinceBegin = 0
        s.queue.append(.log(LogMessage(.info, nil, .began(floor: s.floorIndex.map { site.floors[$0.rawValue].id.rawValue }))))
        if let f = s.floorIndex { describeFloor(f, into: &s) }
        if !s.delivery.pending.isEmpty {
            let n = s.delivery.pending.reduce(0) { $0 + $1.positions.count }
            s.queue.append(.log(LogMessage(.info, nil, .recovered(batches: s.delivery.pending.count, positions: n))))
            s.queue.append(.deliverPending)
        }
    }

    /// Ends the session: solves what is open, releases every position and event (the clock stays
    /// at the latest time seen: no synthetic exits, SPEC §4.6), delivers every buffered position to
    /// the sink, stops the provider and finishes the streams. Calling it when not running does nothing.
    public func end() {
        let provider = state.withLock { (s: inout State) -> (any PositioningProvider)? in
            guard s.isRunning else { return nil }
            s.isRunning = false
            do throws(LocusError) { try s.driver.finish() } catch {
                preconditionFailure("a session's driver smooths alongside, never at finish: \(error)")
            }
            collect(&s)
            if let e = s.delivery.seal() { s.queue.append(.log(spoolFailure(e))) }
            s.queue.append(.deliverPending)
            s.queue.append(.log(LogMessage(.info, nil, .ended(positions: s.positionsSinceBegin, events: s.eventsSinceBegin))))
            s.queue.append(.finishStreams)
            defer { s.provider = nil }
            return s.provider
        }
        provider?.stop()
        dispatch()
    }

    /// The last run's positions smoothed offline over the whole run (`locus replay --smooth`: the
    /// same bytes for the same rows), in (time, tag) order. Needs `Configuration.smoothing`; call
    /// after `end()`.
    /// - Throws: E1002 when the session was not configured for smoothing or is still running;
    ///   E4005 when the smoother's numbers go non-finite.
    public func smoothedPositions() throws(LocusError) -> [PositionFix] {
        let driver = try state.withLock { (s: inout State) throws(LocusError) in
            guard keepsForSmoothing else {
                throw LocusError(.callOrder, "the session does not keep its runs for smoothing: set Configuration.smoothing")
            }
            guard !s.isRunning else { throw LocusError(.callOrder, "smooth after end()") }
            return s.driver
        }
        // Smoothed outside the lock: the run is a copy.
        return try driver.smoothedFixes()
    }

    /// Waits until the provider given to `begin(provider:)` has delivered everything (a recording
    /// played to its end). Returns at once without a provider.
    public func waitForProvider() async {
        let provider = state.withLock { $0.provider }
        await provider?.finished()
    }

    /// Switches the floor map (ranges that name no floor are positioned on `floorID` from now on),
    /// while running or not; tracks and zone state are kept.
    /// - Throws: `E3002` when the building is not the site's or the floor is not one of its floors.
    public func setFloorMap(_ floorID: FloorID, buildingID: String) throws(LocusError) {
        guard buildingID == site.building.id else {
            throw LocusError(.unknownFloor, "building '\(buildingID)' is not this session's site ('\(site.building.id)')")
        }
        try state.withLock { (s: inout State) throws(LocusError) in
            guard let i = s.driver.engine.floorIndex(floorID) else {
                throw LocusError(.unknownFloor, "no floor '\(floorID)' in building '\(buildingID)'")
            }
            s.floorIndex = i
            s.driver.setDefaultFloor(i)
            s.queue.append(.log(LogMessage(.info, nil, .floorSwitched(floor: floorID.rawValue, building: buildingID))))
            describeFloor(i, into: &s)
        }
        dispatch()
    }

    /// Puts `tag` on floor `floorID` (rows of that tag that name no floor), or back on the floor map with nil.
    /// - Throws: `E3002` for a floor the site does not have.
    public func setFloor(_ floorID: FloorID?, forTag tag: TagID) throws(LocusError) {
        try state.withLock { (s: inout State) throws(LocusError) in
            guard let floorID else { s.tagFloors[tag] = nil; return }
            guard let i = s.driver.engine.floorIndex(floorID) else { throw LocusError(.unknownFloor, "no floor '\(floorID)' in the site") }
            s.tagFloors[tag] = i
        }
    }

    /// The zones of the current floor map (empty without one); an empty floor is logged at `info`
    /// (E3003), not as an error. Zones come from the session's `Site`.
    @discardableResult
    public func refreshZones() -> [Zone] {
        let zones = state.withLock { (s: inout State) -> [Zone] in
            guard let f = s.floorIndex else { return [] }
            describeFloor(f, into: &s)
            return site.floors[f.rawValue].zones
        }
        dispatch()
        return zones
    }

    /// Seals the buffered positions into a batch and delivers every pending batch now.
    public func send() {
        state.withLock { s in
            if let e = s.delivery.seal() { s.queue.append(.log(spoolFailure(e))) }
            s.queue.append(.deliverPending)
        }
        dispatch()
    }

    /// Discards the buffered and pending positions (and their spool files) without delivering them.
    public func empty() {
        state.withLock { s in
            let n = s.delivery.discard()
            s.queue.append(.log(LogMessage(.info, nil, .discarded(positions: n))))
        }
        dispatch()
    }

    // MARK: input

    /// Takes one range measurement (`locus replay`'s row): its floor is the row's, else the tag's
    /// (`setFloor(_:forTag:)`), else the floor map. Rows that cannot be used are counted and logged
    /// with their code (E1002 not running, E3002 unknown floor); epochs without a fix are logged by
    /// code too.
    /// - Throws: E3001 for a row that names no floor while the session has no floor map (a site of
    ///   several floors before `setFloorMap(_:buildingID:)`): the row is not positioned.
    public func ingest(_ measurement: RangeMeasurement) throws(LocusError) {
        try ingest(contentsOf: CollectionOfOne(Measurement.range(measurement)))
    }

    /// Takes one range difference (TDoA: d(tag, B) − d(tag, A), SPEC §2), with the floor rules of
    /// `ingest(_:)`.
    /// - Throws: E3001 as `ingest(_:)`.
    public func ingest(_ difference: RangeDifference) throws(LocusError) {
        try ingest(contentsOf: CollectionOfOne(Measurement.difference(difference)))
    }

    /// Takes range measurements in order (one lock for all of them). Every row is offered, as
    /// `ingest(_:)` does.
    /// - Throws: E3001 after the last row when rows named no floor without a floor map (the message
    ///   counts them; those rows were not positioned).
    public func ingest(contentsOf measurements: some Sequence<RangeMeasurement>) throws(LocusError) {
        try ingest(contentsOf: measurements.lazy.map { Measurement.range($0) })
    }

    /// Takes measurements of either kind — ranges and range differences (TDoA) — in order, as
    /// `ingest(contentsOf:)` takes ranges.
    /// - Throws: E3001 as `ingest(contentsOf:)`.
    public func ingest(contentsOf measurements: some Sequence<Measurement>) throws(LocusError) {
        let refused = state.withLock { s -> Int in
            let before = s.droppedNoFloor
            for m in measurements { accept(m, line: 0, &s) }
            collect(&s)
            return s.droppedNoFloor - before
        }
        dispatch()
        if refused > 0 {
            throw LocusError(.noFloorMap, "\(refused) range\(refused == 1 ? "" : "s") named no floor and the session has no floor map "
                             + "(the site has \(site.floors.count) floors): call setFloorMap(_:buildingID:) or name the floor in each range")
        }
    }

    /// Moves the stream clock to `timeSeconds` (a timer tick): epochs that no later range can join
    /// are solved and tags that stopped reporting exit their zones. Ignored when not running.
    public func advance(toSeconds timeSeconds: Double) {
        state.withLock { s in
            guard s.isRunning else { return }
            s.driver.advance(toSeconds: timeSeconds)
            collect(&s)
        }
        dispatch()
    }

    // MARK: internals (under the lock)

    func accept(_ m: Measurement, line: Int, _ s: inout State) {
        guard s.isRunning else {
            s.droppedNotRunning += 1
            if Self.isMilestone(s.droppedNotRunning) {
                s.queue.append(.log(LogMessage(.warn, .callOrder, .notRunning(dropped: s.droppedNotRunning))))
            }
            return
        }
        if let id = m.floor {
            if s.driver.engine.floorIndex(id) == nil, s.unknownFloors.insert(id).inserted {
                s.queue.append(.log(LogMessage(.warn, .unknownFloor, .unknownFloor(floor: id.rawValue))))
            }
            offer(m, line: line, &s)
            return
        }
        if !s.tagFloors.isEmpty, let f = s.tagFloors[m.tag] {
            var onFloor = m
            onFloor.floor = site.floors[f.rawValue].id
            offer(onFloor, line: line, &s)
            return
        }
        guard s.floorIndex != nil else {
            s.droppedNoFloor += 1
            if Self.isMilestone(s.droppedNoFloor) {
                s.queue.append(.log(LogMessage(.warn, .noFloorMap, .noFloorMap(dropped: s.droppedNoFloor))))
            }
            return
        }
        offer(m, line: line, &s)
    }

    /// Hands a row to the engine (and to the smoother's record).
    private func offer(_ m: Measurement, line: Int, _ s: inout State) {
        switch m {
        case .range(let r): s.driver.ingest(r, line: line)
        case .difference(let d): s.driver.ingest(d, line: line)
        }
    }

    /// Moves what the engine released into the queue (and the delivery), and logs new failures.
    ///
    /// Positions and zone events are queued interleaved in time order (`OutputInterleaving`), so
    /// that callbacks see a chunk's output as it happened, not all its positions before all its events.
    func collect(_ s: inout State) {
        let fixes = s.driver.drainFixes()
        let events = s.driver.drainEvents()
        var sealed = false
        if !fixes.isEmpty {
            s.positionsSinceBegin += fixes.count
            let sealedBefore = s.delivery.openSequence
            if sink != nil, let e = s.delivery.add(fixes) { s.queue.append(.log(spoolFailure(e))) }
            sealed = sink != nil && s.delivery.openSequence != sealedBefore
        }
        s.eventsSinceBegin += events.count
        OutputInterleaving.interleave(fixes, events, position: { s.queue.append(.position($0)) },
                                      event: { s.queue.append(.event($0)) })
        // Offer batches when one was sealed (a refused batch is retried then, on send() and end()).
        if sealed { s.queue.append(.deliverPending) }
        for (code, count) in s.driver.diagnostics.failedEpochs {
            // Log the first failure of a code, then each time the count passes 10, 100, 1000, …
            let logged = s.loggedFailures[code] ?? 0
            if count > 0 && (logged == 0 || count >= Self.nextMilestone(after: logged)) {
                s.loggedFailures[code] = count
                s.queue.append(.log(LogMessage(.warn, code, .epochsFailed(count: count))))
            }
        }
    }

    func describeFloor(_ f: FloorIndex, into s: inout State) {
        let floor = site.floors[f.rawValue]
        if floor.zones.isEmpty {
            s.queue.append(.log(LogMessage(.info, .floorHasNoZones, .floorHasNoZones(floor: floor.id.rawValue))))
        }
        if floor.sessionID == nil {
            s.queue.append(.log(LogMessage(.info, nil, .floorWithoutSessionID(floor: floor.id.rawValue))))
        }
    }

    private func spoolFailure(_ e: LocusError) -> LogMessage {
        LogMessage(.error, e.code, .spoolFailed(path: e.context.file ?? "", reason: e.message))
    }

    /// The least power of ten greater than `n`.
    private static func nextMilestone(after n: Int) -> Int {
        var m = 1
        while m <= n { m *= 10 }
        return m
    }

    /// 1, 10, 100, … (logs a growing count without flooding).
    private static func isMilestone(_ n: Int) -> Bool {
        var m = 1
        while m < n { m *= 10 }
        return m == n
    }

    // MARK: inspection

    /// Rows skipped by reason and epochs without a fix by code, since the run began.
    public var diagnostics: EngineDiagnostics { state.withLock { $0.driver.diagnostics } }

    /// Positions buffered or pending delivery (not acknowledged by the sink).
    public var undeliveredPositionCount: Int { state.withLock { $0.delivery.undeliveredCount } }
}
