import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

@Suite("locus calibrate")
struct CalibrateCommandTests {
    /// Biases written into the simulated site, metres.
    static let biasesMeters: [Double] = [0.12, 0.31, -0.04, 0.22, 0.18, 0.07]

    /// A 20 m × 12 m floor with 6 locators at 2.5 m, tags at 1.1 m, `biases` as biasM.
    static func site(biases: [Double]) -> Site {
        let points: [(Double, Double)] = [(0, 0), (20, 0), (20, 12), (0, 12), (10, 0), (10, 12)]
        let locators = points.enumerated().map { i, p in
            Locator(address: LocatorAddress(UInt16(0x200 + i)), position: Point3(x: p.0, y: p.1, z: 2.5), biasMeters: biases[i])
        }
        return Site(building: .init(id: "lab", name: "Lab"),
                    floors: [Floor(id: "1F", name: "Lab", widthMeters: 20, heightMeters: 12, tagHeightMeters: 1.1,
                                   sessionID: 1, locators: locators)])
    }

    /// Writes the biased site, simulates a recording from it, and writes the same site without biases.
    static func simulatedRecording(in dir: String, nlos: String = "0") throws -> (site: String, trace: String, truth: String) {
        let biased = dir + "/biased.json", unbiased = dir + "/site.json"
        try Data(SiteEncoder.encode(site(biases: biasesMeters))).write(to: URL(fileURLWithPath: biased))
        try Data(SiteEncoder.encode(site(biases: [Double](repeating: 0, count: 6)))).write(to: URL(fileURLWithPath: unbiased))
        let trace = dir + "/trace.csv", truth = dir + "/truth.csv"
        let sim = CapturedRun(["simulate", "--site", biased, "--trace", trace, "--truth", truth, "--duration", "600",
                               "--random-walk", "--seed", "3", "--nlos", nlos, "--truth-rate", "50"])
        #expect(sim.status == 0, "\(sim.err)")
        return (unbiased, trace, truth)
    }

    @Test("calibrate writes a site that decodes and carries the simulated biases to 1.5 cm, with or without 10 % NLOS",
          arguments: ["0", "0.1"])
    func writesCalibratedSite(nlos: String) throws {
        let dir = TestPaths.temporaryDirectory()
        let files = try Self.simulatedRecording(in: dir, nlos: nlos)
        let out = dir + "/calibrated.json"
        let run = CapturedRun(["calibrate", "--site", files.site, "--trace", files.trace, "--truth", files.truth, "--out", out])
        #expect(run.status == 0, "\(run.err)")
        #expect(run.out.contains("0x0201"))
        #expect(run.out.contains("calibrated site written to \(out)"))
        let site = try SiteDecoder.decode(TestPaths.bytes(out), file: out)
        let locators = site.floors[0].locators
        #expect(locators.count == 6)
        for (l, truth) in zip(locators, Self.biasesMeters) {
            #expect(abs(l.biasMeters - truth) <= 0.015, "\(l.address): \(l.biasMeters) vs \(truth)")
        }
        // Everything but the biases is unchanged.
        var expected = Self.site(biases: locators.map(\.biasMeters))
        expected.floors[0].zones = site.floors[0].zones
        #expect(site == expected)
    }

