@testable import LocusCore
@testable import LocusSimulation
@testable import LocusSolvers
import Testing

/// Fixtures: a floor whose locators carry known biases, and calibration samples built from a
/// simulated recording (ranges with the walk's true position at each range's time).
enum CalibrationFixture {
    /// Biases of the 8 locators of `TrackFixture.floor()`, metres (antenna delays, long and short).
    static let biasesMeters: [Double] = [0.10, 0.25, -0.05, 0.30, 0.15, 0.20, 0.05, 0.12]

    static func biasedFloor() -> Floor {
        var floor = TrackFixture.floor()
        for i in floor.locators.indices { floor.locators[i].biasMeters = biasesMeters[i] }
        return floor
    }

    /// The floor with every bias zeroed (what the calibration starts from).
    static func unbiased(_ floor: Floor) -> Floor {
        var copy = floor
        for i in copy.locators.indices { copy.locators[i].biasMeters = 0 }
        return copy
    }

    static func samples(floor: Floor, seed: UInt64, nlos: Double = 0, durationSeconds: Double = 600) -> RangeCalibrationSamples {
        let recording = SimulatedRecording.simulate(floor: floor, durationSeconds: durationSeconds, seed: seed,
                                                    ranging: RangeSimulationConfiguration(nlosProbability: nlos))
        var samples = RangeCalibrationSamples()
        guard let walk = recording.walks.first?.walk else { return samples }
        for r in recording.ranges {
            guard let slot = floor.locators.firstIndex(where: { $0.address == r.locator }) else { continue }
            let p = walk.position(atSeconds: r.timeSeconds)
            samples.append(slot: slot, locator: floor.locators[slot].position, rangeMeters: r.rangeMeters,
                           tagPosition: Point3(x: p.x, y: p.y, z: floor.tagHeightMeters))
        }
        return samples
    }
}

@Suite("range-bias calibration")
struct RangeCalibrationTests {
    @Test("the Huber and Tukey estimates recover simulated per-locator biases to 1 cm and σ to 15 %",
          arguments: [RangeCalibrationConfiguration.Estimator.huber, .tukey], [UInt64(1), 2, 3])
    func recoversBiases(estimator: RangeCalibrationConfiguration.Estimator, seed: UInt64) throws {
        let truthFloor = CalibrationFixture.biasedFloor()
        let samples = CalibrationFixture.samples(floor: truthFloor, seed: seed)
        let calibration = try RangeCalibration.estimate(floor: CalibrationFixture.unbiased(truthFloor), samples: samples,
                                                        configuration: RangeCalibrationConfiguration(estimator: estimator))
        #expect(calibration.iterations >= 1)
        for (i, l) in calibration.locators.enumerated() {
            let bias = try #require(l.biasMeters)
            #expect(abs(bias - CalibrationFixture.biasesMeters[i]) <= 0.01, "locator \(l.address): \(bias)")
            let sigma = try #require(l.sigmaMeters)
            #expect(abs(sigma - 0.1) <= 0.015, "locator \(l.address): σ \(sigma)")
            #expect(l.sampleCount == 2_400)
        }
        let calibrated = calibration.applied(to: CalibrationFixture.unbiased(truthFloor))
        for (a, b) in zip(calibrated.locators, truthFloor.locators) {
            #expect(abs(a.biasMeters - b.biasMeters) <= 0.01)
            #expect(a.position == b.position && a.address == b.address)
        }
    }

    @Test("the median estimator recovers the same biases to 1 cm")
    func medianRecovers() throws {
        let truthFloor = CalibrationFixture.biasedFloor()
        let samples = CalibrationFixture.samples(floor: truthFloor, seed: 11)
        let configuration = RangeCalibrationConfiguration(estimator: .median)
        let calibration = try RangeCalibration.estimate(floor: truthFloor, samples: samples, configuration: configuration)
        #expect(calibration.iterations == 0)
        for (i, l) in calibration.locators.enumerated() {
            let bias = try #require(l.biasMeters)
            #expect(bias == l.medianErrorMeters)
            #expect(abs(bias - CalibrationFixture.biasesMeters[i]) <= 0.01, "locator \(l.address): \(bias)")
        }
    }

