import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// `locus calibrate` without truth on recordings that do not determine the biases: the Hanyang
/// outdoor runs (4 locators in 3-D, one range an epoch more than the tag's coordinates, NLOS). Before,
/// four of the eight crashed (a precondition on an empty system once every bias was undetermined) and
/// the others wrote biases after 40–120 steps that had not settled — all four −0.3 m on los-b-case4,
/// which made that run 65 % worse against truth (0.2954 → 0.4888 m causal). Now a diverging
/// adjustment is E4004 (exit 1) and nothing is written.
@Suite("locus calibrate without truth on a recording it cannot calibrate")
struct CalibrateDivergenceTests {
    @Test("the Hanyang fixture: the adjustment diverges (its last step still moves the tag by metres), E4004, exit 1, no site written")
    func fixture() throws {
        let d = TestPaths.fixture("real/hanyang-outdoor-uwb-nlos-b-case3")
        let out = TestPaths.temporaryDirectory() + "/calibrated.json"
        let run = CapturedRun(["calibrate", "--site", d + "/site.json", "--trace", d + "/trace.csv", "--out", out])
        #expect(run.status == 1, "\(run.err)")
        #expect(run.err.contains("the bundle adjustment diverges") && run.err.contains("floor 'F1'") && run.err.contains("trace.csv"), "\(run.err)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// `geometry --trace` on the same recording: the map stands and the survey check says it checks
    /// nothing, why, and flags nothing (before, the whole run failed with E4004 and no map).
    @Test("geometry --trace on the Hanyang fixture: the report and map stand, the survey check 'not possible' with the reason, exit 0")
    func geometry() throws {
        let d = TestPaths.fixture("real/hanyang-outdoor-uwb-nlos-b-case3")
        let svg = TestPaths.temporaryDirectory() + "/map.svg"
        let run = CapturedRun(["geometry", "--site", d + "/site.json", "--trace", d + "/trace.csv", "--svg", svg, "--json"])
        #expect(run.status == 0, "\(run.err)")
        let summary = try JSONParser.parse(Array(run.out.utf8))
        #expect(summary["hdop_p50"]?.doubleValue != nil && FileManager.default.fileExists(atPath: svg), "\(run.out)")
        let survey = try #require(summary["survey"])
        #expect(survey["flagged"]?.doubleValue == 0 && survey["locators"]?.arrayValue?.isEmpty == true
                && survey["not_possible"]?.stringValue?.contains("the bundle adjustment diverges") == true, "\(run.out)")
        let text = CapturedRun(["geometry", "--site", d + "/site.json", "--trace", d + "/trace.csv"])
        #expect(text.status == 0 && text.out.contains("not possible, no locator checked: the bundle adjustment diverges"), "\(text.out)")
    }

