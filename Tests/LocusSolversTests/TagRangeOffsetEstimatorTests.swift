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
