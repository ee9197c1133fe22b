import Foundation
import Locus
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// The Swift API's calibration without truth is judged on held-out blocks by the same code as
/// `locus calibrate` (`SiteCalibration.calibrate`): the same figures, the same verdict, and a
/// refused fit is not handed out as the site to use.
@Suite("SiteCalibration.withoutTruth: held-out validation, as locus calibrate")
struct SiteCalibrationValidationTests {
    /// The trace's ranges, as a Swift client reads them.
    static func ranges(_ path: String) throws -> [RangeMeasurement] {
        try TraceReader.read(path: path).measurements.compactMap { m -> RangeMeasurement? in
            if case .range(let r) = m { return r } else { return nil }
        }
    }

    @Test("simulated biases: the API's held-out figures and verdict are locus calibrate's (accepted), and its site is the one --out writes")
    func acceptedAsTheCommandLine() throws {
        let dir = TestPaths.temporaryDirectory()
        let files = try CalibrateWithoutTruthTests.recording(in: dir, calibrating: CalibrateWithoutTruthTests.site(biases: Array(repeating: 0, count: 6)))
        let run = CapturedRun(["calibrate", "--site", files.site, "--trace", files.trace, "--out", dir + "/cal.json", "--json"])
        #expect(run.status == 0, "\(run.err)")
        let cli = try CalibrateHoldoutTests.validation(run)
        let site = try SiteDecoder.load(path: files.site)
        let report = try SiteCalibration.withoutTruth(site: site, ranges: Self.ranges(files.trace))
        let v = try #require(report.validation)
        #expect(v.judged && v.accepted && v.refused == nil && v.metric == .medianAbsoluteResidual)
        let (before, after) = try CalibrateHoldoutTests.figures(cli)
        let surveyed = try #require(v.surveyed), calibrated = try #require(v.calibrated)
        #expect(abs(surveyed - before) < 1e-4 && abs(calibrated - after) < 1e-4, "API \(surveyed) → \(calibrated), CLI \(before) → \(after)")
        #expect(v.scored == cli["scored"]?.intValue && v.blocks == cli["blocks"]?.intValue && v.heldOutRows == cli["held_out_rows"]?.intValue)
        #expect(v.text.contains("calibrated vs as surveyed on held-out blocks") && v.text.hasSuffix(": accepted\n"), "\(v.text)")
        // The site to use is the fit, byte for byte the site `--out` wrote.
        #expect(report.site == report.fittedSite)
        let notation = try SiteDecoder.loadNotated(path: files.site).addressNotation
        #expect(SiteEncoder.encode(report.site, addressNotation: notation) == TestPaths.bytes(dir + "/cal.json"))
    }

    @Test("the hall's own, correct site from 120 s: not shown better, as locus calibrate says; report.site is the site as given, fittedSite the fit; holdoutBlockSeconds nil gives the fit unjudged")
    func unprovenKeepsTheSite() throws {
        let dir = TestPaths.temporaryDirectory()
        let sitePath = TestPaths.fixture("sites/hall.json")
        let sim = CapturedRun(["simulate", "--site", sitePath, "--trace", dir + "/t.csv", "--truth", dir + "/truth.csv",
                               "--duration", "120", "--seed", "17", "--random-walk"])
        #expect(sim.status == 0, "\(sim.err)")
        let run = CapturedRun(["calibrate", "--site", sitePath, "--trace", dir + "/t.csv", "--json"])
        let cli = try CalibrateHoldoutTests.validation(run)
        #expect(cli["refused"]?.stringValue == "unproven", "\(cli)")
        let site = try SiteDecoder.load(path: sitePath)
        let ranges = try Self.ranges(dir + "/t.csv")
        let report = try SiteCalibration.withoutTruth(site: site, ranges: ranges)
        let v = try #require(report.validation)
        #expect(!v.accepted && v.refused == .unproven, "\(v.text)")
        #expect(v.reason == cli["reason"]?.stringValue)
        #expect(report.site == site)
        #expect(report.fittedSite != site)
        var options = SiteCalibration.Options()
        options.holdoutBlockSeconds = nil
        let unjudged = try SiteCalibration.withoutTruth(site: site, ranges: ranges, options: options)
        #expect(unjudged.validation == nil && unjudged.site == unjudged.fittedSite && unjudged.site == report.fittedSite)
    }

    @Test("a block length that is not finite and positive is E1003")
    func badBlock() throws {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        for bad in [0.0, -1, .nan, .infinity] {
            var options = SiteCalibration.Options()
            options.holdoutBlockSeconds = bad
            #expect(throws: LocusError.self) { try SiteCalibration.withoutTruth(site: site, ranges: [], options: options) }
            do { _ = try SiteCalibration.withoutTruth(site: site, ranges: [], options: options) } catch { #expect(error.code == .invalidArgument) }
        }
    }
}
