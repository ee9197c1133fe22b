@testable import Locus
import LocusCore
import LocusIO
import LocusTestSupport
import Testing

/// Bad input fed straight to the engine in arrival order, as a live integration would (issue #9,
/// docs/robustness.md): nothing traps, nothing non-finite comes out, order holds.
@Suite("Bad input through the engine in arrival order")
struct BadInputEngineTests {
    static func rows() throws -> (Site, [RangeMeasurement]) {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        let trace = try TraceReader.read(path: TestPaths.fixture("traces/hall-walk.csv"))
        return (site, (0..<trace.count).map { trace.measurement($0) })
    }

    static func run(_ site: Site, _ rows: [RangeMeasurement]) throws -> (PositioningEngine, [PositionFix], [ZoneEvent]) {
        var engine = try PositioningEngine(site: site)
        for (i, row) in rows.enumerated() { engine.ingest(row, line: i + 2) }
        engine.finish()
        return (engine, engine.drainFixes(), engine.drainEvents())
    }

    @Test("NaN, infinite, negative, huge and unknown-locator ranges are counted; fixes stay finite")
    func badValues() throws {
        let (site, clean) = try Self.rows()
        var rows = Array(clean.prefix(2000))
        for i in stride(from: 0, to: rows.count, by: 10) {
            switch (i / 10) % 5 {
            case 0: rows[i].rangeMeters = .nan
            case 1: rows[i].rangeMeters = -.infinity
            case 2: rows[i].rangeMeters = -3
            case 3: rows[i].rangeMeters = 1e300
            default: rows[i].locator = LocatorAddress(7)
            }
        }
        let (engine, fixes, events) = try Self.run(site, rows)
        #expect(engine.diagnostics.skipped.count(.nonFinite) == 80)
        #expect(engine.diagnostics.skipped.count(.negativeRange) == 40)
        #expect(engine.diagnostics.skipped.count(.unknownAnchor) == 40)
        #expect(fixes.count > 200)
        #expect(fixes.allSatisfy { $0.position.isFinite && $0.covariance.isFinite && $0.quality.hdop.isFinite })
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.timeSeconds <= $1.timeSeconds })
    }

    @Test("a far-future row silences its tag (its later rows are 'time going backwards'); other tags go on unchanged (documented risk)")
    func farFutureRow() throws {
        let (site, clean) = try Self.rows()
        let rows = Array(clean.prefix(3000))
        let jump = 1e6
        // One corrupt row of one tag, 1e6 s ahead, a third of the way in.
        var corrupt = rows[1000]
        corrupt.timeSeconds = jump
        let victim = corrupt.tag
        let cutSeconds = rows[1000].timeSeconds
        var bad = rows
        bad.insert(corrupt, at: 1001)
        let (_, _, reference) = try Self.run(site, rows)
        let (engine, fixes, events) = try Self.run(site, bad)
        #expect(fixes.allSatisfy { $0.position.isFinite })
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.timeSeconds <= $1.timeSeconds })
        #expect(engine.clockSeconds == jump)
        // Every later row of the victim is older than its corrupt row: skipped and counted.
        let victimRowsAfter = rows[1001...].filter { $0.tag == victim }.count
        #expect(engine.diagnostics.skipped.count(.timeBackwards) == victimRowsAfter)
        #expect(victimRowsAfter > 900)
        // The victim gets no zone event after the cut; the other tag's events are those of the
        // clean run (up to the end of the data, where the clean run stops without a synthetic exit).
        #expect(!events.contains { $0.tag == victim && $0.timeSeconds > cutSeconds + 10 })
        let lastRow = rows[rows.count - 1].timeSeconds
        let others = events.filter { $0.tag != victim && $0.timeSeconds <= lastRow }
        let othersReference = reference.filter { $0.tag != victim && $0.timeSeconds <= lastRow }
        #expect(others == othersReference)
        #expect(!others.isEmpty)
    }
}
