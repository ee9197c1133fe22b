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
    // Accepted, with the same figures and the site --out writes: CalibrateHoldoutTests.withoutTruthAccepted.

    /// The trace's ranges, as a Swift client reads them.
    static func ranges(_ path: String) throws -> [RangeMeasurement] {
        try TraceReader.read(path: path).measurements.compactMap { m -> RangeMeasurement? in
            if case .range(let r) = m { return r } else { return nil }
        }
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
