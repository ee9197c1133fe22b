import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

@Suite("locus replay --truth-shift auto")
struct TruthShiftCommandTests {
    /// Writes `truth` with `shiftSeconds` added to its `t` column (the truth clock then lags by it).
    static func shiftedTruth(_ truth: String, by shiftSeconds: Double, to out: String) throws {
        let lines = try String(contentsOfFile: truth, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: true)
        let header = lines[0].split(separator: ",").map(String.init)
        let tColumn = try #require(header.firstIndex(of: "t"))
        var text = lines[0] + "\n"
        for line in lines.dropFirst() {
            var cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let t = try #require(Double(cells[tColumn]))
            cells[tColumn] = String(t + shiftSeconds)
            text += cells.joined(separator: ",") + "\n"
        }
        try text.write(toFile: out, atomically: false, encoding: .utf8)
    }

    /// `locus replay … --json` with `extra`; returns the parsed summary and stderr.
    static func replay(site: String, trace: String, truth: String, _ extra: [String]) throws -> (summary: JSONValue, err: String) {
        let run = CapturedRun(["replay", "--site", site, "--trace", trace, "--truth", truth, "--json"] + extra)
        #expect(run.status == 0, "\(run.err)")
        return (try JSONParser.parse(Array(run.out.utf8)), run.err)
    }

    /// A simulated 2-tag random walk over 300 s on the calibration tests' site (6 locators, biased
    /// ranges, unbiased site file): (site, trace, truth).
    static func simulated(in dir: String) throws -> (site: String, trace: String, truth: String) {
        let biased = dir + "/biased.json", site = dir + "/site.json"
        try Data(SiteEncoder.encode(CalibrateCommandTests.site(biases: CalibrateCommandTests.biasesMeters)))
            .write(to: URL(fileURLWithPath: biased))
        try Data(SiteEncoder.encode(CalibrateCommandTests.site(biases: [Double](repeating: 0, count: 6))))
            .write(to: URL(fileURLWithPath: site))
        let trace = dir + "/trace.csv", truth = dir + "/truth.csv"
        let sim = CapturedRun(["simulate", "--site", biased, "--trace", trace, "--truth", truth, "--duration", "300", "--tags", "2",
                               "--random-walk", "--seed", "11", "--truth-rate", "50"])
        #expect(sim.status == 0, "\(sim.err)")
        return (site, trace, truth)
    }

    @Test("auto recovers a truth clock shifted by +0.07 s and by −0.12 s within 0.01 s, and scoring with it beats shift 0",
          arguments: [0.07, -0.12])
    func recoversShift(shiftSeconds: Double) throws {
        let dir = TestPaths.temporaryDirectory()
        let files = try Self.simulated(in: dir)
        let shifted = dir + "/shifted-truth.csv"
        try Self.shiftedTruth(files.truth, by: shiftSeconds, to: shifted)
        let auto = try Self.replay(site: files.site, trace: files.trace, truth: shifted, ["--filter", "none", "--truth-shift", "auto"])
        let estimate = try #require(auto.summary["truth_shift_s"]?.doubleValue)
        #expect(abs(estimate - shiftSeconds) <= 0.01, "δ̂ \(estimate) vs \(shiftSeconds)")
        #expect(auto.summary["truth_shift_source"]?.stringValue == "auto")
        #expect(!auto.err.contains("warning"), "\(auto.err)")
        let unshifted = try Self.replay(site: files.site, trace: files.trace, truth: shifted, ["--filter", "none"])
        let rmseAuto = try #require(auto.summary["rmse_m"]?.doubleValue)
        let rmseZero = try #require(unshifted.summary["rmse_m"]?.doubleValue)
        #expect(rmseAuto < rmseZero, "auto \(rmseAuto) vs 0 \(rmseZero)")
        // Without --truth-shift nothing is reported (the summary keeps its keys as before).
        #expect(unshifted.summary["truth_shift_s"] == nil)
    }

