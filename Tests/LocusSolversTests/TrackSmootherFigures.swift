import Foundation
import Testing
import LocusCore
import LocusSimulation
@testable import LocusSolvers

/// The smoother's accuracy figures for docs/benchmarks.md (`scripts/bench-smoother`): run only when
/// LOCUS_SMOOTHER_FIGURES names a file, which receives one JSON object — per simulated scenario of
/// the tracking tests and seed, the causal and smoothed RMSE over the per-fix Cramér–Rao bound and
/// smoothed over causal. The accuracy targets themselves are asserted in TrackSmootherTests.
@Suite struct TrackSmootherFigures {
    static let path = ProcessInfo.processInfo.environment["LOCUS_SMOOTHER_FIGURES"]

    @Test("Writes the smoother's figures on the simulated walks (LOCUS_SMOOTHER_FIGURES=FILE)",
          .enabled(if: path != nil, "LOCUS_SMOOTHER_FIGURES is not set"))
    func writeFigures() throws {
        let path = try #require(Self.path)
        var scenarios: [String] = []
        for (name, coupling, nlos) in [("tight IMM", TrackFilterConfiguration.Coupling.tight, 0.0), ("loose IMM", .loose, 0),
                                       ("tight IMM, 10 % NLOS", .tight, 0.1), ("loose IMM, 10 % NLOS", .loose, 0.1)] {
            var causalRatios: [String] = [], smoothedRatios: [String] = [], versusCausal: [String] = []
            for seed in [1, 2, 3] as [UInt64] {
                let rec = TrackFixture.recording(seed: seed, nlos: nlos)
                let configuration = TrackFilterConfiguration(coupling: coupling)
                let smoothed = try TrackFixture.smoothed(rec, configuration: configuration)
                let s = TrackFixture.score(smoothed, recording: rec)
                let c = TrackFixture.score(TrackFixture.runCausal(rec, configuration: configuration), recording: rec)
                causalRatios.append(String(format: "%.4f", c.ratio))
                smoothedRatios.append(String(format: "%.4f", s.ratio))
                versusCausal.append(String(format: "%.4f", s.rmseMeters / c.rmseMeters))
            }
            scenarios.append("{\"scenario\":\"\(name)\",\"seeds\":[1,2,3],\"causal_over_crb\":[\(causalRatios.joined(separator: ","))],"
                             + "\"smoothed_over_crb\":[\(smoothedRatios.joined(separator: ","))],"
                             + "\"smoothed_over_causal\":[\(versusCausal.joined(separator: ","))]}")
        }
        let json = "{\"simulated\":[\(scenarios.joined(separator: ","))]}\n"
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
    }
}
