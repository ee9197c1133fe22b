import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// `locus replay` on floors solved in 3-D (issue #42): the default `--filter kalman` runs the 3-D track
/// there (no longer the raw fixes under a "kalman" label), the same bytes whatever `--jobs`, and its
/// figures on the real Hanyang outdoor recordings (anchors at 0.5–1.97 m: `--mode auto` solves in 3-D).
@Suite("locus replay on spatial floors")
struct SpatialReplayTests {
    static let fixture = TestPaths.fixture("real/hanyang-outdoor-uwb-nlos-b-case3")

    /// The positions file and the `--json` summary of a replay of the fixture with `extra` options.
    static func replay(_ extra: [String], directory d: String = fixture, trace: String? = nil, site: String? = nil) throws
        -> (positions: [UInt8], summary: JSONValue, err: String) {
        let out = TestPaths.temporaryDirectory() + "/positions.csv"
        let run = CapturedRun(["replay", "--site", site ?? d + "/site.json", "--trace", trace ?? d + "/trace.csv", "--positions", out, "--json"]
                              + extra)
        #expect(run.status == 0, "\(extra): \(run.err)")
        return (TestPaths.bytes(out), try JSONParser.parse(Array(run.out.utf8)), run.err)
    }

    @Test("The default replay of a spatial floor is filtered: other bytes than --filter none, z tracked, no fallback counted or warned")
    func filteredDiffersFromRaw() throws {
        let causal = try Self.replay([])
        let raw = try Self.replay(["--filter", "none"])
        #expect(!causal.positions.isEmpty && !raw.positions.isEmpty)
        #expect(causal.positions != raw.positions)
        #expect(causal.summary["filter"]?.stringValue == "kalman")
        #expect(causal.summary["unfiltered_epochs"] == nil, "\(causal.summary)")
        #expect(!causal.err.contains("not filtered"), "\(causal.err)")
        // The track's fixes carry a height of their own (spatial), not the floor's tag height 1.0 m on every row.
        let rows = String(decoding: causal.positions, as: UTF8.self).split(separator: "\n").dropFirst()
        let heights = Set(rows.map { $0.split(separator: ",", omittingEmptySubsequences: false)[4] })
        #expect(heights.count > 100)
    }

    @Test("Spatial replay with --jobs 1 and --jobs 2 writes the same bytes")
    func jobsAgree() throws {
        let one = try Self.replay(["--jobs", "1"])
        let two = try Self.replay(["--jobs", "2"])
        #expect(!one.positions.isEmpty)
        #expect(one.positions == two.positions)
    }