    @Test("auto on an unshifted truth finds |δ̂| < 0.01 s; a given number is reported as given and scored with")
    func unshiftedAndGiven() throws {
        let dir = TestPaths.temporaryDirectory()
        let files = try Self.simulated(in: dir)
        let auto = try Self.replay(site: files.site, trace: files.trace, truth: files.truth, ["--filter", "none", "--truth-shift", "auto"])
        let estimate = try #require(auto.summary["truth_shift_s"]?.doubleValue)
        #expect(abs(estimate) < 0.01, "δ̂ \(estimate)")
        let given = try Self.replay(site: files.site, trace: files.trace, truth: files.truth, ["--filter", "none", "--truth-shift", "0.25"])
        #expect(given.summary["truth_shift_s"]?.doubleValue == 0.25)
        #expect(given.summary["truth_shift_source"]?.stringValue == "given")
        let rmseGiven = try #require(given.summary["rmse_m"]?.doubleValue)
        let rmseAuto = try #require(auto.summary["rmse_m"]?.doubleValue)
        #expect(rmseGiven > rmseAuto + 0.05, "a wrong given shift is scored with: \(rmseGiven) vs \(rmseAuto)")

        let text = CapturedRun(["replay", "--site", files.site, "--trace", files.trace, "--truth", files.truth, "--filter", "none",
                                "--truth-shift", "-0.25"])
        #expect(text.status == 0, "\(text.err)")
        #expect(text.out.contains("truth shift: -0.250 s (given)\n"), "\(text.out)")
        let bad = CapturedRun(["replay", "--site", files.site, "--trace", files.trace, "--truth", files.truth, "--truth-shift", "soon"])
        #expect(bad.status == 2)
        #expect(bad.err.contains("--truth-shift"))
    }

    /// Noise-free rounds to the 6 locators of the calibration tests' site from a tag circling at
    /// 1 m/s (r = ‖p − a‖ + the site-unknown biases), and its truth at 100 Hz with `t + shiftSeconds`.
    static func circleRecording(in dir: String, shiftSeconds: Double, moving: Bool) throws -> (site: String, trace: String, truth: String) {
        let floorSite = CalibrateCommandTests.site(biases: [Double](repeating: 0, count: 6))
        let site = dir + "/site.json", trace = dir + "/trace.csv", truth = dir + "/truth.csv"
        try Data(SiteEncoder.encode(floorSite)).write(to: URL(fileURLWithPath: site))
        let radius = 4.0, speed = moving ? 1.0 : 0.0
        func position(_ t: Double) -> Point3 {
            let angle = speed * t / radius
            return Point3(x: 10 + radius * cos(angle), y: 6 + radius * sin(angle), z: 1.1)
        }
        var rows = "t,anchor,range_m\n"
        var generator = SeededGenerator(seed: 21)
        for round in 0..<(60 * 4) {
            for (k, locator) in floorSite.floors[0].locators.enumerated() {
                let t = 1 + Double(round) * 0.25 + Double(k) * 0.004
                let p = position(t), a = locator.position
                let d = ((p.x - a.x) * (p.x - a.x) + (p.y - a.y) * (p.y - a.y) + (p.z - a.z) * (p.z - a.z)).squareRoot()
                // A static tag gets noise so that its cost is not identically zero.
                let noise = moving ? 0 : 0.05 * generator.nextGaussian()
                rows += "\(t),\(locator.address.rawValue),\(d + CalibrateCommandTests.biasesMeters[k] + noise)\n"
            }
        }
        try rows.write(toFile: trace, atomically: false, encoding: .utf8)
        var samples = "t,x,y,z\n"
        for i in 0...6_300 {
            let t = Double(i) * 0.01
            let p = position(t)
            samples += "\(t + shiftSeconds),\(p.x),\(p.y),\(p.z)\n"
        }
        try samples.write(toFile: truth, atomically: false, encoding: .utf8)
        return (site, trace, truth)
    }

