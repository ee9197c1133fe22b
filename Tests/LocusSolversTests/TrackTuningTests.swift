import Testing
import LocusCore
import LocusSimulation
@testable import LocusSolvers

@Suite struct TrackTuningTests {
    @Test("print figures for tuning")
    func figures() {
        for (lo, hi, rate) in [(0.002, 1.0, 0.2), (0.002, 1.0, 0.1), (0.005, 1.0, 0.2), (0.001, 1.0, 0.1), (0.002, 0.5, 0.3)] {
            for coupling in [TrackFilterConfiguration.Coupling.tight] {
                var ratios: [Double] = []
                var parts = ""
                for seed in [1, 2, 3] as [UInt64] {
                    let rec = TrackFixture.recording(seed: seed)
                    let cfg = TrackFilterConfiguration(coupling: coupling, lowProcessNoiseDensity: lo, highProcessNoiseDensity: hi, modeSwitchesPerSecond: rate)
                    let fixes = TrackFixture.runCausal(rec, configuration: cfg)
                    let s = TrackFixture.score(fixes, recording: rec)
                    ratios.append((s.ratio * 1000).rounded() / 1000)
                    if let walk = rec.walks.first?.walk {
                        var still = 0.0, ns = 0.0, move = 0.0, nm = 0.0
                        for f in fixes.dropFirst(8) {
                            let p = walk.position(atSeconds: f.timeSeconds)
                            let e2 = (f.position.x - p.x) * (f.position.x - p.x) + (f.position.y - p.y) * (f.position.y - p.y)
                            if walk.velocity(atSeconds: f.timeSeconds).horizontalNorm < 0.01 { still += e2; ns += 1 } else { move += e2; nm += 1 }
                        }
                        parts += " still \(Int(ns)) \((still / ns).squareRoot()) move \((move / nm).squareRoot()) crb \(s.crbMeters);"
                    }
                }
                print("lo=\(lo) hi=\(hi) rate=\(rate) \(coupling) ratios \(ratios) \(parts)")
            }
        }
    }
}
