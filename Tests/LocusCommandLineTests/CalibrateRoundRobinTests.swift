import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// `locus calibrate` without truth on a round robin (issue #42): tags that range one locator at a time
/// give epochs of one range, from which the bundle adjustment solved nothing (E4001); their polling
/// cycles, each range carried to one time, are its epochs now.
@Suite("locus calibrate without truth of a round robin")
struct CalibrateRoundRobinTests {
    /// The hall (8 locators) with locator k's bias `biases[k]`, written to `path`.
    static func hall(biases: [Double], path: String) throws -> String {
        var site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        for l in site.floors[0].locators.indices {
            site.floors[0].locators[l].biasMeters = biases[l]
            site.floors[0].locators[l].biasSlope = 0
        }
        try Data(SiteEncoder.encode(site)).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The `--json` summary of a run that must succeed.
    static func json(_ arguments: [String]) throws -> JSONValue {
        let run = CapturedRun(arguments + ["--json"])
        #expect(run.status == 0, "\(arguments): \(run.err)")
        return try JSONParser.parse(Array(run.out.utf8))
    }

    /// Measured (debug build, seeds 3–5; docs/calibration.md "Round robin"): bias RMS error 0.0076–0.0079 m;
    /// surveyed → calibrated, causal 0.148–0.155 → 0.101–0.108 m, smoothed 0.088–0.092 → 0.051–0.053 m.
    /// Before: E4001 (no epoch of more than one range).
    @Test("a simulated round robin (8 locators, one range every 0.128 s, 3 tags, 120 s, biases 0–0.28 m): calibrated from its cycles, the biases within 3 cm RMS, and the calibrated site beats the surveyed one causal and smoothed")
    func simulated() throws {
        let d = TestPaths.temporaryDirectory()
        let biases = [0.12, 0.28, 0.04, 0.22, 0.18, 0.07, 0.0, 0.15]
        let truthSite = try Self.hall(biases: biases, path: d + "/biased.json")
        let surveyed = try Self.hall(biases: Array(repeating: 0, count: 8), path: d + "/site.json")
        let sim = CapturedRun(["simulate", "--site", truthSite, "--trace", d + "/trace.csv", "--truth", d + "/truth.csv",
                               "--tags", "3", "--duration", "120", "--rate", "0.9765625", "--slot-ms", "128", "--seed", "3"])
        #expect(sim.status == 0, "\(sim.err)")
        let report = try Self.json(["calibrate", "--site", surveyed, "--trace", d + "/trace.csv", "--out", d + "/calibrated.json"])
        let fitted = try #require(report["locators"]?.arrayValue).map { $0["bias_m"]?.doubleValue ?? .nan }
        let error = (zip(fitted, biases).map { ($0 - $1) * ($0 - $1) }.reduce(0, +) / 8).squareRoot()
        #expect(error <= 0.03, "bias RMS error \(error) m: \(fitted)")
        func rmse(_ site: String, _ extra: [String] = []) throws -> Double {
            try #require(try Self.json(["replay", "--site", site, "--trace", d + "/trace.csv", "--truth", d + "/truth.csv"] + extra)["rmse_m"]?.doubleValue)
        }
        let causal = (try rmse(surveyed), try rmse(d + "/calibrated.json"))
        let smoothed = (try rmse(surveyed, ["--smooth"]), try rmse(d + "/calibrated.json", ["--smooth"]))
        #expect(causal.1 < causal.0, "causal: surveyed \(causal.0) m, calibrated \(causal.1) m")
        #expect(smoothed.1 < smoothed.0, "smoothed: surveyed \(smoothed.0) m, calibrated \(smoothed.1) m")
    }

    /// libRSF "Labyrinth" (../datasets-extra, CC BY-SA: not in the repository, CI skips): 4 anchors polled
    /// every 0.128 s, 30 s (57 cycles). Measured (docs/calibration.md, "Noise scales with few locators"):
    /// noise 0.063 / 0.119 / 0.054 / 0.066 m against the truth fit's 0.075 / 0.125 / 0.060 / 0.069 (0.065 /
    /// 0.178 / 0.010 / 0.010 before 2026-12-07: two scales at the floor); biases 0.124 / 0.073 / 0.133 / 0.069
    /// ± 0.016–0.023 m against the truth fit's 0.149 / 0.086 / 0.115 / 0.079 (within 1.2 of their σ); surveyed
    /// → calibrated, causal 0.1419 → 0.1420, smoothed 0.0881 → 0.0882, `--rate 2` 0.1452 → 0.1490, `--rate 1`
    /// 0.1557 → 0.1600. A recording too short for the held-out check (one held-out block: "not judged"),
    /// where the site calibrated with truth is itself no better at `--rate 1` (0.1559): the replays are
    /// held within 3 % of the surveyed site, not below it (before 2026-12-07 they were below, with the
    /// collapsed scales: 0.1370 / 0.0819 / 0.1427 / 0.1551).
    @Test("libRSF Labyrinth without truth: each locator's noise within 30 % of the truth fit's, each bias within 2 of its σ of the truth fit's, and the calibrated site within 3 % of the surveyed one at the default rate, --rate 2 and --rate 1, causal and smoothed",
          .enabled(if: TestPaths.extraDataset("librsf-indoor-uwb") != nil, "../datasets-extra/librsf-indoor-uwb is not present"))
    func librsf() throws {
        let d = try #require(TestPaths.extraDataset("librsf-indoor-uwb"))
        let out = TestPaths.temporaryDirectory() + "/calibrated.json"
        let files = ["--site", d + "/site.json", "--trace", d + "/trace.csv"]
        // 30 s is too short to show the calibration better on held-out blocks: by default nothing is
        // written (unproven, exit 1); the fit itself, written unjudged, is what this test measures.
        let judged = CapturedRun(["calibrate"] + files + ["--out", out, "--json"])
        #expect(judged.status == 1 && !FileManager.default.fileExists(atPath: out), "\(judged.err)")
        let verdict = try #require(JSONParser.parse(Array(judged.out.utf8))["validation"])
        #expect(verdict["refused"]?.stringValue == "unproven" && verdict["reason"]?.stringValue?.hasPrefix("not enough held-out data") == true,
                "\(verdict)")
        let selfFit = try Self.json(["calibrate"] + files + ["--out", out, "--holdout-block", "0"])
        let truthFit = try Self.json(["calibrate"] + files + ["--truth", d + "/truth.csv"])
        let selfLocators = try #require(selfFit["locators"]?.arrayValue)
        let truthLocators = try #require(truthFit["floors"]?.arrayValue?.first?["locators"]?.arrayValue)
        #expect(selfLocators.count == 4 && truthLocators.count == 4)
        for (l, t) in zip(selfLocators, truthLocators) {
            let bias = l["bias_m"]?.doubleValue ?? .nan, sd = l["bias_sd_m"]?.doubleValue ?? .nan, noise = l["noise_m"]?.doubleValue ?? .nan
            let truthBias = t["bias_m"]?.doubleValue ?? .nan, truthNoise = t["sigma_m"]?.doubleValue ?? .nan
            #expect(abs(bias - truthBias) <= 2 * sd, "\(l["address"]?.stringValue ?? ""): bias \(bias) ± \(sd), with truth \(truthBias)")
            #expect(abs(noise / truthNoise - 1) <= 0.3, "\(l["address"]?.stringValue ?? ""): noise \(noise), with truth \(truthNoise)")
        }
        for extra in [[], ["--smooth"], ["--rate", "2"], ["--rate", "1"]] {
            func rmse(_ site: String) throws -> Double {
                try #require(try Self.json(["replay", "--site", site, "--trace", d + "/trace.csv", "--truth", d + "/truth.csv"] + extra)["rmse_m"]?.doubleValue)
            }
            let surveyed = try rmse(d + "/site.json"), calibrated = try rmse(out)
            #expect(calibrated <= surveyed * 1.03, "\(extra): surveyed \(surveyed) m, calibrated \(calibrated) m")
        }
    }
}
