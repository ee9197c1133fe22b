import Testing
import LocusCore
import LocusSimulation
@testable import LocusSolvers

@Suite struct TrackTuningTests {
    @Test("print figures for tuning")
    func figures() {
        for q in [0.05, 0.1, 0.2, 0.5, 1.0] {
            for coupling in [TrackFilterConfiguration.Coupling.tight, .loose] {
                var ratios: [Double] = []
                for seed in [1, 2, 3] as [UInt64] {
                    let rec = TrackFixture.recording(seed: seed)
                    let cfg = TrackFilterConfiguration(coupling: coupling, processNoiseDensity: q)
                    let s = TrackFixture.score(TrackFixture.runCausal(rec, configuration: cfg), recording: rec)
                    ratios.append(s.ratio)
                }
                print("q=\(q) \(coupling) ratios \(ratios)")
            }
        }
    }
}
