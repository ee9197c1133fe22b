import LocusCore
import LocusSimulation
@testable import LocusSolvers
import Testing

@Suite("online per-tag range offset")
struct TagRangeOffsetEstimatorTests {
    /// Feeds a simulated recording (locator biases all `commonOffset`) to an estimator round by
    /// round, correcting each round by the current estimate as the engine does; returns it.
    static func run(commonOffset: Double, nlos: Double, seed: UInt64) -> TagRangeOffsetEstimator {
        var floor = TrackFixture.floor()
        for i in floor.locators.indices { floor.locators[i].biasMeters = commonOffset }
        let recording = SimulatedRecording.simulate(floor: floor, durationSeconds: 120, seed: seed,
                                                    ranging: RangeSimulationConfiguration(nlosProbability: nlos))
        var estimator = TagRangeOffsetEstimator()
        for round in TrackFixture.rounds(recording.ranges) {
            var anchors: [Point3] = [], ranges: [Double] = []
            for r in round {
                guard let l = floor.locator(r.locator) else { continue }
                anchors.append(l.position)
                ranges.append(r.rangeMeters - estimator.offsetMeters)
            }
            let time = round.last?.timeSeconds ?? 0
            anchors.withUnsafeBufferPointer { a in
                ranges.withUnsafeBufferPointer { r in
                    estimator.update(locators: a, rangesMeters: r, tagHeightMeters: floor.tagHeightMeters, timeSeconds: time)
                }
            }
        }
        return estimator
    }

    @Test("a common offset of every range of a tag is recovered to 1 cm; none stays within 1 cm of 0",
          arguments: [0.0, 0.2, -0.1, 0.35])
    func recoversOffset(offset: Double) {
        let estimator = Self.run(commonOffset: offset, nlos: 0, seed: 21)
        #expect(estimator.updates > 400)
        #expect(abs(estimator.offsetMeters - offset) <= 0.01, "\(estimator.offsetMeters) vs \(offset)")
        #expect(estimator.varianceSquareMeters < 1e-3)
    }

    @Test("Seeded with a tracked position a few centimetres off, the estimate follows the unseeded one to 1 mm")
    func seededMatchesUnseeded() {
        var floor = TrackFixture.floor()
        for i in floor.locators.indices { floor.locators[i].biasMeters = 0.2 }
        let recording = SimulatedRecording.simulate(floor: floor, durationSeconds: 120, seed: 24,
                                                    ranging: RangeSimulationConfiguration(nlosProbability: 0.05))
        guard let walk = recording.walks.first?.walk else { Issue.record("no walk"); return }
        var plain = TagRangeOffsetEstimator(), seeded = TagRangeOffsetEstimator()
        var rng = SeededGenerator(seed: 5)
        var worst = 0.0
        for round in TrackFixture.rounds(recording.ranges) {
            let time = round.last?.timeSeconds ?? 0
            var anchors: [Point3] = [], ranges: [Double] = [], seededRanges: [Double] = []
            for r in round {
                guard let l = floor.locator(r.locator) else { continue }
                anchors.append(l.position)
                ranges.append(r.rangeMeters - plain.offsetMeters)
                seededRanges.append(r.rangeMeters - seeded.offsetMeters)
            }
            let truth = walk.position(atSeconds: time)
            let seed = Point2(x: truth.x + 0.05 * (rng.nextUnit() - 0.5), y: truth.y + 0.05 * (rng.nextUnit() - 0.5))
            anchors.withUnsafeBufferPointer { a in
                ranges.withUnsafeBufferPointer { r in
                    plain.update(locators: a, rangesMeters: r, tagHeightMeters: floor.tagHeightMeters, timeSeconds: time)
                }
                seededRanges.withUnsafeBufferPointer { r in
                    seeded.update(locators: a, rangesMeters: r, tagHeightMeters: floor.tagHeightMeters, timeSeconds: time, seed: seed)
                }
            }
            worst = max(worst, abs(plain.offsetMeters - seeded.offsetMeters))
        }
        #expect(seeded.updates > 400 && seeded.updates == plain.updates)
        #expect(worst <= 0.001, "seeded and unseeded offsets differ by up to \(worst) m")
    }

    @Test("10 % NLOS ranges (0.3–2.5 m long) move the estimate by at most 2 cm")
    func robustToNLOS() {
        let estimator = Self.run(commonOffset: 0.2, nlos: 0.1, seed: 22)
        #expect(abs(estimator.offsetMeters - 0.2) <= 0.02, "\(estimator.offsetMeters)")
    }

    @Test("epochs with fewer than 4 ranges or coincident locators leave the estimate unchanged")
    func unusableEpochs() {
        var estimator = TagRangeOffsetEstimator()
        let three = [Point3(x: 0, y: 0, z: 2), Point3(x: 10, y: 0, z: 2), Point3(x: 0, y: 10, z: 2)]
        let ranges = [5.0, 7.0, 7.0]
        three.withUnsafeBufferPointer { a in
            ranges.withUnsafeBufferPointer { r in estimator.update(locators: a, rangesMeters: r, tagHeightMeters: 1, timeSeconds: 0) }
        }
        let same = [Point3](repeating: Point3(x: 1, y: 1, z: 2), count: 5)
        let five = [Double](repeating: 3, count: 5)
        same.withUnsafeBufferPointer { a in
            five.withUnsafeBufferPointer { r in estimator.update(locators: a, rangesMeters: r, tagHeightMeters: 1, timeSeconds: 1) }
        }
        #expect(estimator.updates == 0)
        #expect(estimator.offsetMeters == 0)
    }
}
