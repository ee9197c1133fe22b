import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// Replays the real recordings kept in the repository (Fixtures/real/, each with its README and licence;
/// docs/datasets.md): 30 s of the CUHK-SZ fast run, tags 1 and 2 (MIT), and one whole Hanyang outdoor NLOS
/// run (Apache-2.0). Unlike the tests on ../shared/datasets, these never skip: the data is in the repository.
@Suite("locus replay on the real fixture")
struct RealFixtureReplayTests {
    static let directory = TestPaths.fixture("real/cuhksz-planar-uwb-fast-tags12")

    /// Measured with this excerpt (docs/datasets.md): rmse_m raw 0.0899, causal 0.0903, smoothed 0.0839 (issue #42's range
    /// variance from the innovations; 0.0939 and 0.0844 with the soft long gate, 0.0942 and 0.0846 before it);
    /// 218 fixes (109 per tag) in every mode. The bounds are those figures × 1.2.
    @Test("raw, causal and smoothed replays of the two-tag excerpt: every fix compared, rmse within 1.2 × the measured",
          arguments: [(["--filter", "none"], 0.0899), ([], 0.0903), (["--smooth"], 0.0839)])
    func replayExcerpt(mode: [String], measuredRMSE: Double) throws {
        // 30 s at 4 Hz for 2 tags is at most 240; the 25 Hz excerpt gives ~109 epochs a tag.
        let summary = try Self.replay(Self.directory, mode, fixes: 200...240, rmseAbove: 0.02, measuredRMSE: measuredRMSE)
        for tag in ["tag1", "tag2"] {
            let perTag = try #require(summary["per_tag"]?[tag], "\(mode): no per_tag entry for \(tag)")
            #expect((perTag["fixes"]?.intValue ?? 0) >= 100, "\(mode): \(tag)")
        }
    }

    /// Measured with this run (docs/datasets.md), planar: rmse_m raw 2.6213 (565 fixes; a tag up to 28 m from a
    /// 2.6 m cluster of anchors gives single fixes tens of metres off), causal 0.3392 and smoothed 0.2626 (574 fixes).
    @Test("raw, causal and smoothed planar replays of the outdoor NLOS run: fix count, rmse within 1.2 × the measured",
          arguments: [(["--filter", "none"], 2.6213), ([], 0.3392), (["--smooth"], 0.2626)])
    func replayOutdoorRun(mode: [String], measuredRMSE: Double) throws {
        // 175 s at 4 Hz is at most ~700; the ranges (each anchor at its own time, ~10 Hz) give ~570 epochs.
        try Self.replay(TestPaths.fixture("real/hanyang-outdoor-uwb-nlos-b-case3"), ["--mode", "planar"] + mode,
                            fixes: 540...620, rmseAbove: 0.1, measuredRMSE: measuredRMSE)
    }

    /// `locus replay --json` of the recording in `directory` with `options`, and the checks both recordings
    /// share: exit 0, a fix count in `fixes`, every fix compared with the truth, rmse_m above `rmseAbove`
    /// (anything less is implausible for real ranges) and below 1.2 × `measuredRMSE`, no row skipped.
    /// Returns the summary.
    @discardableResult
    static func replay(_ directory: String, _ options: [String], fixes expected: ClosedRange<Int>, rmseAbove floor: Double,
                       measuredRMSE: Double) throws -> JSONValue {
        let run = CapturedRun(["replay", "--site", directory + "/site.json", "--trace", directory + "/trace.csv",
                               "--truth", directory + "/truth.csv", "--json"] + options)
        #expect(run.status == 0, "\(options): \(run.err)")
        let summary = try JSONParser.parse(Array(run.out.utf8))
        let fixes = try #require(summary["fixes"]?.intValue)
        #expect(expected.contains(fixes), "\(options): \(fixes) fixes")
        #expect(summary["compared"]?.intValue == fixes, "\(options): every fix lies inside the truth")
        let rmse = try #require(summary["rmse_m"]?.doubleValue)
        #expect(rmse > floor, "\(options): rmse \(rmse) is implausibly small for these ranges")
        #expect(rmse < measuredRMSE * 1.2, "\(options): rmse \(rmse) m, measured \(measuredRMSE) m")
        #expect(summary["skipped"]?.members?.isEmpty == true, "\(options): rows skipped: \(run.out)")
        return summary
    }
}
