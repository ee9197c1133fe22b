import LocusCore
import Synchronization

/// A provider driven by hand, for tests and demos (the console SDK's mock): simulate entering a
/// building, positions and zone events. Each `simulate…` call is delivered synchronously to the
/// session that started the provider; before `begin(provider:)` or after `end()` it does nothing.
public final class MockPositioningProvider: PositioningProvider {
    private let output = Mutex<ProviderOutput?>(nil)
    /// The tag that simulated positions and zone events belong to.
    public let tag: TagID

    /// A mock whose simulated data belongs to `tag`.
    public init(tag: TagID = .single) { self.tag = tag }

    /// Starts delivering into `output` (see `PositioningProvider`).
    public func start(output: ProviderOutput) { self.output.withLock { $0 = output } }
    /// Stops delivering (see `PositioningProvider`).
    public func stop() { output.withLock { $0 = nil } }

    /// Simulates entering building `buildingID`.
    public func simulateEnter(buildingID: String) {
        output.withLock { $0 }?.enterBuilding(buildingID)
    }

    /// Simulates a position `point` on floor `floorID` at time `timeSeconds` (a fix with zero
    /// covariance); zones are judged on it as on any fix.
    public func simulatePosition(_ point: Point3, floorID: FloorID, at timeSeconds: Double) {
        let fix = PositionFix(timeSeconds: timeSeconds, tag: tag, floor: floorID, position: point, covariance: .zero,
                              quality: FixQuality(hdop: 0, pdop: 0, residualRMSMeters: 0, locatorsUsed: 0))
        output.withLock { $0 }?.position(fix)
    }

    /// Simulates a zone event of `status` for `zone` on floor `floorID` at `timeSeconds`. A dwell
    /// event carries the seconds since the latest simulated enter of that zone (0 if none).
    public func simulateZone(_ zone: ZoneID, status: ZoneEventStatus, floorID: FloorID, at timeSeconds: Double) {
        let dwell: Double? = status == .dwell ? max(0, timeSeconds - enteredAt(zone, status: status, at: timeSeconds)) : nil
        let event = ZoneEvent(timeSeconds: timeSeconds, tag: tag, floor: floorID, zone: zone, kind: status.kind, dwellSeconds: dwell)
        note(zone, status: status, at: timeSeconds)
        output.withLock { $0 }?.zoneEvent(event)
    }

    private let entries = Mutex<[ZoneID: Double]>([:])
    private func enteredAt(_ zone: ZoneID, status: ZoneEventStatus, at t: Double) -> Double {
        // Without a simulated enter, the dwell counts from now (0 s).
        entries.withLock { $0[zone] } ?? t
    }

    /// Records enter times (for dwell seconds).
    private func note(_ zone: ZoneID, status: ZoneEventStatus, at t: Double) {
        entries.withLock {
            switch status {
            case .enter: $0[zone] = t
            case .exit: $0[zone] = nil
            case .dwell: break
            }
        }
    }
}
