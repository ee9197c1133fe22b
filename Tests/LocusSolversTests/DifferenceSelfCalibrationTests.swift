@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSimulation
@testable import LocusSolvers
import LocusTestSupport
import Testing

/// Calibration without truth from range differences (`DifferenceSelfCalibration`) on simulated
/// uplink TDoA with fixed seeds: the biases' differences recovered with their mean at the site's,
/// the noise per arrival, a displaced locator flagged where its position is checkable, a locator
/// the tags see from one side reported not checkable, and recordings that say too little refused.
@Suite("Calibration without truth from range differences")
struct DifferenceSelfCalibrationTests {
    init() { LapackThreads.useOneThreadUnlessConfigured() }

    /// The hall's biases of the simulation, metres (mean 0.15625).
    static let biases: [Double] = [0.10, 0.25, 0.05, 0.20, 0.15, 0.12, 0.30, 0.08]

    /// Uplink TDoA of `tags` walkers for `seconds` on `truth`, arranged for `surveyed`.
    static func data(truth: Floor, surveyed: Floor, seconds: Double, seed: UInt64, tags: Int = 2) -> DifferenceSelfCalibrationData {
        let recording = SimulatedDifferenceRecording.simulate(floor: truth, tagCount: tags, durationSeconds: seconds, seed: seed,
                                                              differences: DifferenceSimulationConfiguration(mode: .uplink))
        return DifferenceSelfCalibrationData(differences: recording.differences, floor: surveyed)
    }

