import Testing
@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSimulation
@testable import LocusSolvers
import LocusTestSupport

@Suite struct TrackSmootherTests {
    static func fixes(seed: UInt64, durationSeconds: Double = 120) -> (SimulatedRecording, [PositionFix]) {
        let rec = TrackFixture.recording(seed: seed, durationSeconds: durationSeconds)
        return (rec, RangeRounds.split(rec.ranges).compactMap { TrackFixture.leastSquaresFix($0, floor: rec.floor) })
    }

    @Test("RTS smoothed means equal the LAPACKE banded least-squares solution to 1e-9", arguments: [1, 2] as [UInt64])
    func rtsEqualsBanded(seed: UInt64) throws {
        let (_, fixes) = Self.fixes(seed: seed)
        let rts = try TrackSmoother.smooth(fixes)
        let banded = try TrackSmoother.smoothBanded(fixes)
        #expect(rts.count == banded.count)
        #expect(rts.count > 400)
        var worst = 0.0
        for (a, b) in zip(rts, banded) {
            worst = max(worst, abs(a.position.x - b.position.x), abs(a.position.y - b.position.y))
            worst = max(worst, abs((a.velocity?.x ?? 0) - (b.velocity?.x ?? 0)), abs((a.velocity?.y ?? 0) - (b.velocity?.y ?? 0)))
        }
        #expect(worst < 1e-9, "largest difference \(worst)")
    }

    @Test("The causal single-model filter's last state equals the batch (banded) solution over each prefix")
    func filteredLastEqualsBatchPrefix() throws {
        let (_, fixes) = Self.fixes(seed: 3, durationSeconds: 30)
        let config = TrackFilterConfiguration(coupling: .loose, processNoiseDensity: 0.3, usesInteractingModels: false,
                                              fixGateChiSquare: .infinity)
        var filter = TrackFilter(configuration: config, tag: "T1", floor: "1F", tagHeightMeters: 1.1)
        var nodes: [TrackSmoother.Node] = []
        for (k, f) in fixes.enumerated() {
            filter.update(fix: f)
            let c = f.covariance
            nodes.append(TrackSmoother.Node(
                timeSeconds: f.timeSeconds,
                measurement: .position(x: f.position.x, y: f.position.y, rxx: c.xx, rxy: c.xy, ryy: c.yy),
                prior: k == 0 ? KalmanState(px: f.position.x, py: f.position.y, positionSigmaMeters: config.initialPositionSigmaMeters,
                                            velocitySigmaMetersPerSecond: config.initialVelocitySigmaMetersPerSecond) : nil,
                processNoiseDensity: 0.3, isOutput: true))
            guard [1, 2, 10, 50, fixes.count - 1].contains(k), let state = filter.state else { continue }
            let batch = try TrackSmoother.smoothedMeansBanded(nodes)
            guard let last = batch.last else { Issue.record("empty batch"); return }
            for i in 0..<4 { #expect(abs(last[i] - state.x[i]) < 1e-9, "prefix \(k + 1), component \(i)") }
        }
    }

    @Test("Offline smoothed RMSE (tightly coupled) is at most 0.50 × the per-fix Cramér–Rao bound on the walks of TrackFilterTests",
          arguments: [1, 2, 3] as [UInt64])
    func smoothedBeatsBound(seed: UInt64) throws {
        let rec = TrackFixture.recording(seed: seed)
        let times = RangeRounds.split(rec.ranges).compactMap { $0.last?.timeSeconds }
        let smoothed = try TrackSmoother.smooth(ranges: rec.ranges, floor: rec.floor, outputTimesSeconds: times)
        let score = TrackFixture.score(smoothed, recording: rec)
        #expect(smoothed.count == times.count - 1 || smoothed.count == times.count)
        // Measured 0.395, 0.418, 0.436 (forward mode probabilities alone: 0.512, 0.521, 0.523).
        #expect(score.ratio <= 0.50, "RMSE \(score.rmseMeters) m vs CRB \(score.crbMeters) m")
    }

    /// The simulated scenarios of the tracking tests: coupling, NLOS probability.
    static let scenarios: [(TrackFilterConfiguration.Coupling, Double)] = [(.tight, 0), (.loose, 0), (.tight, 0.1), (.loose, 0.1)]

    @Test("Offline smoothed RMSE is at most 0.85 × the causal RMSE on every simulated scenario (tight, loose; clean, 10 % NLOS)",
          arguments: scenarios.indices, [1, 2, 3] as [UInt64])
    func smoothedBeatsCausal(scenario: Int, seed: UInt64) throws {
        let (coupling, nlos) = Self.scenarios[scenario]
        let rec = TrackFixture.recording(seed: seed, nlos: nlos)
        let configuration = TrackFilterConfiguration(coupling: coupling)
        let smoothed = try TrackFixture.smoothed(rec, configuration: configuration)
        let score = TrackFixture.score(smoothed, recording: rec)
        let causal = TrackFixture.score(TrackFixture.runCausal(rec, configuration: configuration), recording: rec)
        // Measured 0.51–0.63 (forward mode probabilities alone: 0.64–0.74).
        #expect(score.rmseMeters <= 0.85 * causal.rmseMeters,
                "\(coupling), NLOS \(nlos): smoothed \(score.rmseMeters) m vs causal \(causal.rmseMeters) m")
    }

