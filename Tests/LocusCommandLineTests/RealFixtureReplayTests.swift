import Foundation
@testable import LocusCommandLine
@testable import LocusIO
import LocusTestSupport
import Testing

/// Replays the real-data excerpt kept in the repository (Fixtures/real/cuhksz-planar-uwb-fast-tags12:
/// 30 s of the CUHK-SZ fast run, tags 1 and 2, MIT licence; see its README and docs/datasets.md).
/// Unlike the tests on ../shared/datasets, this one never skips: the data is in the repository.
@Suite("locus replay on the real fixture")
struct RealFixtureReplayTests {
    static let directory = TestPaths.fixture("real/cuhksz-planar-uwb-fast-tags12")

    /// Measured with this excerpt (docs/datasets.md): rmse_m raw 0.0899, causal 0.0942, smoothed 0.0846;
    /// 218 fixes (109 per tag) in every mode. The bounds are those figures × 1.2.
    @Test("raw, causal and smoothed replays of the two-tag excerpt: every fix compared, rmse within 1.2 × the measured",
          arguments: [(["--filter", "none"], 0.0899), ([], 0.0942), (["--smooth"], 0.0846)])
    func replayExcerpt(mode: [String], measuredRMSE: Double) throws {
        let d = Self.directory
        let run = CapturedRun(["replay", "--site", d + "/site.json", "--trace", d + "/trace.csv",
                               "--truth", d + "/truth.csv", "--json"] + mode)
        #expect(run.status == 0, "\(mode): \(run.err)")
        let summary = try JSONParser.parse(Array(run.out.utf8))
        let fixes = try #require(summary["fixes"]?.intValue)
        // 30 s at 4 Hz for 2 tags is at most 240; the 25 Hz excerpt gives ~109 epochs a tag.
        #expect((200...240).contains(fixes), "\(mode): \(fixes) fixes")
        #expect(summary["compared"]?.intValue == fixes, "\(mode): every fix lies inside the truth")
        let rmse = try #require(summary["rmse_m"]?.doubleValue)
        #expect(rmse > 0.02, "\(mode): rmse \(rmse) is implausibly small for these ranges")
        #expect(rmse < measuredRMSE * 1.2, "\(mode): rmse \(rmse) m, measured \(measuredRMSE) m")
        for tag in ["tag1", "tag2"] {
            let perTag = try #require(summary["per_tag"]?[tag], "\(mode): no per_tag entry for \(tag)")
            #expect((perTag["fixes"]?.intValue ?? 0) >= 100, "\(mode): \(tag)")
        }
        #expect(summary["skipped"]?.members?.isEmpty == true, "\(mode): rows skipped: \(run.out)")
    }
}
