import Foundation
@testable import Locus
import LocusCore
import LocusTestSupport
import Synchronization

/// Collects what a session hands out: positions, zone events (with their zone and dwell seconds)
/// and log lines.
final class SessionRecorder: Sendable {
    struct Snapshot {
        var positions: [PositionFix] = []
        var events: [ZoneEvent] = []
        var zoneNames: [String] = []
        var dwellSeconds: [Double] = []
        var logs: [(LogLevel, String)] = []
    }
    let snapshot = Mutex(Snapshot())

    /// Installs the callbacks and the log hook on `session`.
    func attach(to session: FloorSession, minimumLevel: LogLevel = .log) {
        session.onPosition = { p in self.snapshot.withLock { $0.positions.append(p) } }
        session.onZoneEnter = { z, e in self.snapshot.withLock { $0.events.append(e); $0.zoneNames.append(z.name) } }
        session.onZoneExit = { z, e in self.snapshot.withLock { $0.events.append(e); $0.zoneNames.append(z.name) } }
        session.onZoneDwell = { z, s, e in
            self.snapshot.withLock { $0.events.append(e); $0.zoneNames.append(z.name); $0.dwellSeconds.append(s) }
        }
        session.setDebugLog(minimumLevel: minimumLevel) { level, text in self.snapshot.withLock { $0.logs.append((level, text)) } }
    }

    var positions: [PositionFix] { snapshot.withLock { $0.positions } }
    var events: [ZoneEvent] { snapshot.withLock { $0.events } }
    var logs: [(LogLevel, String)] { snapshot.withLock { $0.logs } }
}

/// A sink that records batches and can be told to refuse them.
final class RecordingSink: PositionSink {
    struct Refused: Error {}
    let batches = Mutex<[PositionBatch]>([])
    let refuses = Mutex(false)

    func deliver(_ batch: PositionBatch) throws {
        if refuses.withLock({ $0 }) { throw Refused() }
        batches.withLock { $0.append(batch) }
    }

    var delivered: [PositionBatch] { batches.withLock { $0 } }
}

enum SessionFixtures {
    static let hallSite = TestPaths.fixture("sites/hall.json")
    static let hallWalk = TestPaths.fixture("traces/hall-walk.csv")

    /// The directory of the test executable, where SwiftPM also puts the package's executables.
    static var productsDirectory: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// A small site: 6 locators around a 20 × 15 m floor, one zone `room` (0…5 × 0…5) unless `zones` is false.
    static func smallSite(zones: Bool = true, sessionID: Int? = 1) -> Site {
        let points: [Point3] = [
            Point3(x: 0, y: 0, z: 2.5), Point3(x: 20, y: 0, z: 2.6), Point3(x: 20, y: 15, z: 2.5),
            Point3(x: 0, y: 15, z: 2.4), Point3(x: 10, y: -1, z: 2.5), Point3(x: 10, y: 16, z: 2.5),
        ]
        let locators = points.enumerated().map { i, p in Locator(address: LocatorAddress(UInt16(100 + i)), position: p) }
        let room = Zone(id: "room", name: "Room", polygon: [Point2(x: 0, y: 0), Point2(x: 5, y: 0), Point2(x: 5, y: 5), Point2(x: 0, y: 5)],
                        rules: ZoneRules(inDistanceMeters: 0.5, inCount: 1, inCountIntervalSeconds: 1, outPeriodSeconds: 3,
                                         priority: 0, callInout: true, dwellSeconds: 5))
        return Site(building: .init(id: "b1"), floors: [
            Floor(id: "1F", tagHeightMeters: 1.2, sessionID: sessionID, locators: locators, zones: zones ? [room] : []),
            Floor(id: "2F", tagHeightMeters: 1.2, sessionID: sessionID, locators: locators, zones: []),
        ])
    }

    /// Exact ranging rounds at 4 Hz from a tag standing at `p`, starting at `start` seconds.
    static func rounds(at p: Point3, count: Int, start: Double = 0, tag: TagID = "T1", site: Site = smallSite()) -> [RangeMeasurement] {
        var out: [RangeMeasurement] = []
        for k in 0..<count {
            for (i, l) in site.floors[0].locators.enumerated() {
                out.append(RangeMeasurement(timeSeconds: start + Double(k) * 0.25 + Double(i) * 0.005, tag: tag,
                                            locator: l.address, rangeMeters: l.position.distance(to: p)))
            }
        }
        return out
    }
}
