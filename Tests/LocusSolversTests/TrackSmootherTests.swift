import Testing
import LocusCore
import LocusNumerics
import LocusSimulation
@testable import LocusSolvers

@Suite struct TrackSmootherTests {
    static func fixes(seed: UInt64, durationSeconds: Double = 120) -> (SimulatedRecording, [PositionFix]) {
        let rec = TrackFixture.recording(seed: seed, durationSeconds: durationSeconds)
        return (rec, TrackFixture.rounds(rec.ranges).compactMap { TrackFixture.leastSquaresFix($0, floor: rec.floor) })
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

    @Test("Offline smoothed RMSE (tightly coupled) is at most 0.55 × the per-fix Cramér–Rao bound", arguments: [1, 2, 3] as [UInt64])
    func smoothedBeatsBound(seed: UInt64) throws {
        let rec = TrackFixture.recording(seed: seed)
        let times = TrackFixture.rounds(rec.ranges).compactMap { $0.last?.timeSeconds }
        let smoothed = try TrackSmoother.smooth(ranges: rec.ranges, floor: rec.floor, outputTimesSeconds: times)
        let score = TrackFixture.score(smoothed, recording: rec)
        #expect(smoothed.count == times.count - 1 || smoothed.count == times.count)
        #expect(score.ratio <= 0.55, "RMSE \(score.rmseMeters) m vs CRB \(score.crbMeters) m")
        let causal = TrackFixture.score(TrackFixture.runCausal(rec, configuration: .standard), recording: rec)
        #expect(score.rmseMeters < causal.rmseMeters)
    }

    @Test("Smoothed covariance is never larger than the filtered one, and every number is finite")
    func smoothedCovarianceShrinks() throws {
        let rec = TrackFixture.recording(seed: 5, durationSeconds: 60)
        let times = TrackFixture.rounds(rec.ranges).compactMap { $0.last?.timeSeconds }
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