    @Test("with 10 % NLOS ranges (0.3–2.5 m long) Tukey stays within 1 cm, median and Huber within 2.5 cm; the mean is off by > 8 cm")
    func robustToNLOS() throws {
        let truthFloor = CalibrationFixture.biasedFloor()
        let samples = CalibrationFixture.samples(floor: truthFloor, seed: 5, nlos: 0.1)
        let tukey = try RangeCalibration.estimate(floor: truthFloor, samples: samples)
        let huber = try RangeCalibration.estimate(floor: truthFloor, samples: samples,
                                                  configuration: RangeCalibrationConfiguration(estimator: .huber))
        let median = try RangeCalibration.estimate(floor: truthFloor, samples: samples,
                                                   configuration: RangeCalibrationConfiguration(estimator: .median))
        var worstMean = 0.0
        for slot in truthFloor.locators.indices {
            let truth = CalibrationFixture.biasesMeters[slot]
            let t = try #require(tukey.locators[slot].biasMeters)
            let h = try #require(huber.locators[slot].biasMeters)
            let m = try #require(median.locators[slot].biasMeters)
            #expect(abs(t - truth) <= 0.01, "Tukey, locator \(slot): \(t) vs \(truth)")
            #expect(abs(h - truth) <= 0.025, "Huber, locator \(slot): \(h) vs \(truth)")
            #expect(abs(m - truth) <= 0.025, "median, locator \(slot): \(m) vs \(truth)")
            #expect(tukey.locators[slot].downweightedCount > 0)
            let sigma = try #require(tukey.locators[slot].sigmaMeters)
            #expect(sigma < 0.13, "σ \(sigma)")
            var sum = 0.0, n = 0.0
            for k in 0..<samples.count where samples.slots[k] == slot {
                sum += samples.rangesMeters[k] - samples.distancesMeters[k]; n += 1
            }
            worstMean = max(worstMean, abs(sum / n - truth))
        }
        // The test can tell: a plain mean is pulled far off by the same data.
        #expect(worstMean > 0.08)
    }

    @Test("the slope model recovers bias and slope of e = b + s·d, reports the fit at the mean distance, and writes the intercept")
    func slopeModel() throws {
        let floor = TrackFixture.floor(locatorCount: 4)
        let intercepts = [0.05, 0.12, 0.20, -0.02], slopes = [0.02, 0.0, 0.04, 0.01]
        var rng = SeededGenerator(seed: 42)
        var samples = RangeCalibrationSamples()
        var sumDistance = [Double](repeating: 0, count: 4)
        for k in 0..<4_000 {
            let slot = k % 4
            let d = rng.uniform(1, 20)
            sumDistance[slot] += d
            samples.append(slot: slot, rangeMeters: d + intercepts[slot] + slopes[slot] * d + 0.05 * rng.nextGaussian(),
                           distanceMeters: d)
        }
        let calibration = try RangeCalibration.estimate(floor: floor, samples: samples,
                                                        configuration: RangeCalibrationConfiguration(fitsSlope: true))
        for (slot, l) in calibration.locators.enumerated() {
            let slope = try #require(l.slope), intercept = try #require(l.interceptMeters)
            #expect(abs(slope - slopes[slot]) <= 0.002, "slope \(slot): \(slope)")
            #expect(abs(intercept - intercepts[slot]) <= 0.01, "intercept \(slot): \(intercept)")
            let meanDistance = sumDistance[slot] / 1_000
            let bias = try #require(l.biasMeters)
            #expect(abs(bias - (intercepts[slot] + slopes[slot] * meanDistance)) <= 0.005)
        }
        let applied = calibration.applied(to: floor)
        for (locator, l) in zip(applied.locators, calibration.locators) {
            #expect(locator.biasMeters == l.interceptMeters && locator.biasSlope == l.slope)
        }
    }

    @Test("a slope from samples all at one distance is not determined: E4002")
    func slopeDegenerate() {
        let floor = TrackFixture.floor(locatorCount: 3)
        var samples = RangeCalibrationSamples()
        for k in 0..<60 { samples.append(slot: k % 3, rangeMeters: 5.1 + 0.001 * Double(k % 7), distanceMeters: 5) }
        #expect(throws: LocusError.self) {
            try RangeCalibration.estimate(floor: floor, samples: samples, configuration: RangeCalibrationConfiguration(fitsSlope: true))
        }
        do {
            _ = try RangeCalibration.estimate(floor: floor, samples: samples, configuration: RangeCalibrationConfiguration(fitsSlope: true))
        } catch {
            #expect(error.code == .degenerateGeometry)
        }
    }

    @Test("a locator with too few samples is not estimated and keeps its site bias; none at all is E4001")
    func tooFewSamples() throws {
        var floor = TrackFixture.floor(locatorCount: 3)
        floor.locators[2].biasMeters = 0.33
        var samples = RangeCalibrationSamples()
        for k in 0..<40 { samples.append(slot: k % 2, rangeMeters: 4.2, distanceMeters: 4) }
        for _ in 0..<3 { samples.append(slot: 2, rangeMeters: 9, distanceMeters: 4) }
        let calibration = try RangeCalibration.estimate(floor: floor, samples: samples)
        #expect(calibration.locators[2].biasMeters == nil)
        #expect(calibration.locators[2].sampleCount == 3)
        let applied = calibration.applied(to: floor)
        #expect(abs(applied.locators[0].biasMeters - 0.2) < 1e-9)
        #expect(applied.locators[2].biasMeters == 0.33)

        do {
            _ = try RangeCalibration.estimate(floor: floor, samples: RangeCalibrationSamples())
            Issue.record("expected E4001")
        } catch {
            #expect(error.code == .tooFewRanges)
        }
    }
}