    /// Measured with the fixture (docs/datasets.md), spatial, no truth shift: rmse_m raw 2.1025 (512 fixes; `--mode
    /// spatial` gives no fix for an epoch of fewer than 4 locators), causal 0.4198 (574 fixes). The bounds: × 1.2.
    @Test("Spatial replays of the outdoor NLOS run: causal well below raw, rmse within 1.2 × the measured",
          arguments: [(["--filter", "none"], 2.1025), ([], 0.4198)])
    func outdoorRun(mode: [String], measuredRMSE: Double) throws {
        let d = Self.fixture
        let summary = try Self.replay(["--truth", d + "/truth.csv", "--mode", "spatial"] + mode).summary
        let rmse = try #require(summary["rmse_m"]?.doubleValue)
        #expect(rmse > 0.1, "\(mode): rmse \(rmse) is implausibly small for this run")
        #expect(rmse < measuredRMSE * 1.2, "\(mode): rmse \(rmse) m, measured \(measuredRMSE) m")
        if mode.isEmpty { #expect(summary["fixes"]?.intValue == 574) }
    }

    /// The eight Hanyang runs in ../datasets-extra (not in the repository; CI skips): spatial mode, `--truth-shift
    /// auto`, causal below raw on every run (measured, docs/datasets.md: raw 0.96–5.06 m, causal 0.37–0.79 m).
    @Test("Spatial replays of the eight Hanyang runs: causal below raw on each, under 1 m",
          .enabled(if: TestPaths.extraDataset("hanyang-outdoor-uwb/los-a-case1") != nil,
                   "../datasets-extra/hanyang-outdoor-uwb is not present"),
          arguments: ["los-a-case1", "los-a-case2", "los-b-case3", "los-b-case4", "nlos-a-case1", "nlos-a-case2", "nlos-b-case3", "nlos-b-case4"])
    func hanyangRuns(run: String) throws {
        let d = try #require(TestPaths.extraDataset("hanyang-outdoor-uwb/" + run))
        let options = ["--truth", d + "/truth.csv", "--truth-shift", "auto", "--mode", "spatial"]
        let raw = try #require(try Self.replay(options + ["--filter", "none"], directory: d).summary["rmse_m"]?.doubleValue)
        let causal = try #require(try Self.replay(options, directory: d).summary["rmse_m"]?.doubleValue)
        #expect(causal < raw, "\(run): causal \(causal) m, raw \(raw) m")
        #expect(causal < 1.0, "\(run): causal \(causal) m")
    }

    @Test("locus simulate --altitude flies the tag between LO and HI; the replay of that flight tracks it: smoothed < causal < raw, --jobs 2 the same bytes")
    func simulatedFlight() throws {
        let dir = TestPaths.temporaryDirectory()
        let site = TestPaths.fixture("sites/flight-hall.json")
        let sim = CapturedRun(["simulate", "--site", site, "--trace", dir + "/trace.csv", "--truth", dir + "/truth.csv",
                               "--altitude", "1:5", "--random-walk", "--duration", "120", "--seed", "2"])
        #expect(sim.status == 0, "\(sim.err)")
        let truth = String(decoding: TestPaths.bytes(dir + "/truth.csv"), as: UTF8.self).split(separator: "\n").dropFirst()
        let heights = truth.compactMap { Double($0.split(separator: ",")[4]) }
        #expect(heights.count == 1201)
        #expect((heights.min() ?? 0) >= 1 && (heights.max() ?? 9) <= 5 && (heights.max() ?? 0) - (heights.min() ?? 0) > 3.9)
        let bad = CapturedRun(["simulate", "--site", site, "--trace", dir + "/t2.csv", "--truth", dir + "/u2.csv", "--altitude", "5:1"])
        #expect(bad.status == 2)
        func rmse(_ extra: [String]) throws -> (Double, [UInt8]) {
            let r = try Self.replay(["--truth", dir + "/truth.csv"] + extra, trace: dir + "/trace.csv", site: site)
            return (try #require(r.summary["rmse_m"]?.doubleValue), r.positions)
        }
        // Measured (horizontal rmse_m): raw 0.0922, causal 0.0806, smoothed 0.0509.
        let (raw, rawBytes) = try rmse(["--filter", "none"])
        let (causal, causalBytes) = try rmse([])
        let (smoothed, _) = try rmse(["--smooth"])
        let (_, twoJobs) = try rmse(["--jobs", "2"])
        #expect(causal < 0.95 * raw, "causal \(causal) m, raw \(raw) m")
        #expect(smoothed < 0.75 * causal, "smoothed \(smoothed) m, causal \(causal) m")
        #expect(causalBytes != rawBytes)
        #expect(twoJobs == causalBytes)
    }

    /// Measured (horizontal rmse_m, seed 4): raw 0.1675; causal 0.1262 (`--locator-bias off`: 0.1643); smoothed 0.1043.
    @Test("A 4-locator flight whose locators' biases the site does not state: the biases learnt online bring the causal filter below raw (--locator-bias off: not), --smooth below it, --jobs 2 the same bytes")
    func biasedFourLocatorFlight() throws {
        let dir = TestPaths.temporaryDirectory()
        // A 6 m × 6 m room, locators in the corners at 0.3–2.6 m: `scripts/bench-spatial-bias`'s layout A6.
        func site(biases: [Double]) -> String {
            let corners: [(Double, Double, Double)] = [(0, 0, 0.3), (6, 0, 2.4), (6, 6, 0.5), (0, 6, 2.6)]
            let locators = zip(corners, biases).enumerated().map { i, c in
                "{\"address\": \"0x\(String(0x200 + i, radix: 16))\", \"x\": \(c.0.0), \"y\": \(c.0.1), \"z\": \(c.0.2), \"biasM\": \(c.1)}"
            }
            return "{\"building\": {\"id\": \"b\", \"name\": \"b\"}, \"floors\": [{\"id\": \"room\", \"name\": \"room\", \"originX\": 0, "
                + "\"originY\": 0, \"widthM\": 6, \"heightM\": 6, \"tagHeightM\": 1.5, \"locators\": [\(locators.joined(separator: ", "))], \"zones\": []}]}"
        }
        try site(biases: [0.12, -0.05, 0.2, 0.08]).write(toFile: dir + "/biased.json", atomically: true, encoding: .utf8)
        try site(biases: [0, 0, 0, 0]).write(toFile: dir + "/site.json", atomically: true, encoding: .utf8)
        let sim = CapturedRun(["simulate", "--site", dir + "/biased.json", "--trace", dir + "/trace.csv", "--truth", dir + "/truth.csv",
                               "--altitude", "0.5:2.0", "--random-walk", "--duration", "120", "--seed", "4", "--sigma", "0.08"])
        #expect(sim.status == 0, "\(sim.err)")
        func rmse(_ extra: [String]) throws -> (Double, [UInt8]) {
            let r = try Self.replay(["--truth", dir + "/truth.csv"] + extra, trace: dir + "/trace.csv", site: dir + "/site.json")
            return (try #require(r.summary["rmse_m"]?.doubleValue), r.positions)
        }
        let (raw, _) = try rmse(["--filter", "none"])
        let (causal, causalBytes) = try rmse([])
        let (off, _) = try rmse(["--locator-bias", "off"])
        let (smoothed, _) = try rmse(["--smooth"])
        let (_, twoJobs) = try rmse(["--jobs", "2"])
        #expect(causal < 0.85 * raw, "causal \(causal) m, raw \(raw) m")
        #expect(off > 0.95 * raw, "--locator-bias off: causal \(off) m, raw \(raw) m")
        #expect(smoothed < causal, "smoothed \(smoothed) m, causal \(causal) m")
        #expect(twoJobs == causalBytes)
    }

    @Test("Range differences on a spatial floor still get raw fixes under --filter kalman: counted as unfiltered_epochs and warned on stderr")
    func differencesAreCounted() throws {
        let dir = TestPaths.temporaryDirectory()
        let site = TestPaths.fixture("sites/flight-hall.json")
        let sim = CapturedRun(["simulate", "--site", site, "--trace", dir + "/trace.csv", "--truth", dir + "/truth.csv",
                               "--tdoa", "uplink", "--duration", "20", "--seed", "3"])
        #expect(sim.status == 0, "\(sim.err)")
        let r = try Self.replay([], trace: dir + "/trace.csv", site: site)
        let fixes = try #require(r.summary["fixes"]?.intValue)
        #expect(fixes > 0)
        #expect(r.summary["unfiltered_epochs"]?.intValue == fixes, "\(r.summary)")
        #expect(r.err.contains("warning: \(fixes) of "), "\(r.err)")
    }
}