    @Test("calibrate --out keeps each locator address in the input's notation: a number stays a number, a hex string keeps its case and width")
    func outKeepsAddressNotation() throws {
        let dir = TestPaths.temporaryDirectory()
        let files = try Self.simulatedRecording(in: dir)
        // The encoder wrote "0x0200" … "0x0205"; respell two as a number and one in lower case.
        var text = try String(contentsOfFile: files.site, encoding: .utf8)
        text = text.replacingOccurrences(of: #""address": "0x0200""#, with: #""address": 512"#)
            .replacingOccurrences(of: #""address": "0x0201""#, with: #""address": "0x201""#)
            .replacingOccurrences(of: #""address": "0x0202""#, with: #""address": 514"#)
        try text.write(toFile: files.site, atomically: false, encoding: .utf8)
        let out = dir + "/calibrated.json"
        let run = CapturedRun(["calibrate", "--site", files.site, "--trace", files.trace, "--truth", files.truth, "--out", out])
        #expect(run.status == 0, "\(run.err)")
        let written = try String(contentsOfFile: out, encoding: .utf8)
        for spelling in [#""address": 512,"#, #""address": "0x201","#, #""address": 514,"#, #""address": "0x0203","#] {
            #expect(written.contains(spelling), "\(spelling) missing from the written site")
        }
        #expect(!written.contains(#""0x0200""#) && !written.contains(#""0x0202""#))
    }

    @Test("--json prints one object with a per-locator table: address, samples, bias_m, median_m, sigma_m")
    func jsonSummary() throws {
        let dir = TestPaths.temporaryDirectory()
        let files = try Self.simulatedRecording(in: dir)
        let run = CapturedRun(["calibrate", "--site", files.site, "--trace", files.trace, "--truth", files.truth,
                               "--estimator", "median", "--json"])
        #expect(run.status == 0, "\(run.err)")
        let summary = try JSONParser.parse(Array(run.out.utf8))
        #expect(summary["estimator"]?.stringValue == "median")
        let samples = try #require(summary["samples"]?.intValue)
        #expect(samples == 600 * 4 * 6)
        let floor = try #require(summary["floors"]?.arrayValue?.first)
        #expect(floor["height"]?.stringValue == "floor tagHeightM")
        let locators = try #require(floor["locators"]?.arrayValue)
        #expect(locators.count == 6)
        for (l, truth) in zip(locators, Self.biasesMeters) {
            let bias = try #require(l["bias_m"]?.doubleValue)
            #expect(abs(bias - truth) <= 0.015)
            let sigma = try #require(l["sigma_m"]?.doubleValue)
            #expect(abs(sigma - 0.1) <= 0.02)
            #expect(l["samples"]?.intValue == 2_400)
            #expect(l["median_m"]?.doubleValue != nil)
        }
        #expect(!run.out.contains("\n{"))
    }

    @Test("invalid input exits 2 naming the problem: --slope with median, a missing truth file, no truth overlap")
    func invalidInput() throws {
        let dir = TestPaths.temporaryDirectory()
        let site = dir + "/site.json"
        try Data(SiteEncoder.encode(Self.site(biases: [Double](repeating: 0, count: 6)))).write(to: URL(fileURLWithPath: site))
        let trace = dir + "/trace.csv", truth = dir + "/truth.csv"
        try "t,anchor,range_m\n0,0x200,5\n0.1,0x201,6\n".write(toFile: trace, atomically: false, encoding: .utf8)
        try "t,x,y\n10,1,1\n11,1,1\n".write(toFile: truth, atomically: false, encoding: .utf8)

        let slope = CapturedRun(["calibrate", "--site", site, "--trace", trace, "--truth", truth, "--slope", "--estimator", "median"])
        #expect(slope.status == 2)
        #expect(slope.err.contains("E1001"))

        let missing = CapturedRun(["calibrate", "--site", site, "--trace", trace, "--truth", dir + "/nope.csv"])
        #expect(missing.status == 2)
        #expect(missing.err.contains("nope.csv"))
        #expect(missing.err.contains("E5001"))

        let noOverlap = CapturedRun(["calibrate", "--site", site, "--trace", trace, "--truth", truth])
        #expect(noOverlap.status == 2)
        #expect(noOverlap.err.contains("E4001"))
        #expect(noOverlap.err.contains("trace.csv"))

        // Without truth the options of the truth path are refused, and the other way round.
        let estimator = CapturedRun(["calibrate", "--site", site, "--trace", trace, "--estimator", "median"])
        #expect(estimator.status == 2)
        #expect(estimator.err.contains("--truth"), "\(estimator.err)")
        let fix = CapturedRun(["calibrate", "--site", site, "--trace", trace, "--truth", trace, "--fix-positions"])
        #expect(fix.status == 2)
        #expect(fix.err.contains("--fix-positions"), "\(fix.err)")
    }

    /// `locus replay … --json` on the real data; returns rmse_m.
    static func replayRMSE(site: String, run directory: String, _ extra: [String]) throws -> Double {
        let run = CapturedRun(["replay", "--site", site, "--trace", directory + "/trace.csv", "--truth", directory + "/truth.csv",
                               "--json"] + extra)
        #expect(run.status == 0, "\(run.err)")
        return try #require(try JSONParser.parse(Array(run.out.utf8))["rmse_m"]?.doubleValue)
    }

    @Test("calibrated on static/, the causal filter reaches ≤ 7 cm RMSE on the fast run and ≤ 6.5 cm on mid (raw: > 15 cm, raw with the online tag offset: < 11 cm); --smooth beats causal on both runs, raw and calibrated",
          .enabled(if: TestPaths.dataset("cuhksz-planar-uwb") != nil, "../shared/datasets/cuhksz-planar-uwb is not present"))
    func realData() throws {
        let d = try #require(TestPaths.dataset("cuhksz-planar-uwb"))
        let out = TestPaths.temporaryDirectory() + "/calibrated.json"
        let calibrate = CapturedRun(["calibrate", "--site", d + "/static/site.json", "--trace", d + "/static/trace.csv",
                                     "--truth", d + "/static/truth.csv", "--out", out, "--json"])
        #expect(calibrate.status == 0, "\(calibrate.err)")
        let site = try SiteDecoder.decode(TestPaths.bytes(out), file: out)
        // The dataset README's medians (fast run) lie between 0.15 and 0.32 m.
        for l in site.floors[0].locators { #expect((0.1...0.35).contains(l.biasMeters), "\(l.address): \(l.biasMeters)") }

        for (directory, bound) in [(d, 0.070), (d + "/runs/mid", 0.065)] {
            let raw = try Self.replayRMSE(site: d + "/site.json", run: directory, ["--sigma", "0.2", "--tag-offset", "off"])
            let rawWithOffset = try Self.replayRMSE(site: d + "/site.json", run: directory, [])
            #expect(rawWithOffset < 0.11, "raw with the online tag offset \(directory): \(rawWithOffset)")
            let rawSmoothed = try Self.replayRMSE(site: d + "/site.json", run: directory, ["--smooth"])
            #expect(rawSmoothed < rawWithOffset, "raw: smoothed \(rawSmoothed) vs causal \(rawWithOffset) (\(directory))")
            // On a calibrated site `auto` leaves the offset off: forcing it on costs a little.
            let forced = try Self.replayRMSE(site: out, run: directory, ["--tag-offset", "on"])
            let causal = try Self.replayRMSE(site: out, run: directory, [])
            let leastSquares = try Self.replayRMSE(site: out, run: directory, ["--filter", "none"])
            let smoothed = try Self.replayRMSE(site: out, run: directory, ["--smooth"])
            #expect(raw > 0.15, "raw \(directory): \(raw)")
            #expect(causal <= bound, "calibrated causal \(directory): \(causal)")
            #expect(causal < forced, "auto \(causal) vs forced on \(forced)")
            #expect(causal < leastSquares, "causal \(causal) vs least squares \(leastSquares)")
            #expect(smoothed < causal, "smoothed \(smoothed) vs causal \(causal)")
        }
    }
}

@Suite("Range scale calibration (biasSlope)")
struct RangeScaleCalibrationTests {
    /// Range scale errors written into the simulated site.
    static let slopes: [Double] = [0.02, -0.01, 0.035, 0.0, 0.015, 0.025]

    @Test("calibrate --slope recovers each locator's bias and range scale from a simulated recording, and the site carries them")
    func recoversSlopes() throws {
        let dir = TestPaths.temporaryDirectory()
        var biased = CalibrateCommandTests.site(biases: CalibrateCommandTests.biasesMeters)
        for k in biased.floors[0].locators.indices { biased.floors[0].locators[k].biasSlope = Self.slopes[k] }
        try Data(SiteEncoder.encode(biased)).write(to: URL(fileURLWithPath: dir + "/biased.json"))
        try Data(SiteEncoder.encode(CalibrateCommandTests.site(biases: [Double](repeating: 0, count: 6))))
            .write(to: URL(fileURLWithPath: dir + "/site.json"))
        let sim = CapturedRun(["simulate", "--site", dir + "/biased.json", "--trace", dir + "/trace.csv", "--truth", dir + "/truth.csv",
                               "--duration", "600", "--random-walk", "--seed", "4", "--truth-rate", "50"])
        #expect(sim.status == 0, "\(sim.err)")
        let run = CapturedRun(["calibrate", "--site", dir + "/site.json", "--trace", dir + "/trace.csv", "--truth", dir + "/truth.csv",
                               "--slope", "--out", dir + "/calibrated.json", "--json"])
        #expect(run.status == 0, "\(run.err)")
        let site = try SiteDecoder.decode(TestPaths.bytes(dir + "/calibrated.json"), file: "calibrated.json")
        for (l, (bias, slope)) in zip(site.floors[0].locators, zip(CalibrateCommandTests.biasesMeters, Self.slopes)) {
            #expect(abs(l.biasSlope - slope) <= 0.004, "\(l.address): slope \(l.biasSlope) vs \(slope)")
            #expect(abs(l.biasMeters - bias) <= 0.03, "\(l.address): bias \(l.biasMeters) vs \(bias)")
        }
        // The file holds the intercept (intercept_m, the error at distance 0), as --help and
        // docs/calibration.md say; bias_m (the fit at the mean distance) is another number.
        let summary = try JSONParser.parse(Array(run.out.utf8))
        let reported = try #require(summary["floors"]?.arrayValue?.first?["locators"]?.arrayValue)
        for (l, row) in zip(site.floors[0].locators, reported) {
            let intercept = try #require(row["intercept_m"]?.doubleValue)
            let atMean = try #require(row["bias_m"]?.doubleValue)
            #expect(abs(l.biasMeters - intercept) <= 0.00005, "\(l.address): biasM \(l.biasMeters) vs intercept_m \(intercept)")
            if abs(l.biasSlope) > 0.005 { #expect(abs(atMean - intercept) > 0.001, "\(l.address): bias_m \(atMean) equals the intercept") }
        }
        let help = CapturedRun(["calibrate", "--help"]).out
        #expect(help.contains("biasM = b, the intercept"))
        #expect(!help.contains("biasM is then the fit at the mean distance"))
        // Replayed on the calibrated site the raw fixes are as good as on the true one.
        let calibrated = try CalibrateCommandTests.replayRMSE(site: dir + "/calibrated.json", run: dir, ["--filter", "none"])
        let uncorrected = try CalibrateCommandTests.replayRMSE(site: dir + "/site.json", run: dir, ["--filter", "none", "--tag-offset", "off"])
        #expect(calibrated < 0.12, "calibrated \(calibrated)")
        #expect(calibrated < uncorrected, "calibrated \(calibrated) vs uncorrected \(uncorrected)")
    }

    @Test("biasSlope decodes, round-trips, is left out of sites that do not use it, and an absurd value is invalid input")
    func siteField() throws {
        let text = #"{"floors": [{"id": "F", "locators": [{"address": 1, "x": 0, "y": 0, "biasM": 0.1, "biasSlope": 0.02}]}]}"#
        let site = try SiteDecoder.decode(Array(text.utf8), file: "s.json")
        #expect(site.floors[0].locators[0].biasSlope == 0.02)
        #expect(abs(site.floors[0].locators[0].correctedRange(5.2) - 5.0) < 1e-12)
        #expect(try SiteDecoder.decode(SiteEncoder.encode(site), file: "again") == site)
        let plain = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        #expect(!String(decoding: SiteEncoder.encode(plain), as: UTF8.self).contains("biasSlope"))
        do {
            _ = try SiteDecoder.decode(Array(text.replacingOccurrences(of: "0.02", with: "0.9").utf8), file: "s.json")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .siteValueOutOfRange)
            #expect(error.context.jsonPath == "floors[0].locators[0].biasSlope")
        }
    }
}

@Suite("Range scale calibration on the recorded data")
struct RangeScaleRealDataTests {
    @Test("calibrated with --slope on static/, causal RMSE ≤ 6.5 cm on the fast run and ≤ 6 cm on mid, better than bias-only",
          .enabled(if: TestPaths.dataset("cuhksz-planar-uwb") != nil, "../shared/datasets/cuhksz-planar-uwb is not present"))
    func realDataWithSlope() throws {
        let d = try #require(TestPaths.dataset("cuhksz-planar-uwb"))
        let dir = TestPaths.temporaryDirectory()
        for (flag, out) in [([String](), dir + "/bias.json"), (["--slope"], dir + "/slope.json")] {
            let run = CapturedRun(["calibrate", "--site", d + "/static/site.json", "--trace", d + "/static/trace.csv",
                                   "--truth", d + "/static/truth.csv", "--out", out] + flag)
            #expect(run.status == 0, "\(run.err)")
        }
        for (directory, bound) in [(d, 0.065), (d + "/runs/mid", 0.060)] {
            let biasOnly = try CalibrateCommandTests.replayRMSE(site: dir + "/bias.json", run: directory, [])
            let withSlope = try CalibrateCommandTests.replayRMSE(site: dir + "/slope.json", run: directory, [])
            #expect(withSlope <= bound, "\(directory): \(withSlope)")
            #expect(withSlope < biasOnly, "\(directory): slope \(withSlope) vs bias only \(biasOnly)")
        }
    }
}
