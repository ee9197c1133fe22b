@testable import Locus
import LocusCore
import LocusIO
import LocusTestSupport
import Testing

/// Engines driven from several threads at once (issue #9; run under the thread sanitizer by
/// `scripts/sanitize thread`): each task has its own engine, and all share one `Site` and one parsed
/// trace (immutable values), as a multi-floor server would.
@Suite("Concurrent engines share read-only state safely")
struct ConcurrentEnginesTests {
    static func run(_ site: Site, _ rows: [RangeMeasurement], tracking: EngineConfiguration.Tracking) throws -> ([PositionFix], [ZoneEvent]) {
        var engine = try PositioningEngine(site: site, configuration: EngineConfiguration(tracking: tracking))
        var fixes: [PositionFix] = [], events: [ZoneEvent] = []
        for (i, row) in rows.enumerated() {
            engine.ingest(row)
            if i % 97 == 0 {
                fixes += engine.drainFixes()
                events += engine.drainEvents()
            }
        }
        engine.finish()
        return (fixes + engine.drainFixes(), events + engine.drainEvents())
    }

    @Test("four engines on four tasks over the same site and rows give the single-threaded result")
    func parallelEnginesAgree() async throws {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        let trace = try TraceReader.read(path: TestPaths.fixture("traces/hall-walk.csv"))
        let rows = trace.timeOrder().map { trace.measurement($0) }
        for tracking in [EngineConfiguration.Tracking.none, .kalman(.standard)] {
            let expected = try Self.run(site, rows, tracking: tracking)
            #expect(expected.0.count > 600)
            let results = try await withThrowingTaskGroup(of: ([PositionFix], [ZoneEvent]).self) { group in
                for _ in 0..<4 { group.addTask { try Self.run(site, rows, tracking: tracking) } }
                var all: [([PositionFix], [ZoneEvent])] = []
                for try await r in group { all.append(r) }
                return all
            }
            #expect(results.count == 4)
            for r in results {
                #expect(r.0 == expected.0)
                #expect(r.1 == expected.1)
            }
        }
    }
}