    /// The range-difference (TDoA) adjustment has the same check (`SelfCalibration.solveToConvergence`).
    /// The hall's first 5 locators (D + 3 for a planar blink) with 40 % of the arrivals NLOS (+0.3…2.5 m):
    /// after 40 steps the blinks still move by 3.1 m a step. Before, the report of that unsettled fit
    /// read noise figures of 0.01 m and 1.20 m and ended "no calibrated locators".
    @Test("range differences, 5 locators, 40 % NLOS: the adjustment diverges, E4004, exit 1, no site written")
    func differences() throws {
        let d = TestPaths.temporaryDirectory()
        var site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        site.floors[0].locators = Array(site.floors[0].locators.prefix(5))
        try Data(SiteEncoder.encode(site)).write(to: URL(fileURLWithPath: d + "/site.json"))
        let sim = CapturedRun(["simulate", "--site", d + "/site.json", "--trace", d + "/trace.csv", "--truth", d + "/truth.csv",
                               "--tags", "2", "--duration", "120", "--tdoa", "uplink", "--nlos", "0.4", "--seed", "3"])
        #expect(sim.status == 0, "\(sim.err)")
        let out = d + "/calibrated.json"
        let run = CapturedRun(["calibrate", "--site", d + "/site.json", "--trace", d + "/trace.csv", "--out", out])
        #expect(run.status == 1, "\(run.err)")
        #expect(run.err.contains("the bundle adjustment diverges") && run.err.contains("E4004"), "\(run.err)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// With truth the adjustment runs, but Hanyang's truth is 2-D and stamped about 0.2 s late: the biases
    /// it fits make the held-out RMSE 0.4125 → 0.5812 m (+40.9 %), unevenly across the blocks (per block
    /// +24.8 ± 16.4 %). The blocks' test alone let that through ("not consistently worse"); beyond
    /// `inconsistentTolerance` (6 %) a calibration is refused however its blocks scatter.
    @Test("the Hanyang fixture with its truth: +40.9 % on the held-out blocks, scattered across them, is refused, not written (exit 1)")
    func fixtureWithTruth() throws {
        let d = TestPaths.fixture("real/hanyang-outdoor-uwb-nlos-b-case3")
        let out = TestPaths.temporaryDirectory() + "/calibrated.json"
        let run = CapturedRun(["calibrate", "--json", "--site", d + "/site.json", "--trace", d + "/trace.csv", "--truth", d + "/truth.csv",
                               "--out", out])
        #expect(run.status == 1, "\(run.err)")
        #expect(!FileManager.default.fileExists(atPath: out))
        let v = try #require(try JSONParser.parse(Array(run.out.utf8))["validation"])
        #expect(v["refused"]?.stringValue == "calibration", "\(v)")
        let change = try #require(v["change"]?.doubleValue), block = try #require(v["block_change"])
        let mean = try #require(block["mean"]?.doubleValue), se = try #require(block["se"]?.doubleValue)
        #expect(change > 0.06 && mean - 2 * se <= 0, "the case the blocks' test alone let through: \(v)")
        #expect(v["inconsistent_tolerance"]?.doubleValue == 0.06)
        #expect(run.err.contains("beyond the 6.0 % any calibration may cost where the held-out blocks disagree"), "\(run.err)")
    }

    /// Measured (docs/calibration.md "A recording that does not determine the biases", "Four locators in
    /// 3-D"): all eight refused — five E4004 / E4001, and los-b-case4, nlos-a-case1, nlos-b-case4 by the
    /// geometry rule (median PDOP 6.4–19 with one redundant range: before it, 0.2954 → 0.3776 m and
    /// 0.3939 → 0.4666 m worse, 0.7210 → 0.6127 m better).
    @Test("the eight Hanyang runs: each either refused (nothing written) or calibrated to a site no worse against truth",
          .enabled(if: TestPaths.extraDataset("hanyang-outdoor-uwb/los-a-case1") != nil, "../datasets-extra/hanyang-outdoor-uwb is not present"),
          arguments: ["los-a-case1", "los-a-case2", "los-b-case3", "los-b-case4", "nlos-a-case1", "nlos-a-case2", "nlos-b-case3", "nlos-b-case4"])
    func runs(run name: String) throws {
        let d = try #require(TestPaths.extraDataset("hanyang-outdoor-uwb/" + name))
        let out = TestPaths.temporaryDirectory() + "/calibrated.json"
        let run = CapturedRun(["calibrate", "--site", d + "/site.json", "--trace", d + "/trace.csv", "--out", out])
        guard FileManager.default.fileExists(atPath: out) else {
            #expect(run.status != 0, "nothing written, so the run must fail: \(run.err)")
            return
        }
        func rmse(_ site: String) throws -> Double {
            let r = CapturedRun(["replay", "--json", "--site", site, "--trace", d + "/trace.csv", "--truth", d + "/truth.csv"])
            return try #require(try JSONParser.parse(Array(r.out.utf8))["rmse_m"]?.doubleValue)
        }
        let surveyed = try rmse(d + "/site.json"), calibrated = try rmse(out)
        #expect(calibrated <= surveyed, "surveyed \(surveyed) m, calibrated \(calibrated) m")
    }
}
