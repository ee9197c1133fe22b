import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSolvers

/// The IMM kernel (`locus_imm.c`: four-lane vectors, packed covariances, standard-form updates)
/// against an independent textbook IMM written here with the Joseph-form 4×4 kernels of
/// `locus_kalman.c` and explicit mixing, and the once-per-round interaction against interaction at
/// every range.
@Suite struct InteractingModelsTests {
    /// Textbook IMM: mixing at every prediction, μ updated after every measurement (floor 1e-9).
    struct Reference {
        var models: [KalmanState]
        var mu: [Double] = [0.25, 0.25, 0.25, 0.25]
        var t: Double
        let c: TrackFilterConfiguration

        init(_ s: KalmanState, t: Double, configuration: TrackFilterConfiguration) {
            models = [s, s, s, s]
            self.t = t
            c = configuration
        }

        static func mix(_ m: [KalmanState], _ w: [Double]) -> KalmanState {
            var x = SIMD4<Double>.zero
            for i in 0..<4 { x += w[i] * m[i].x }
            var p = SIMD16<Double>.zero
            for i in 0..<4 {
                let d = m[i].x - x
                var outer = SIMD16<Double>.zero
                for r in 0..<4 { for k in 0..<4 { outer[4 * r + k] = d[r] * d[k] } }
                p += w[i] * (m[i].p + outer)
            }
            return KalmanState(x: x, p: p)
        }

        mutating func predict(to t1: Double) {
            let dt = t1 - t
            let p = 1 - exp(-c.modeSwitchesPerSecond * dt), stay = 1 - p, move = p / 3
            var cj: [Double] = []
            for j in 0..<4 {
                var sum = 0.0
                for i in 0..<4 { sum += (i == j ? stay : move) * mu[i] }
                cj.append(sum)
            }
            var mixed: [KalmanState] = []
            for j in 0..<4 {
                var w: [Double] = []
                for i in 0..<4 { w.append((i == j ? stay : move) * mu[i] / cj[j]) }
                mixed.append(Self.mix(models, w))
            }
            _ = KalmanKernels.predictStill(&mixed[0], overSeconds: dt, positionNoiseDensity: c.stillPositionNoiseDensity,
                                           velocityVarianceSquareMetersPerSecondSquared: c.stillVelocitySigmaMetersPerSecond * c.stillVelocitySigmaMetersPerSecond)
            _ = KalmanKernels.predict(&mixed[1], overSeconds: dt, processNoiseDensity: c.lowProcessNoiseDensity)
            _ = KalmanKernels.predict(&mixed[2], overSeconds: dt, processNoiseDensity: c.highProcessNoiseDensity)
            _ = KalmanKernels.predict(&mixed[3], overSeconds: dt, processNoiseDensity: c.agileProcessNoiseDensity)
            models = mixed
            let total = cj.reduce(0, +)
            mu = cj.map { $0 / total }
            t = t1
        }

        mutating func update(anchor: Point3, h: Double, r: Double, variance: Double) {
            var l: [Double] = []
            for j in 0..<4 {
                var i = KalmanInnovation()
                _ = KalmanKernels.updateRange(&models[j], anchor: anchor, tagHeightMeters: h, rangeMeters: r, varianceSquareMeters: variance,
                                              gateLong: .infinity, gateShort: .infinity, innovation: &i)
                l.append(exp(-0.5 * i.statistic * i.statistic) / i.innovationVariance.squareRoot())
            }
            let w = (0..<4).map { mu[$0] * l[$0] }
            let total = w.reduce(0, +)
            var m = w.map { max($0 / total, 1e-9) }
            let sum = m.reduce(0, +)
            m = m.map { $0 / sum }
            mu = m
        }

        var combined: KalmanState { Self.mix(models, mu) }
    }

