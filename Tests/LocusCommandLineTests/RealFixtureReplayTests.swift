import Foundation
@testable import LocusCommandLine
@testable import LocusIO
import LocusTestSupport
import Testing

/// Replays the real recordings kept in the repository (Fixtures/real/, each with its README and licence;
/// docs/datasets.md): 30 s of the CUHK-SZ fast run, tags 1 and 2 (MIT), and one whole Hanyang outdoor NLOS
/// run (Apache-2.0). Unlike the tests on ../shared/datasets, these never skip: the data is in the repository.
@Suite("locus replay on the real fixture")
struct RealFixtureReplayTests {
    static let directory = TestPaths.fixture("real/cuhksz-planar-uwb-fast-tags12")

    /// Measured with this excerpt (docs/datasets.md): rmse_m raw 0.0899, causal 0.0939, smoothed 0.0844 (issue #42's soft long gate; 0.0942 and 0.0846 before);
    /// 218 fixes (109 per tag) in every mode. The bounds are those figures × 1.2.
    @Test("raw, causal and smoothed replays of the two-tag excerpt: every fix compared, rmse within 1.2 × the measured",
          arguments: [(["--filter", "none"], 0.0899), ([], 0.0939), (["--smooth"], 0.0844)])
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

    /// Measured with this run (docs/datasets.md), planar: rmse_m raw 2.6213 (565 fixes; a tag up to 28 m from a
    /// 2.6 m cluster of anchors gives single fixes tens of metres off), causal 0.3392 and smoothed 0.2626 (574 fixes).
    @Test("raw, causal and smoothed planar replays of the outdoor NLOS run: fix count, rmse within 1.2 × the measured",
          arguments: [(["--filter", "none"], 2.6213), ([], 0.3392), (["--smooth"], 0.2626)])
    func replayOutdoorRun(mode: [String], measuredRMSE: Double) throws {
        let d = TestPaths.fixture("real/hanyang-outdoor-uwb-nlos-b-case3")
        let run = CapturedRun(["replay", "--site", d + "/site.json", "--trace", d + "/trace.csv",
                               "--truth", d + "/truth.csv", "--json", "--mode", "planar"] + mode)
        #expect(run.status == 0, "\(mode): \(run.err)")
        let summary = try JSONParser.parse(Array(run.out.utf8))
        let fixes = try #require(summary["fixes"]?.intValue)
        // 175 s at 4 Hz is at most ~700; the ranges (each anchor at its own time, ~10 Hz) give ~570 epochs.
        #expect((540...620).contains(fixes), "\(mode): \(fixes) fixes")
        #expect(summary["compared"]?.intValue == fixes, "\(mode): every fix lies inside the truth")
        let rmse = try #require(summary["rmse_m"]?.doubleValue)
        #expect(rmse > 0.1, "\(mode): rmse \(rmse) is implausibly small for this run")
        #expect(rmse < measuredRMSE * 1.2, "\(mode): rmse \(rmse) m, measured \(measuredRMSE) m")
        #expect(summary["skipped"]?.members?.isEmpty == true, "\(mode): rows skipped: \(run.out)")
    }
}
