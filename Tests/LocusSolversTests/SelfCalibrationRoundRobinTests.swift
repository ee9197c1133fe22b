@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSimulation
@testable import LocusSolvers
import LocusTestSupport
import Testing

/// Calibration without truth of a round robin (issue #42): a tag that ranges one locator at a time
/// gives rounds of one range, from which no position is solved; its polling cycles, each range carried
/// to one time, are its epochs instead.
@Suite("Calibration without truth of a round robin")
struct SelfCalibrationRoundRobinTests {
    init() { LapackThreads.useOneThreadUnlessConfigured() }

    /// Four locators at the corners of a 6 × 4 m room (planar, tags at z 0).
    static let corners: [Point3] = [Point3(x: 0, y: 0, z: 0), Point3(x: 6, y: 0, z: 0), Point3(x: 6, y: 4, z: 0), Point3(x: 0, y: 4, z: 0)]

    /// A tag walking from (1, 1) at (0.3, 0.2) m/s, ranging locator k mod 4 at t = 0.128 k s, no noise.
    static func roundRobin(count: Int, slotSeconds: Double = 0.128) -> [(slot: Int, rangeMeters: Double, timeSeconds: Double)] {
        (0..<count).map { k in
            let t = Double(k) * slotSeconds
            let p = Point3(x: 1 + 0.3 * t, y: 1 + 0.2 * t, z: 0)
            return (k % 4, p.distance(to: corners[k % 4]), t)
        }
    }

    @Test("a moving tag's polling cycles: one epoch per range of the reference locator, every other locator's range carried to its time within 5 mm (the ranges move 4–5 cm between cycles)")
    func cyclesCarryRanges() {
        let ranges = Self.roundRobin(count: 40)
        let cycles = SelfCalibrationData.cycles(of: ranges, cycleSpanSeconds: 1.5)
        // The reference is locator 0 (all are heard 10 times; the lowest slot); its first range has no
        // range of the others before it, its last none after for locators 2 and 3.
        #expect(cycles.count == 9, "\(cycles.count)")
        var worst = 0.0, moved = 0.0
        for c in cycles {
            #expect(c.ranges.first?.slot == 0)
            let p = Point3(x: 1 + 0.3 * c.timeSeconds, y: 1 + 0.2 * c.timeSeconds, z: 0)
            for r in c.ranges { worst = max(worst, abs(r.rangeMeters - p.distance(to: Self.corners[r.slot]))) }
            #expect(c.ranges.count == 4, "\(c.ranges)")
        }
        for slot in 1..<4 {
            let own = ranges.filter { $0.slot == slot }
            moved = max(moved, zip(own, own.dropFirst()).map { abs($1.rangeMeters - $0.rangeMeters) }.max() ?? 0)
        }
        #expect(worst < 0.005, "carried ranges within \(worst) m of the distances")
        #expect(moved > 0.04, "a range moves \(moved) m between its cycles")
    }

    @Test("rounds of one range are a round robin, bursts of four with a dropped range are not; a gap longer than the cycle span is not bridged")
    func decidesRoundRobin() {
        #expect(SelfCalibrationData.isRoundRobin(roundSizes: Array(repeating: 1, count: 20), locatorCount: 4))
        #expect(!SelfCalibrationData.isRoundRobin(roundSizes: Array(repeating: 1, count: 20), locatorCount: 2))
        #expect(!SelfCalibrationData.isRoundRobin(roundSizes: [4, 4, 3, 4, 1, 4], locatorCount: 4))
        var data = SelfCalibrationData()
        data.appendTag(Self.roundRobin(count: 40), tag: 0)
        #expect(data.epochCount == 9 && data.rangeCount == 36)
        // Slots 0.5 s apart: a locator's ranges are 2 s apart, beyond the 1.5 s span: no cycle.
        #expect(SelfCalibrationData.cycles(of: Self.roundRobin(count: 40, slotSeconds: 0.5), cycleSpanSeconds: 1.5).isEmpty)
        // Bursts (4 ms slots): the rounds themselves.
        var bursts = SelfCalibrationData()
        let burst: [(slot: Int, rangeMeters: Double, timeSeconds: Double)] = (0..<40).map { (k: Int) in
            let t: Double = 0.25 * Double(k / 4) + 0.004 * Double(k % 4)
            return (slot: k % 4, rangeMeters: 2.0, timeSeconds: t)
        }
        bursts.appendTag(burst, tag: 0)
        #expect(bursts.epochCount == 10 && bursts.rangeCount == 40)
    }

    @Test("a simulated 8-locator round robin (one range every 0.128 s, 5 min, σ 0.1 m, biases from U(0, 0.3)): biases recovered within 3 cm RMS from the cycles, where the rounds alone hold one range each")
    func recoversBiases() throws {
        let truth = SelfCalibrationTests.biases(seed: 11)
        let ranging = RangeSimulationConfiguration(roundRateHertz: 1 / (8 * 0.128), slotSeconds: 0.128)
        let recording = SimulatedRecording.simulate(floor: SelfCalibrationTests.hall(biases: truth), durationSeconds: 300, seed: 11,
                                                    ranging: ranging)
        let data = SelfCalibrationData(measurements: recording.ranges, floor: SelfCalibrationTests.hall())
        #expect(data.epochCount > 250, "\(data.epochCount) cycles")
        let c = try SelfCalibration.estimate(floor: SelfCalibrationTests.hall(), data: data, planar: true)
        let error = SelfCalibrationTests.rms(c.locators.map(\.biasMeters), truth)
        #expect(error <= 0.03, "bias RMS error \(error) m: \(c.locators.map(\.biasMeters)) against \(truth)")
        #expect(c.locators.allSatisfy { !$0.isFlagged }, "\(c.locators.map(\.note))")
    }
}
