import Testing
@testable import LocusCore
@testable import LocusIO
@testable import LocusEvaluation
@testable import Locus

/// `CalibrationValidation.judge`'s rule on given figures (issue #42, "calibration that proves itself"):
/// refused when worse, accepted when shown better; without truth a calibration that is not shown
/// better — lower on the held-out blocks and per block consistently so — is *unproven*, not written;
/// with truth it must only not be worse.
struct CalibrationValidationRuleTests {
    /// A validation over 40 s of one locator's ranges (4 blocks of 10 s, 2 held out), not yet judged.
    static func validation(_ metric: CalibrationValidation.Metric) throws -> CalibrationValidation {
        var csv = "t,anchor,range_m\n"
        for k in 0..<400 { csv += "\(Double(k) * 0.1),1,5.0\n" }
        let trace = try TraceReader.parse(Array(csv.utf8).span, file: "t.csv")
        let blocks = HoldoutBlocks(trace: trace, blockSeconds: 10)
        let (fit, heldOut) = blocks.split(trace)
        return CalibrationValidation(blocks: blocks, fitRows: fit.rows.count, heldOutRows: heldOut.rows.count, metric: metric)
    }

    @Test("without truth: lower on the held-out blocks and consistently so per block (mean difference more than 2 SE below 0): accepted")
    func shownBetter() throws {
        var v = try Self.validation(.medianAbsoluteResidual)
        v.judge(surveyed: 0.200, calibrated: 0.050, blocks: [(0.21, 0.05), (0.19, 0.05), (0.20, 0.052), (0.20, 0.048)])
        #expect(v.accepted && v.refused == nil && v.judged)
        let d = try #require(v.blockDifference)
        #expect(abs(d.mean + 0.15) < 1e-12 && d.mean + 2 * d.standardError < 0)
    }

    @Test("without truth: lower pooled, but the blocks disagree (Bielefeld walk-m1l's figures: −0.024 ± 0.016 m per block): unproven, not written, said")
    func unproven() throws {
        var v = try Self.validation(.medianAbsoluteResidual)
        v.judge(surveyed: 0.0794, calibrated: 0.0598, blocks: [(0.104, 0.084), (0.085, 0.041), (0.121, 0.070), (0.036, 0.057)])
        #expect(!v.accepted && v.refused == .unproven)
        #expect(v.reason?.contains("not shown better") == true, "\(v.reason ?? "")")
        #expect(v.text.hasSuffix(": not shown better, nothing written\n"), "\(v.text)")
        #expect(v.json["refused"]?.stringValue == "unproven" && v.json["accepted"]?.boolValue == false)
        // The same figures with truth: not worse, accepted.
        var t = try Self.validation(.rmse)
        t.judge(surveyed: 0.0794, calibrated: 0.0598, blocks: [(0.104, 0.084), (0.085, 0.041), (0.121, 0.070), (0.036, 0.057)])
        #expect(t.accepted && t.refused == nil)
    }

    @Test("without truth: a correct site's own noise, a little worse but not consistently: unproven (it was accepted before); with truth accepted, as before")
    func noise() throws {
        let blocks = [(0.080, 0.081), (0.075, 0.079), (0.078, 0.077), (0.076, 0.080)]
        var v = try Self.validation(.medianAbsoluteResidual)
        v.judge(surveyed: 0.0774, calibrated: 0.0792, blocks: blocks)
        #expect(v.refused == .unproven && !v.accepted)
        #expect(v.reason?.contains("not consistently across the held-out blocks") == true, "\(v.reason ?? "")")
        var t = try Self.validation(.rmse)
        t.judge(surveyed: 0.0774, calibrated: 0.0792, blocks: blocks)
        #expect(t.refused == nil && t.accepted && t.reason?.contains("not refused") == true)
    }

    @Test("worse beyond the tolerance and consistently: refused with and without truth; exit 1 with --out, 0 without")
    func refused() throws {
        for metric in [CalibrationValidation.Metric.medianAbsoluteResidual, .rmse] {
            var v = try Self.validation(metric)
            v.judge(surveyed: 0.100, calibrated: 0.150, blocks: [(0.10, 0.15), (0.10, 0.16), (0.10, 0.14), (0.10, 0.15)])
            #expect(v.refused == .calibration && !v.accepted)
            var said = ""
            #expect(CalibrationJob.refusalVerdict(v, outPath: "cal.json", say: { said += $0 }) == 1 && said.contains("not written"))
            #expect(CalibrationJob.refusalVerdict(v, outPath: nil, say: { _ in }) == 0)
        }
        var u = try Self.validation(.medianAbsoluteResidual)
        u.judge(surveyed: 0.0794, calibrated: 0.0598, blocks: [(0.104, 0.084), (0.085, 0.041), (0.121, 0.070), (0.036, 0.057)])
        var said = ""
        #expect(CalibrationJob.refusalVerdict(u, outPath: "cal.json", say: { said += $0 }) == 1 && said.contains("cal.json not written"), "\(said)")
    }
}
