@testable import Locus
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// Bad input fed straight to the engine in arrival order, as a live integration would (issue #9,
/// docs/robustness.md): nothing traps, nothing non-finite comes out, order holds.
@Suite("Bad input through the engine in arrival order")
struct BadInputEngineTests {
    static func rows() throws -> (Site, [RangeMeasurement]) {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        let trace = try TraceReader.read(path: TestPaths.fixture("traces/hall-walk.csv"))
        return (site, (0..<trace.rows.count).map { trace.measurement($0) })
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
        #expect(engine.diagnostics.skipped.count(.rangeTooLong) == 40)
        #expect(fixes.count > 200)
        #expect(fixes.allSatisfy { $0.position.isFinite && $0.covariance.isFinite && $0.quality.hdop.isFinite })
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.timeSeconds <= $1.timeSeconds })
    }

    @Test("a site built in code with a non-finite locator coordinate or bias is refused up front (E3105, naming the locator)")
    func nonFiniteLocator() throws {
        let (site, _) = try Self.rows()
        for damage in 0..<3 {
            var bad = site
            switch damage {
            case 0: bad.floors[0].locators[2].position.x = .nan
            case 1: bad.floors[0].locators[2].biasMeters = .infinity
            default: bad.floors[0].locators[2].biasSlope = -1
            }
            #expect(throws: LocusError.self) { _ = try PositioningEngine(site: bad) }
            do {
                _ = try PositioningEngine(site: bad)
            } catch {
                #expect(error.code == .siteNonFiniteNumber)
                #expect(error.message.contains("floors[0].locators[2]"))
            }
        }
        #expect(throws: Never.self) { _ = try PositioningEngine(site: site) }
    }

    @Test("a single far-future row is held back as a suspected clock jump: its tag and the shared clock go on as if it never came")
    func farFutureRow() throws {
        let (site, clean) = try Self.rows()
        let rows = Array(clean.prefix(3000))
        // One corrupt row of one tag, 1e6 s ahead, a third of the way in.
        var corrupt = rows[1000]
        corrupt.timeSeconds = 1e6
        var bad = rows
        bad.insert(corrupt, at: 1001)
        let (_, referenceFixes, reference) = try Self.run(site, rows)
        let (engine, fixes, events) = try Self.run(site, bad)
        #expect(engine.diagnostics.skipped.count(.clockJump) == 1)
        #expect(engine.diagnostics.skipped.count(.timeBackwards) == 0)
        #expect(engine.clockSeconds == rows[rows.count - 1].timeSeconds)
        #expect(fixes == referenceFixes)
        #expect(events == reference)
    }

    @Test("a tag that really comes back after a long silence loses only its first row")
    func confirmedJump() throws {
        var clock = TagClock()
        #expect(clock.admit(10) == nil)
        #expect(clock.admit(5000) == .clockJump)
        #expect(clock.admit(5000.25) == nil)
        #expect(clock.latestSeconds == 5000.25)
        #expect(clock.admit(5000.1) == .timeBackwards)
        // A glitch followed by a normal row is dismissed.
        #expect(clock.admit(1e9) == .clockJump)
        #expect(clock.admit(5000.5) == nil)
        #expect(clock.latestSeconds == 5000.5)
    }

    @Test("a clock whose latest time is kept outside (the engine's, in its epoch table) decides every row as the self-contained one")
    func externalLatestTime() {
        var rng = SeededGenerator(seed: 17)
        var reference = TagClock(), clock = TagClock()
        var latest = -Double.infinity
        var t = 0.0
        for _ in 0..<20_000 {
            // Mostly forward steps, some backwards, some glitches far ahead, some real long silences.
            switch rng.next() % 20 {
            case 0: t -= 0.5
            case 1: t += 1e6
            case 2: t += 400
            default: t += 0.05
            }
            let row = rng.next() % 7 == 0 ? t + 1e7 : t
            let expected = reference.admit(row)
            let got = clock.admitsDirectly(row, after: latest) ? nil : clock.admit(row, after: latest)
            #expect(got == expected)
            if got == nil { latest = row }
            #expect(latest == reference.latestSeconds)
        }
    }
}
