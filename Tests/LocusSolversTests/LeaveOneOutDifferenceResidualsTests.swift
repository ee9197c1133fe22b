@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSolvers
import LocusTestSupport
import Testing

/// The held-out figure of a calibration without truth on range differences
/// (`LeaveOneOutRangeResiduals.score` on data without ranges, `scoreDifferences`): each arrival of a blink predicted from the
/// others with the blink's offset eliminated, on noise-free blinks where the answer is exact.
@Suite("Leave-one-out residuals of range differences")
struct LeaveOneOutDifferenceResidualsTests {
    /// The hall's biases the blinks carry, metres.
    static let biases: [Double] = [0.10, 0.25, 0.05, 0.20, 0.15, 0.12, 0.30, 0.08]

    /// Noise-free blinks of one tag at 60 places over the hall, referenced to locator `reference`,
    /// heard by the locators `heard` (slots), with `biases` on the arrivals.
    static func blinks(floor: Floor, heard: [Int], reference: Int = 0) -> [RangeDifference] {
        var rng = SeededGenerator(seed: 5)
        var rows: [RangeDifference] = []
        for k in 0..<60 {
            let p = Point3(x: rng.uniform(4, 36), y: rng.uniform(3, 22), z: floor.tagHeightMeters)
            let arrival = { (i: Int) in RangeModel.predicted(from: p, to: floor.locators[i].position) + Self.biases[i] }
            for b in heard where b != reference {
                rows.append(RangeDifference(timeSeconds: Double(k) * 0.25, tag: TagID("T1"), reference: floor.locators[reference].address,
                                            locator: floor.locators[b].address, differenceMeters: arrival(b) - arrival(reference), floor: nil))
            }
        }
        return rows
    }

    @Test("the site the blinks were made on predicts every arrival exactly; a common bias shift changes nothing")
    func exact() {
        let truth = SelfCalibrationTests.hall(biases: Self.biases)
        let rows = Self.blinks(floor: truth, heard: Array(0..<8))
        var residuals = LeaveOneOutRangeResiduals()
        residuals.score(floor: truth, data: SelfCalibrationData(measurements: [], differences: rows, floor: truth))
        #expect(residuals.count == 60 * 8)
        #expect(residuals.absoluteMeters.allSatisfy { $0 < 1e-6 }, "\(residuals.absoluteMeters.max() ?? 0)")
        // Only differences of biases are observable: every bias 0.4 m higher predicts as well.
        var shifted = LeaveOneOutRangeResiduals()
        shifted.score(floor: SelfCalibrationTests.hall(biases: Self.biases.map { $0 + 0.4 }),
                                 data: SelfCalibrationData(measurements: [], differences: rows, floor: truth))
        #expect(shifted.absoluteMeters.allSatisfy { $0 < 1e-6 })
        #expect(residuals.timesSeconds.first == 0 && residuals.timesSeconds.last == 59 * 0.25)
    }

    @Test("one bias 0.2 m wrong: each of that locator's arrivals, left out, reads 0.2 m; the figure of the site rises")
    func oneBiasWrong() {
        let truth = SelfCalibrationTests.hall(biases: Self.biases)
        var wrongBiases = Self.biases
        wrongBiases[3] -= 0.2  // the site says 0x9DDA's range is 0.2 m shorter than it reads
        let wrong = SelfCalibrationTests.hall(biases: wrongBiases)
        let rows = Self.blinks(floor: truth, heard: Array(0..<8))
        let data = SelfCalibrationData(measurements: [], differences: rows, floor: truth)
        var residuals = LeaveOneOutRangeResiduals()
        residuals.score(floor: wrong, data: data)
        #expect(residuals.count == 60 * 8)
        // Arrival 3 of each blink (the 4th of 8): predicted from the 7 exact others, 0.2 m off.
        let left3 = stride(from: 3, to: residuals.count, by: 8).map { residuals.absoluteMeters[$0] }
        #expect(left3.allSatisfy { abs($0 - 0.2) < 1e-6 }, "\(left3.prefix(4))")
        var right = LeaveOneOutRangeResiduals()
        right.score(floor: truth, data: data)
        #expect((residuals.medianAbsoluteMeters ?? 0) > (right.medianAbsoluteMeters ?? 1))
    }

    @Test("blinks of four arrivals (planar: x, y, the offset and one to spare) predict nothing; five do")
    func redundancy() {
        let truth = SelfCalibrationTests.hall(biases: Self.biases)
        var four = LeaveOneOutRangeResiduals()
        four.score(floor: truth, data: SelfCalibrationData(measurements: [], differences: Self.blinks(floor: truth, heard: [0, 2, 4, 6]),
                                                                       floor: truth))
        #expect(four.count == 0 && four.medianAbsoluteMeters == nil)
        var five = LeaveOneOutRangeResiduals()
        five.score(floor: truth, data: SelfCalibrationData(measurements: [], differences: Self.blinks(floor: truth, heard: [0, 1, 2, 4, 6]),
                                                                       floor: truth))
        #expect(five.count == 60 * 5 && five.absoluteMeters.allSatisfy { $0 < 1e-6 })
        // Ranges only: nothing to score here.
        var none = LeaveOneOutRangeResiduals()
        none.score(floor: truth, data: SelfCalibrationData(measurements: [], floor: truth))
        #expect(none.count == 0)
    }
}
