import Testing
import LocusCore
import LocusSimulation
@testable import LocusSolvers

@Suite struct TrackTuningTests {
    @Test("print figures for tuning")
    func figures() {
        for (name, cfg, nlos) in [("tight", TrackFilterConfiguration.standard, 0.0),
                                  ("loose", TrackFilterConfiguration(coupling: .loose), 0.0),
                                  ("single-tight", TrackFilterConfiguration(usesInteractingModels: false), 0.0),
                                  ("single-loose", TrackFilterConfiguration(coupling: .loose, usesInteractingModels: false), 0.0),
                                  ("tight nlos", TrackFilterConfiguration.standard, 0.1),
                                  ("tight nlos g2", TrackFilterConfiguration(rangeGateLongSigmas: 2.0), 0.1),
                                  ("loose nlos", TrackFilterConfiguration(coupling: .loose), 0.1)] {
            var ratios: [Double] = []
            for seed in [1, 2, 3] as [UInt64] {
                let rec = TrackFixture.recording(seed: seed, nlos: nlos)
                let s = TrackFixture.score(TrackFixture.runCausal(rec, configuration: cfg), recording: rec)
                ratios.append((s.ratio * 1000).rounded() / 1000)
            }
            print("\(name) ratios \(ratios)")
        }
    }
}
