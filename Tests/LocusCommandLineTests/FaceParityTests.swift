import Foundation
@testable import Locus
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Synchronization
import Testing

/// Every face builds its engine from one `EngineOptions` value: the command line and `FloorSession`
/// give the same bytes at non-default options (the C ABI and the Python example are held to the same
/// files by scripts/test-c).
@Suite("faces agree at non-default options")
struct FaceParityTests {
    /// (command-line options, the same as a session configuration).
    static let cases: [([String], FloorSession.Configuration)] = [
        (["--sigma", "0.2", "--rate", "2"], .init(rateHertz: 2, rangeSigmaMeters: 0.2)),
        (["--sigma", "0.2", "--rate", "2", "--filter", "none"], .init(rateHertz: 2, positioning: .leastSquares, rangeSigmaMeters: 0.2)),
        (["--sigma", "0.05", "--rate", "5", "--smooth"], .init(rateHertz: 5, rangeSigmaMeters: 0.05, smoothing: true)),
        (["--sigma", "0.2", "--filter", "none", "--smooth"], .init(positioning: .leastSquares, rangeSigmaMeters: 0.2, smoothing: true)),
    ]

    @Test("locus replay and a FloorSession fed the same rows write identical positions and events",
          arguments: ["corridor", "hall"], 0..<4)
    func replayEqualsSession(fixture: String, index: Int) throws {
        let (options, configuration) = Self.cases[index]
        let site = TestPaths.fixture("sites/\(fixture).json")
        let tracePath = TestPaths.fixture("traces/\(fixture)-walk.csv")
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = CapturedRun(["replay", "--site", site, "--trace", tracePath,
                               "--positions", dir + "/p.csv", "--events", dir + "/e.jsonl"] + options)
        #expect(run.status == 0, "\(run.err)")

        let session = try FloorSession(sitePath: site, configuration: configuration)
        let positions = Mutex<[PositionFix]>([])
        let events = Mutex<[ZoneEvent]>([])
        session.onPosition = { fix in positions.withLock { $0.append(fix) } }
        session.onZoneEnter = { _, e in events.withLock { $0.append(e) } }
        session.onZoneExit = { _, e in events.withLock { $0.append(e) } }
        session.onZoneDwell = { _, _, e in events.withLock { $0.append(e) } }
        try session.begin()
        let trace = try TraceReader.read(path: tracePath)
        try session.ingest(contentsOf: trace.timeOrder().map { trace.measurement($0) })
        session.end()
        let fixes = configuration.smoothing ? try session.smoothedPositions() : positions.withLock { $0 }

        var positionsWriter = PositionsWriter()
        for f in fixes { positionsWriter.append(f) }
        var eventsWriter = ZoneEventWriter()
        for e in events.withLock({ $0 }) { eventsWriter.append(e) }
        let cliPositions = TestPaths.bytes(dir + "/p.csv")
        #expect(cliPositions.count > 1_000)
        #expect(positionsWriter.bytes == cliPositions, "positions differ (\(options))")
        #expect(eventsWriter.bytes == TestPaths.bytes(dir + "/e.jsonl"), "events differ (\(options))")
    }

    @Test("σ reaches the solver, the filter and the tag-offset estimator alike")
    func sigmaReachesEveryStage() {
        let options = EngineOptions(sigmaMeters: 0.2)
        let configuration = EngineConfiguration(options)
        #expect(configuration.solver.sigmaMeters == 0.2)
        guard case .kalman(let filter) = configuration.tracking, case .automatic(let offset) = configuration.tagRangeOffset else {
            Issue.record("defaults changed")
            return
        }
        #expect(filter.rangeSigmaMeters == 0.2)
        #expect(offset.rangeSigmaMeters == 0.2)
    }
}