    @Test("on noise-free ranges with unknown per-locator biases, the parabola places δ̂ between grid points to 2 ms")
    func subGridPrecision() throws {
        let dir = TestPaths.temporaryDirectory()
        let files = try Self.circleRecording(in: dir, shiftSeconds: 0.033, moving: true)
        let auto = try Self.replay(site: files.site, trace: files.trace, truth: files.truth, ["--filter", "none", "--truth-shift", "auto"])
        let estimate = try #require(auto.summary["truth_shift_s"]?.doubleValue)
        #expect(abs(estimate - 0.033) <= 0.002, "δ̂ \(estimate)")
    }

    @Test("a tag that never moves gives δ̂ = 0 with a warning; so does a truth too short to cover any row's ±0.5 s")
    func fallsBackToZero() throws {
        let dir = TestPaths.temporaryDirectory()
        let files = try Self.circleRecording(in: dir, shiftSeconds: 0.2, moving: false)
        let still = try Self.replay(site: files.site, trace: files.trace, truth: files.truth, ["--filter", "none", "--truth-shift", "auto"])
        #expect(still.summary["truth_shift_s"]?.doubleValue == 0)
        #expect(still.summary["truth_shift_source"]?.stringValue == "auto")
        #expect(still.err.contains("warning: --truth-shift auto: the range residuals hardly depend on the shift"), "\(still.err)")

        let short = dir + "/short-truth.csv"
        try "t,x,y,z\n10,14,6,1.1\n10.5,14,6,1.1\n".write(toFile: short, atomically: false, encoding: .utf8)
        let none = try Self.replay(site: files.site, trace: files.trace, truth: short, ["--filter", "none", "--truth-shift", "auto"])
        #expect(none.summary["truth_shift_s"]?.doubleValue == 0)
        #expect(none.err.contains("warning: --truth-shift auto: no usable range row"), "\(none.err)")

        let text = CapturedRun(["replay", "--site", files.site, "--trace", files.trace, "--truth", files.truth, "--filter", "none",
                                "--truth-shift", "auto"])
        #expect(text.out.contains("truth shift: +0.000 s (auto, from range residuals)\n"), "\(text.out)")
    }

    @Test("on the recorded fast and mid runs auto finds δ̂ in [0.05, 0.13] s and the calibrated causal RMSE with it beats shift 0",
          .enabled(if: TestPaths.dataset("cuhksz-planar-uwb") != nil, "../shared/datasets/cuhksz-planar-uwb is not present"))
    func realData() throws {
        let d = try #require(TestPaths.dataset("cuhksz-planar-uwb"))
        let calibrated = TestPaths.temporaryDirectory() + "/calibrated.json"
        let calibrate = CapturedRun(["calibrate", "--site", d + "/static/site.json", "--trace", d + "/static/trace.csv",
                                     "--truth", d + "/static/truth.csv", "--slope", "--out", calibrated, "--json"])
        #expect(calibrate.status == 0, "\(calibrate.err)")
        for directory in [d, d + "/runs/mid"] {
            let trace = directory + "/trace.csv", truth = directory + "/truth.csv"
            let auto = try Self.replay(site: calibrated, trace: trace, truth: truth, ["--truth-shift", "auto"])
            let zero = try Self.replay(site: calibrated, trace: trace, truth: truth, [])
            let estimate = try #require(auto.summary["truth_shift_s"]?.doubleValue)
            #expect((0.05...0.13).contains(estimate), "\(directory): δ̂ \(estimate)")
            let rmseAuto = try #require(auto.summary["rmse_m"]?.doubleValue)
            let rmseZero = try #require(zero.summary["rmse_m"]?.doubleValue)
            #expect(rmseAuto < rmseZero, "\(directory): auto \(rmseAuto) vs 0 \(rmseZero)")
        }
    }
}