    @Test("Smoothed mode probabilities follow the walker's manoeuvres better than the causal IMM's: μ_manoeuvring correlates more with the true acceleration")
    func smoothedModesSeeBothSides() throws {
        let rec = TrackFixture.recording(seed: 1)
        let config = TrackFilterConfiguration.standard
        let backward = TrackSmoother.backwardModeProbabilities(ranges: rec.ranges, floor: rec.floor, configuration: config)
        #expect(backward.count == rec.ranges.count)
        #expect(backward.allSatisfy { abs(($0[0] + $0[1]) + ($0[2] + $0[3]) - 1) < 1e-9 })
        // Smoothed vs forward μ_manoeuvring against the truth's acceleration: the smoothed one
        // correlates better with where the walker actually turns or changes speed.
        var forward: [Double] = [], smoothed: [Double] = [], acceleration: [Double] = []
        var filter = TrackFilter(configuration: TrackSmoother.forwardConfiguration(config), tag: "T1", floor: rec.floor.id,
                                 tagHeightMeters: rec.floor.tagHeightMeters)
        guard let walk = rec.walks.first?.walk else { Issue.record("no walk"); return }
        for (i, r) in rec.ranges.enumerated() {
            guard let l = rec.floor.locator(r.locator) else { continue }
            filter.update(range: r, locator: l)
            guard filter.state != nil, r.timeSeconds > 5 else { continue }
            let mu = filter.modeProbabilities
            forward.append(mu[2])
            smoothed.append(TrackSmoother.smoothedModeProbabilities(forward: mu, backward: backward[i])[2])
            let v0 = walk.velocity(atSeconds: r.timeSeconds - 0.25), v1 = walk.velocity(atSeconds: r.timeSeconds + 0.25)
            acceleration.append(((v1.x - v0.x) * (v1.x - v0.x) + (v1.y - v0.y) * (v1.y - v0.y)).squareRoot() / 0.5)
        }
        func correlation(_ a: [Double], _ b: [Double]) -> Double {
            let ma = a.reduce(0, +) / Double(a.count), mb = b.reduce(0, +) / Double(b.count)
            var sab = 0.0, saa = 0.0, sbb = 0.0
            for (x, y) in zip(a, b) { sab += (x - ma) * (y - mb); saa += (x - ma) * (x - ma); sbb += (y - mb) * (y - mb) }
            return sab / (saa * sbb).squareRoot()
        }
        let cf = correlation(forward, acceleration), cs = correlation(smoothed, acceleration)
        #expect(cs > cf + 0.05, "correlation with |a|: smoothed \(cs), forward \(cf)")
    }

    @Test("The sliding window mean equals the mean over |t_m − t_k| ≤ w computed directly, with repeated times and gaps (w = 0: the values)")
    func windowMeanMatchesDirect() {
        var rng = SeededGenerator(seed: 9)
        var times: [Double] = [], values: [SIMD4<Double>] = []
        var t = 0.0
        for k in 0..<5000 {
            t += k % 97 == 0 ? 3.0 : (k % 5 == 0 ? 0 : 0.01 * rng.nextUnit())
            times.append(t)
            values.append(SIMD4(rng.nextUnit(), rng.nextUnit(), rng.nextUnit(), 0))
        }
        #expect(TrackSmoother.windowMean(values, timesSeconds: times, halfWidthSeconds: 0) == values)
        for w in [0.005, 0.05, 1.0] {
            let fast = TrackSmoother.windowMean(values, timesSeconds: times, halfWidthSeconds: w)
            var worst = 0.0
            for k in stride(from: 0, to: values.count, by: 7) {
                var sum = SIMD4<Double>.zero, n = 0.0
                for m in values.indices where abs(times[m] - times[k]) <= w { sum += values[m]; n += 1 }
                let d = fast[k] - sum / n
                worst = max(worst, abs(d[0]), abs(d[1]), abs(d[2]), abs(d[3]))
            }
            #expect(worst < 1e-12, "w = \(w): largest difference \(worst)")
        }
    }

    @Test("Smoothed covariance is never larger than the filtered one, and every number is finite")
    func smoothedCovarianceShrinks() throws {
        let rec = TrackFixture.recording(seed: 5, durationSeconds: 60)
        let times = RangeRounds.split(rec.ranges).compactMap { $0.last?.timeSeconds }
        let nodes = TrackSmoother.nodes(ranges: rec.ranges, floor: rec.floor, outputTimesSeconds: times, configuration: .standard)
        let smoothed = try TrackSmoother.smoothStates(nodes, tagHeightMeters: 1.1, configuration: .standard)
        #expect(smoothed.allSatisfy { $0.isFinite })
        let fixes = try TrackSmoother.smooth(ranges: rec.ranges, floor: rec.floor, outputTimesSeconds: times)
        #expect(fixes.allSatisfy { $0.position.isFinite && $0.covariance.isFinite && $0.horizontalAccuracyMeters > 0 })
    }

    @Test("The banded solve refuses nonlinear range nodes and zero time steps with E1003")
    func bandedRefusesRanges() {
        let prior = KalmanState(px: 0, py: 0, positionSigmaMeters: 1, velocitySigmaMetersPerSecond: 1)
        let ranges = [TrackSmoother.Node(timeSeconds: 0, measurement: .range(anchor: Point3(x: 0, y: 0, z: 2), rangeMeters: 3),
                                         prior: prior, processNoiseDensity: 1, isOutput: true)]
        #expect(throws: LocusError.self) { try TrackSmoother.smoothedMeansBanded(ranges) }
        let repeated = [TrackSmoother.Node(timeSeconds: 0, measurement: .none, prior: prior, processNoiseDensity: 1, isOutput: true),
                        TrackSmoother.Node(timeSeconds: 0, measurement: .none, prior: nil, processNoiseDensity: 1, isOutput: true)]
        do {
            _ = try TrackSmoother.smoothedMeansBanded(repeated)
            Issue.record("expected E1003")
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }
}