    @Test("With interaction at every prediction the kernel equals a textbook Joseph-form IMM to 1e-9 over 400 ranges")
    func kernelMatchesTextbook() {
        var configuration = TrackFilterConfiguration.standard
        configuration.interactionIntervalSeconds = 0
        let shared = TrackFilterConfiguration.Shared(configuration)
        let anchors = [Point3(x: 0, y: 0, z: 2.6), Point3(x: 20, y: 0, z: 2.6), Point3(x: 40, y: 25, z: 2.6), Point3(x: 0, y: 25, z: 2.5)]
        var rng = SeededGenerator(seed: 11)
        let start = KalmanState(px: 10, py: 8, vx: 0.3, vy: -0.2, positionSigmaMeters: 0.3, velocitySigmaMetersPerSecond: 1)
        var imm = InteractingModels()
        imm.reset(to: start, atSeconds: 0)
        var reference = Reference(start, t: 0, configuration: configuration)
        var t = 0.0, px = 10.0, py = 8.0
        var worstX = 0.0, worstP = 0.0, worstMu = 0.0
        for k in 0..<400 {
            t += 0.02 + 0.05 * rng.nextUnit()
            px += 0.9 * 0.03 * (k % 100 < 50 ? 1 : -1); py += 0.4 * 0.03
            let a = anchors[k % anchors.count]
            let r = ((px - a.x) * (px - a.x) + (py - a.y) * (py - a.y) + (1.1 - a.z) * (1.1 - a.z)).squareRoot() + 0.1 * (rng.nextUnit() - 0.5)
            #expect(imm.predict(toSeconds: t, parameters: shared.interactingModels) == .accepted)
            reference.predict(to: t)
            var innovation = KalmanInnovation()
            let (outcome, _) = imm.updateRange(anchor: a, tagHeightMeters: 1.1, rangeMeters: r, varianceSquareMeters: 0.01,
                                               gateLong: .infinity, gateShort: .infinity, innovation: &innovation)
            #expect(outcome == .accepted)
            reference.update(anchor: a, h: 1.1, r: r, variance: 0.01)
            let mine = imm.combined, theirs = reference.combined
            for i in 0..<4 { worstX = max(worstX, abs(mine.x[i] - theirs.x[i])) }
            for i in 0..<16 { worstP = max(worstP, abs(mine.p[i] - theirs.p[i]) / max(1e-6, abs(theirs.p[i]))) }
            let mu = imm.probabilities
            for j in 0..<4 { worstMu = max(worstMu, abs(mu[j] - reference.mu[j])) }
        }
        #expect(worstX < 1e-9, "mean differs by \(worstX)")
        #expect(worstP < 1e-7, "covariance differs by \(worstP) relative")
        #expect(worstMu < 1e-9, "model probabilities differ by \(worstMu)")
    }

    @Test("Interaction once per ranging round is as accurate as interaction at every range (within 2 %)", arguments: [UInt64(1), 2, 3])
    func oncePerRoundIsAsAccurate(seed: UInt64) {
        let rec = TrackFixture.recording(seed: seed, nlos: 0.05)
        var everyRange = TrackFilterConfiguration.standard
        everyRange.interactionIntervalSeconds = 0
        let round = TrackFixture.score(TrackFixture.runCausal(rec, configuration: .standard), recording: rec)
        let every = TrackFixture.score(TrackFixture.runCausal(rec, configuration: everyRange), recording: rec)
        #expect(round.rmseMeters <= every.rmseMeters * 1.02, "once per round \(round.rmseMeters) m, every range \(every.rmseMeters) m")
    }

    @Test("A gated range changes nothing; a range that would make the covariance non-finite is refused")
    func gateAndFailure() {
        var imm = InteractingModels()
        imm.reset(to: KalmanState(px: 5, py: 5, positionSigmaMeters: 0.1, velocitySigmaMetersPerSecond: 0.5), atSeconds: 0)
        let before = imm.combined
        var innovation = KalmanInnovation()
        let (gated, _) = imm.updateRange(anchor: Point3(x: 0, y: 0, z: 2.6), tagHeightMeters: 1.1, rangeMeters: 30, varianceSquareMeters: 0.01,
                                         gateLong: 2.5, gateShort: 4, innovation: &innovation)
        #expect(gated == .gated)
        #expect(imm.combined == before)
        #expect(innovation.statistic > 2.5)
        let (onLocator, _) = imm.updateRange(anchor: Point3(x: 5, y: 5, z: 1.1), tagHeightMeters: 1.1, rangeMeters: 1, varianceSquareMeters: 0.01,
                                             gateLong: 9, gateShort: 9, innovation: &innovation)
        #expect(onLocator == .invalidArgument)
        #expect(imm.combined == before)
        let parameters = TrackFilterConfiguration.Shared(.standard).interactingModels
        #expect(imm.predict(toSeconds: .infinity, parameters: parameters) == .invalidArgument)
        #expect(imm.predict(toSeconds: 1e300, parameters: parameters) != .accepted)
    }
}
