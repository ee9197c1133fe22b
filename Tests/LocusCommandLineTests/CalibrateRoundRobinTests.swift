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
    /// every 0.128 s. Measured (docs/calibration.md): biases 0.151/0.096/0.108/0.071 m against the truth
    /// fit's 0.149/0.086/0.115/0.079; surveyed → calibrated, causal 0.1419 → 0.1370, smoothed 0.0881 →
    /// 0.0819, `--rate 2` 0.1465 → 0.1427, `--rate 1` 0.1786 → 0.1551.
    @Test("libRSF Labyrinth without truth: the biases within 2 cm of the truth fit's, and the calibrated site no worse than the surveyed one at the default rate, --rate 2 and --rate 1, causal and smoothed",
          .enabled(if: TestPaths.extraDataset("librsf-indoor-uwb") != nil, "../datasets-extra/librsf-indoor-uwb is not present"))
    func librsf() throws {
        let d = try #require(TestPaths.extraDataset("librsf-indoor-uwb"))
        let out = TestPaths.temporaryDirectory() + "/calibrated.json"
        let files = ["--site", d + "/site.json", "--trace", d + "/trace.csv"]
        let selfFit = try Self.json(["calibrate"] + files + ["--out", out])
        let truthFit = try Self.json(["calibrate"] + files + ["--truth", d + "/truth.csv"])
        let a = try #require(selfFit["locators"]?.arrayValue).map { $0["bias_m"]?.doubleValue ?? .nan }
        let b = try #require(truthFit["floors"]?.arrayValue?.first?["locators"]?.arrayValue).map { $0["bias_m"]?.doubleValue ?? .nan }
        #expect(a.count == 4 && zip(a, b).allSatisfy { abs($0 - $1) <= 0.02 }, "without truth \(a), with truth \(b)")
        for extra in [[], ["--smooth"], ["--rate", "2"], ["--rate", "1"]] {
            func rmse(_ site: String) throws -> Double {
                try #require(try Self.json(["replay", "--site", site, "--trace", d + "/trace.csv", "--truth", d + "/truth.csv"] + extra)["rmse_m"]?.doubleValue)
            }
            let surveyed = try rmse(d + "/site.json"), calibrated = try rmse(out)
            #expect(calibrated <= surveyed, "\(extra): surveyed \(surveyed) m, calibrated \(calibrated) m")
        }
    }
}
