@testable import Locus
@testable import LocusCore
@testable import LocusSimulation
import LocusTestSupport
import LocusIO
import Testing

/// Issue #42 item 4: the per-tag range offset estimator (on by default on uncalibrated planar
/// floors) must not lock onto a wrong value — no tag worse with it than without it.
@Suite("Tag range offset: consistency and recovery")
struct TagOffsetConsistencyTests {
    /// Per tag, the horizontal RMSE of the engine's fixes against the tag's walk at each fix's time (m).
    static func perTagRMSE(_ rows: [RangeMeasurement], recording: SimulatedRecording, site: Site,
                           tagOffset: EngineConfiguration.TagRangeOffset) throws -> [TagID: Double] {
        var engine = try PositioningEngine(site: site, configuration: EngineConfiguration(tagRangeOffset: tagOffset))
        for m in rows { engine.ingest(m) }
        engine.finish()
        var sums: [TagID: (Double, Int)] = [:]
        for f in engine.drainFixes() {
            guard let walk = recording.walk(of: f.tag) else { continue }
            let p = walk.position(atSeconds: f.timeSeconds)
            let e2 = (f.position.x - p.x) * (f.position.x - p.x) + (f.position.y - p.y) * (f.position.y - p.y)
            let s = sums[f.tag] ?? (0, 0)
            sums[f.tag] = (s.0 + e2, s.1 + 1)
        }
        return sums.mapValues { ($0.0 / Double(max(1, $0.1))).squareRoot() }
    }

    /// The hall of `Fixtures/sites/hall.json` with its one locator bias removed: an uncalibrated
    /// floor, where the default `--tag-offset auto` estimates each tag's offset.
    static func uncalibratedHall() throws -> Site {
        var site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        for i in site.floors[0].locators.indices { site.floors[0].locators[i].biasMeters = 0 }
        return site
    }

    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
}

extension TagOffsetConsistencyTests {
    @Test("A tag whose first round reads 0.8 m long on every range (NLOS) no longer locks its offset on: its RMSE is within 5 mm of --tag-offset off (before: the estimate stayed at 0.8 m, every later epoch gated out, the tag ~1 m off)")
    func wrongStartDoesNotLockOn() throws {
        let floor = OfflineSmoothingTests.floor
        let site = Site(building: .init(id: "b"), floors: [floor])
        let rec = SimulatedRecording.simulate(floor: floor, tagCount: 1, durationSeconds: 120, seed: 42,
                                              ranging: RangeSimulationConfiguration(nlosProbability: 0.03, dropoutProbability: 0.03))
        let rows = rec.ranges.map { m in
            var r = m
            if m.timeSeconds < 0.2 { r.rangeMeters += 0.8 }
            return r
        }
        let on = try Self.perTagRMSE(rows, recording: rec, site: site, tagOffset: .automatic(.standard))
        let off = try Self.perTagRMSE(rows, recording: rec, site: site, tagOffset: .off)
        let tag = TagID("T1")
        let a = try #require(on[tag]), b = try #require(off[tag])
        #expect(a <= b + 0.005, "with the estimator \(a) m, without \(b) m")
    }

    @Test("40 tags on the uncalibrated hall, 3 % NLOS, 3 % dropouts, five seeds: no tag worse with the default tag offset than with --tag-offset off (by > 5 % + 5 mm), and every tag's RMSE over the whole run, its start included, within 1.5 × the median tag's (seed 2's T4 started 2.81 m off before the start was judged by its round: 1.92 ×)",
          arguments: [UInt64(1), 2, 3, 4, 5])
    func manyTags(seed: UInt64) throws {
        let site = try Self.uncalibratedHall()
        var walk = WalkConfiguration.standard
        walk.waypoints = site.floors[0].zones.map { PolygonValidation.centroid($0.polygon) }
        let rec = SimulatedRecording.simulate(floor: site.floors[0], tagCount: 40, durationSeconds: 60, seed: seed, walk: walk,
                                              ranging: RangeSimulationConfiguration(nlosProbability: 0.03, dropoutProbability: 0.03))
        let on = try Self.perTagRMSE(rec.ranges, recording: rec, site: site, tagOffset: .automatic(.standard))
        let off = try Self.perTagRMSE(rec.ranges, recording: rec, site: site, tagOffset: .off)
        #expect(on.count == 40 && off.count == 40)
        for (tag, a) in on {
            let b = try #require(off[tag])
            #expect(a <= 1.05 * b + 0.005, "\(tag.rawValue): \(a) m with the estimator, \(b) m without")
        }
        let median = Self.median(Array(on.values))
        for (tag, a) in on {
            #expect(a <= 1.5 * median, "\(tag.rawValue): \(a) m against the median tag's \(median) m")
        }
    }
}
