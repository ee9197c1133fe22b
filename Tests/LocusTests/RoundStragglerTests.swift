@testable import Locus
import LocusCore
import LocusIO
import LocusTestSupport
import Testing

/// Issue #41 item 5: a round becomes two fixes. Three rounds in a row that each lost a locator (the
/// last one its usual last locator) teach the tag's round model that rounds hold 7 locators ending at
/// slot 6; the next round of 8 is then complete at its 7th range, and its 8th, 2.5 ms later, used to
/// open an epoch of its own — a fix from one locator 2.5 ms after the round's.
@Suite("A round's straggler is late, never a fix alone (issue #41 item 5)")
struct RoundStragglerTests {
    static let period = 0.25, slotSeconds = 0.0025

    /// Rows of one tag, standing still at (12, 7): rounds every 0.25 s from 1 s, locator i of round k at
    /// 1 + 0.25·k + 0.0025·i, each round holding the given locator indices (0...7 of the hall).
    static func rows(_ rounds: [[Int]], locators: [Locator], tag: String = "T1") -> [RangeMeasurement] {
        let p = Point3(x: 12, y: 7, z: 1.1)
        return rounds.enumerated().flatMap { k, held in
            held.map { i in
                RangeMeasurement(timeSeconds: 1 + Double(k) * period + Double(i) * slotSeconds, tag: TagID(tag),
                                 locator: locators[i].address, rangeMeters: locators[i].position.distance(to: p))
            }
        }
    }

    /// The scenario of the issue: two whole rounds, three that lost locator 1, 2 and then 7 (the
    /// usual last), then whole rounds again.
    static let lossyRounds: [[Int]] = {
        let full = Array(0..<8)
        return [full, full, full.filter { $0 != 1 }, full.filter { $0 != 2 }, full.filter { $0 != 7 }, full, full, full, full]
    }()

    static func run(_ configuration: EngineConfiguration) throws -> (fixes: [PositionFix], engine: PositioningEngine) {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        var engine = try PositioningEngine(site: site, configuration: configuration)
        for (n, row) in rows(lossyRounds, locators: site.floors[0].locators).enumerated() { engine.ingest(row, line: n + 2) }
        engine.finish()
        return (engine.drainFixes(), engine)
    }

    @Test("one fix per round, none within half a period of the previous, the straggler counted as late_range",
          arguments: [true, false])
    func oneFixPerRound(tracking: Bool) throws {
        let (fixes, engine) = try Self.run(tracking ? .standard : EngineConfiguration(tracking: .none))
        #expect(engine.diagnostics.epochs == Self.lossyRounds.count)
        #expect(fixes.count == Self.lossyRounds.count)
        let gaps = zip(fixes.dropFirst(), fixes).map { $0.timeSeconds - $1.timeSeconds }
        #expect(gaps.allSatisfy { $0 > Self.period / 2 })
        #expect(fixes.allSatisfy { $0.quality.locatorsUsed >= 3 })
        #expect(engine.diagnostics.skipped.count(.lateRange) == 1)
        #expect(engine.diagnostics.skipped.total == 1)
        // The straggler taught the tag's round model that its rounds hold 8 locators: the next rounds
        // are solved whole, not cut at 7 again (each with a straggler).
        #expect(fixes.suffix(3).allSatisfy { $0.quality.locatorsUsed == 8 }, "\(fixes.map(\.quality.locatorsUsed))")
    }

    @Test("partitions fed the whole stream: late_range is counted by the tag's own partition alone, so the counts add up")
    func partitionsAddUp() throws {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        let locators = site.floors[0].locators
        // Two tags with the same lossy rounds, T2 1 ms after T1; one unknown locator row (counted everywhere).
        var rows = (Self.rows(Self.lossyRounds, locators: locators, tag: "T1")
                    + Self.rows(Self.lossyRounds, locators: locators, tag: "T2").map {
                        RangeMeasurement(timeSeconds: $0.timeSeconds + 0.001, tag: $0.tag, locator: $0.locator, rangeMeters: $0.rangeMeters)
                    }).sorted { $0.timeSeconds < $1.timeSeconds }
        rows.append(RangeMeasurement(timeSeconds: 9, tag: TagID("T1"), locator: LocatorAddress(7), rangeMeters: 3))
        func run(partition: (index: Int, count: Int)?) throws -> EngineDiagnostics {
            var engine = try PositioningEngine(site: site, configuration: EngineConfiguration(tracking: .none))
            if let partition { try engine.setPartition(index: partition.index, count: partition.count) }
            for (n, row) in rows.enumerated() { engine.ingest(row, line: n + 2) }
            engine.finish()
            return engine.diagnostics
        }
        let single = try run(partition: nil)
        let parts = try [run(partition: (0, 2)), run(partition: (1, 2))]
        #expect(single.skipped.count(.lateRange) == 2)
        #expect(parts.map { $0.skipped.count(.lateRange) } == [1, 1])
        #expect(parts.allSatisfy { $0.skipped.count(.unknownAnchor) == single.skipped.count(.unknownAnchor) })
        #expect(single.skipped.count(.unknownAnchor) == 1)
    }
}
