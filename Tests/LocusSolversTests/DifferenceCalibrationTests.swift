@testable import LocusCore
@testable import LocusSimulation
@testable import LocusSolvers
import Testing

/// Locator biases from range differences with truth (`DifferenceCalibration`): only differences of
/// biases are observable; the mean is held at the surveyed site's.
@Suite("difference calibration")
struct DifferenceCalibrationTests {
    /// Difference samples from the fixture walk's simulated ranges: each round's ranges differenced
    /// against its first (uplink: every arrival carries its locator's bias and noise, as ranges do).
    static func samples(floor: Floor, seed: UInt64, nlos: Double = 0) -> DifferenceCalibrationSamples {
        let recording = SimulatedRecording.simulate(floor: floor, durationSeconds: 600, seed: seed,
                                                    ranging: RangeSimulationConfiguration(nlosProbability: nlos))
        var samples = DifferenceCalibrationSamples()
        guard let walk = recording.walks.first?.walk else { return samples }
        var k = 0
        let ranges = recording.ranges
        while k < ranges.count {
            var end = k + 1
            while end < ranges.count, ranges[end].timeSeconds - ranges[k].timeSeconds < 0.1 { end += 1 }
            if let a = floor.locators.firstIndex(where: { $0.address == ranges[k].locator }) {
                let p = walk.position(atSeconds: ranges[k].timeSeconds)
                let tag = Point3(x: p.x, y: p.y, z: floor.tagHeightMeters)
                for j in (k + 1)..<end {
                    guard let b = floor.locators.firstIndex(where: { $0.address == ranges[j].locator }) else { continue }
                    // The arrivals' own true distances at their own times: their difference is the row.
                    let q = walk.position(atSeconds: ranges[j].timeSeconds)
                    let tagB = Point3(x: q.x, y: q.y, z: floor.tagHeightMeters)
                    let z = (ranges[j].rangeMeters - tagB.distance(to: floor.locators[b].position) + tag.distance(to: floor.locators[b].position))
                        - ranges[k].rangeMeters
                    samples.append(referenceSlot: a, reference: floor.locators[a].position, locatorSlot: b,
                                   locator: floor.locators[b].position, differenceMeters: z, tagPosition: tag)
                }
            }
            k = end
        }
        return samples
    }

    @Test("the biases' differences come back to 1 cm and their mean is the surveyed site's (the gauge), with 5 % NLOS too",
          arguments: [0.0, 0.05])
    func recoversDifferences(nlos: Double) throws {
        let truth = CalibrationFixture.biasedFloor()
        var surveyed = CalibrationFixture.unbiased(truth)
        surveyed.locators[0].biasMeters = 0.4  // a surveyed mean of 0.05 m
        let calibration = try DifferenceCalibration.estimate(floor: surveyed, samples: Self.samples(floor: truth, seed: 4, nlos: nlos))
        let fitted = calibration.locators.map { $0.biasMeters ?? .nan }
        let b = CalibrationFixture.biasesMeters
        let shift = 0.05 - b.reduce(0, +) / Double(b.count)
        for (got, want) in zip(fitted, b) { #expect(abs(got - (want + shift)) < 0.01, "\(fitted) vs \(b)") }
        #expect(abs(fitted.reduce(0, +) / Double(fitted.count) - 0.05) < 1e-9)
        for l in calibration.locators { #expect(abs((l.sigmaMeters ?? 0) - 0.1) < 0.03, "σ \(l.sigmaMeters ?? .nan)") }
    }

    @Test("too few locators, or pairs that do not connect them, are refused")
    func refusals() {
        let floor = CalibrationFixture.biasedFloor()
        var samples = DifferenceCalibrationSamples()
        for _ in 0..<20 {
            samples.append(referenceSlot: 0, reference: floor.locators[0].position, locatorSlot: 1, locator: floor.locators[1].position,
                           differenceMeters: 0.1, tagPosition: Point3(x: 5, y: 5, z: 1))
            samples.append(referenceSlot: 2, reference: floor.locators[2].position, locatorSlot: 3, locator: floor.locators[3].position,
                           differenceMeters: 0.1, tagPosition: Point3(x: 5, y: 5, z: 1))
        }
        #expect(throws: LocusError.self) { try DifferenceCalibration.estimate(floor: floor, samples: samples) }
        #expect(throws: LocusError.self) { try DifferenceCalibration.estimate(floor: floor, samples: DifferenceCalibrationSamples()) }
    }
}