    @Test("the biases' differences within 1 cm, their mean at the site's, σ per arrival near the simulated 0.1 m, no locator flagged")
    func biases() throws {
        let truth = SelfCalibrationTests.hall(biases: Self.biases), surveyed = SelfCalibrationTests.hall()
        let data = Self.data(truth: truth, surveyed: surveyed, seconds: 150, seed: 11)
        let c = try DifferenceSelfCalibration.estimate(floor: surveyed, data: data, planar: true)
        #expect(c.measurement == .differences && !c.commonOffsetSeparable && c.differenceCount == data.differenceCount)
        let fitted = c.locators.compactMap(\.biasMeters)
        #expect(fitted.count == 8)
        let mean = fitted.reduce(0, +) / 8, trueMean = Self.biases.reduce(0, +) / 8
        #expect(abs(mean) < 0.002, "mean \(mean), the site's is 0")
        for (f, b) in zip(fitted, Self.biases) { #expect(abs((f - mean) - (b - trueMean)) < 0.01, "\(fitted)") }
        for l in c.locators {
            #expect(!l.isFlagged && l.isObservable, "\(l)")
            #expect((0.07...0.12).contains(l.noiseMeters ?? 0), "noise \(String(describing: l.noiseMeters))")
            #expect((l.biasSDMeters ?? 1) < 0.01)
            #expect(l.positionCheck?.checkable == true, "\(l.positionCheck?.summary ?? "")")
        }
        #expect(c.warnings.contains { $0.contains("only differences of biases are observable") })
    }

    @Test("a locator surveyed 0.5 m off is flagged with the offset that puts it back, checkable in both directions")
    func displaced() throws {
        let truth = SelfCalibrationTests.hall(biases: Self.biases)
        let surveyed = SelfCalibrationTests.hall(moves: [5: Point2(x: 0.3, y: 0.4)])
        let c = try DifferenceSelfCalibration.estimate(floor: surveyed, data: Self.data(truth: truth, surveyed: surveyed, seconds: 150, seed: 12),
                                                       planar: true)
        #expect(c.locators.map(\.isFlagged) == [false, false, false, false, false, true, false, false])
        let d = try #require(c.locators[5].positionOffset)
        #expect(abs(d.x + 0.3) < 0.05 && abs(d.y + 0.4) < 0.05, "\(d)")
        #expect(c.locators[5].note?.contains("Δx -0.") == true && c.locators[5].positionCheck?.checkable == true)
    }

    @Test("a locator the tags see from 200 m, along one line is reported not checkable and not flagged, though 0.5 m off")
    func notCheckable() throws {
        // A 10 m square around the tags (at 1 m height, planar) and a fifth locator 200 m east.
        let places = [(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0), (210.0, 5.0)]
        func floor(moved: Bool) -> Floor {
            let locators = places.enumerated().map { k, p in
                Locator(address: LocatorAddress(UInt16(100 + k)), position: Point3(x: p.0 + (moved && k == 4 ? 0.3 : 0),
                                                                                     y: p.1 + (moved && k == 4 ? 0.4 : 0), z: 1))
            }
            return Floor(id: "1F", widthMeters: 220, heightMeters: 10, tagHeightMeters: 1, locators: locators)
        }
        let truth = floor(moved: false)
        var rng = SeededGenerator(seed: 7)
        var rows: [RangeDifference] = []
        for k in 0..<2000 {
            let p = Point3(x: 5 + rng.uniform(-3, 3), y: 5 + rng.uniform(-3, 3), z: 1)
            let arrivals = truth.locators.map { RangeModel.predicted(from: p, to: $0.position) + 0.1 * rng.nextGaussian() }
            for b in 1..<5 {
                rows.append(RangeDifference(timeSeconds: Double(k) * 0.1, tag: TagID("T1"), reference: truth.locators[0].address,
                                            locator: truth.locators[b].address, differenceMeters: arrivals[b] - arrivals[0], floor: nil))
            }
        }
        let surveyed = floor(moved: true)
        let c = try DifferenceSelfCalibration.estimate(floor: surveyed, data: DifferenceSelfCalibrationData(differences: rows, floor: surveyed),
                                                       planar: true)
        let far = c.locators[4]
        #expect(far.positionCheck?.checkable == false && !far.isFlagged, "\(far)")
        #expect(far.note?.contains("not checkable") == true, "\(String(describing: far.note))")
        #expect(c.locators.allSatisfy { !$0.isFlagged && $0.isObservable }, "\(c.locators)")
    }

    @Test("spatial: tags walking at 0.5–2 m under 8 locators at two heights give the biases' differences within 1 cm")
    func spatial() throws {
        let places: [(Double, Double, Double)] = [(0, 0, 0.3), (12, 0, 2.8), (12, 10, 0.3), (0, 10, 2.8),
                                                  (6, 0, 2.8), (12, 5, 2.8), (6, 10, 0.3), (0, 5, 0.3)]
        let biases = [0.05, 0.20, 0.10, 0.30, 0.15, 0.00, 0.25, 0.12]
        let locators = places.enumerated().map { k, p in
            Locator(address: LocatorAddress(UInt16(200 + k)), position: Point3(x: p.0, y: p.1, z: p.2))
        }
        let floor = Floor(id: "1F", widthMeters: 12, heightMeters: 10, tagHeightMeters: 1.1, locators: locators)
        var rng = SeededGenerator(seed: 3)
        var rows: [RangeDifference] = []
        for k in 0..<1500 {
            let p = Point3(x: rng.uniform(1, 11), y: rng.uniform(1, 9), z: rng.uniform(0.5, 2))
            let arrivals = locators.indices.map { RangeModel.predicted(from: p, to: locators[$0].position) + biases[$0] + 0.1 * rng.nextGaussian() }
            for b in 1..<8 {
                rows.append(RangeDifference(timeSeconds: Double(k) * 0.2, tag: TagID("T1"), reference: locators[0].address,
                                            locator: locators[b].address, differenceMeters: arrivals[b] - arrivals[0], floor: nil))
            }
        }
        let c = try DifferenceSelfCalibration.estimate(floor: floor, data: DifferenceSelfCalibrationData(differences: rows, floor: floor),
                                                       planar: false)
        let fitted = c.locators.compactMap(\.biasMeters)
        #expect(fitted.count == 8, "\(c.locators)")
        let mean = fitted.reduce(0, +) / Double(max(1, fitted.count)), trueMean = biases.reduce(0, +) / 8
        #expect(abs(mean) < 0.002)
        for (f, b) in zip(fitted, biases) { #expect(abs((f - mean) - (b - trueMean)) < 0.01, "\(fitted)") }
        #expect(c.locators.allSatisfy { !$0.isFlagged && $0.positionCheck?.directions.count == 3 }, "\(c.locators)")
    }

    @Test("the pseudo-range form is the difference model: an arrival's residual minus its reference's is DifferenceModel's residual")
    func pseudoRangeForm() throws {
        let truth = SelfCalibrationTests.hall(biases: Self.biases), surveyed = SelfCalibrationTests.hall(moves: [2: Point2(x: 0.2, y: 0)])
        let data = Self.data(truth: truth, surveyed: surveyed, seconds: 5, seed: 2)
        var solver = DifferenceSelfCalibrationSolver(data: data, anchors: surveyed.locators.map(\.position), planar: true,
                                                     tagHeight: 1.1, initialBias: Self.biases.map { $0 * 0.5 }, configuration: .standard)
        solver.parameters.offset[3 * 4] = 0.1
        var checked = 0
        for j in 0..<data.blinkCount {
            let reference = data.blinkStarts[j]
            #expect(data.slots[reference] == data.blinkReferences[j] && data.pseudoRangesMeters[reference] == 0)
            for m in (reference + 1)..<data.blinkStarts[j + 1] {
                let pseudo = solver.residual(m, blink: j) - solver.residual(reference, blink: j)
                #expect(abs(pseudo - solver.differenceResidual(m, blink: j)) < 1e-9)
                checked += 1
            }
        }
        #expect(checked == data.differenceCount && checked > 100)
    }

    @Test("too few locators heard, or too few blinks, are refused with E4001 naming what is missing")
    func refused() throws {
        var three = SelfCalibrationTests.hall()
        three.locators = Array(three.locators.prefix(3))
        #expect {
            _ = try DifferenceSelfCalibration.estimate(floor: three, data: Self.data(truth: three, surveyed: three, seconds: 30, seed: 1), planar: true)
        } throws: { error in
            guard let e = error as? LocusError else { return false }
            return e.code == .tooFewRanges && e.message.contains("needs at least 4")
        }
        let hall = SelfCalibrationTests.hall()
        var configuration = SelfCalibrationConfiguration.standard
        configuration.minimumRanges = 1
        #expect {
            _ = try DifferenceSelfCalibration.estimate(floor: hall, data: Self.data(truth: hall, surveyed: hall, seconds: 1, seed: 1, tags: 1),
                                                       planar: true, configuration: configuration)
        } throws: { error in
            guard let e = error as? LocusError else { return false }
            return e.code == .tooFewRanges && e.message.contains("at least 10 are needed")
        }
    }
}
