import LocusCore

/// A source of positioning data for a `FloorSession`: ranges (from UWB hardware or a recording),
/// or ready positions and zone events (a mock). `FloorSession.begin(provider:)` calls
/// `start(output:)`; `end()` calls `stop()`.
public protocol PositioningProvider: Sendable {
    /// Starts delivering into `output`. Called synchronously by `begin(provider:)`: a provider that
    /// plays data on its own starts a task here and returns.
    func start(output: ProviderOutput)
    /// Stops delivering (the session ended). Deliveries after this are ignored by the session.
    func stop()
    /// Returns when the provider will deliver nothing more (a recording played to its end).
    /// Providers without an end return at once.
    func finished() async
}

extension PositioningProvider {
    /// Providers without an end of their own: returns at once.
    public func finished() async {}
}

/// What a zone event of a mock says happened: the console SDK's zone statuses.
public enum ZoneEventStatus: String, Sendable, Hashable, CaseIterable {
    /// The tag entered the zone.
    case enter
    /// The tag has stayed in the zone (a dwell event).
    case dwell
    /// The tag left the zone.
    case exit

    /// The zone event kind for this status.
    var kind: ZoneEvent.Kind {
        switch self {
        case .enter: .enter
        case .dwell: .dwell
        case .exit: .exit
        }
    }
}

/// The handle a provider delivers through: it forwards to the session that started the provider
/// and is closed once that session ends (later deliveries are ignored).
public struct ProviderOutput: Sendable {
    let session: FloorSession
    let generation: Int

    /// True while the session that started the provider still runs this run.
    public var isOpen: Bool { session.acceptsProvider(generation) }

    /// Delivers one range measurement (see `FloorSession.ingest(_:)`).
    public func ingest(_ measurement: RangeMeasurement) {
        session.providerIngest([.range(measurement)], lines: nil, generation: generation)
    }

    /// Delivers one range difference (see `FloorSession.ingest(_:)`).
    public func ingest(_ difference: RangeDifference) {
        session.providerIngest([.difference(difference)], lines: nil, generation: generation)
    }

    /// Delivers range measurements in order (one lock and one dispatch for the batch).
    public func ingest(contentsOf measurements: [RangeMeasurement]) {
        session.providerIngest(measurements.map { .range($0) }, lines: nil, generation: generation)
    }

    /// Delivers measurements of either kind in order (one lock and one dispatch for the batch).
    public func ingest(contentsOf measurements: [Measurement]) {
        session.providerIngest(measurements, lines: nil, generation: generation)
    }

    /// Delivers measurements with their file lines (for skip reports).
    func ingest(contentsOf measurements: [Measurement], lines: [Int]) {
        session.providerIngest(measurements, lines: lines, generation: generation)
    }

    /// Moves the stream clock to `timeSeconds` (a timer tick: tags that stopped reporting exit).
    public func advance(toSeconds timeSeconds: Double) {
        guard isOpen else { return }
        session.advance(toSeconds: timeSeconds)
    }

    /// Reports that the device entered building `buildingID` (the session takes its first floor
    /// when no floor map is set).
    public func enterBuilding(_ buildingID: String) {
        guard isOpen else { return }
        session.providerEnteredBuilding(buildingID)
    }

    /// Delivers a ready position (from a provider that positions by itself): it is judged against
    /// the zones of its floor like a computed one.
    public func position(_ fix: PositionFix) {
        guard isOpen else { return }
        session.providerPosition(fix)
    }

    /// Delivers a ready zone event (a mock's): passed to the callbacks as it is, without judgement.
    public func zoneEvent(_ event: ZoneEvent) {
        guard isOpen else { return }
        session.providerZoneEvent(event)
    }
}
