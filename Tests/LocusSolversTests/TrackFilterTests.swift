import Testing
@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSimulation
@testable import LocusSolvers
import LocusTestSupport

@Suite struct TrackFilterTests {
    static let seeds: [UInt64] = [1, 2, 3]

    @Test("Tightly coupled causal RMSE is at most 0.80 × the per-fix Cramér–Rao bound on simulated walks", arguments: seeds)
    func causalBeatsBound(seed: UInt64) {
        let rec = TrackFixture.recording(seed: seed)
        let score = TrackFixture.score(TrackFixture.runCausal(rec, configuration: .standard), recording: rec)
        #expect(score.fixes > 900)
        #expect(score.ratio <= 0.80, "RMSE \(score.rmseMeters) m vs CRB \(score.crbMeters) m")
    }

    @Test("Loosely coupled (LS fixes + IMM) causal RMSE is also at most 0.80 × the per-fix bound", arguments: seeds)
    func looseBeatsBound(seed: UInt64) {
        let rec = TrackFixture.recording(seed: seed)
        let score = TrackFixture.score(TrackFixture.runCausal(rec, configuration: TrackFilterConfiguration(coupling: .loose)),
                                       recording: rec)
        #expect(score.ratio <= 0.80, "RMSE \(score.rmseMeters) m vs CRB \(score.crbMeters) m")
    }

    @Test("A textbook single-model filter does not reach the bound: the IMM is what gets below 0.80")
    func singleModelIsWorse() {
        let rec = TrackFixture.recording(seed: 1)
        let single = TrackFixture.score(TrackFixture.runCausal(rec, configuration: TrackFilterConfiguration(usesInteractingModels: false)),
                                        recording: rec)
        #expect(single.ratio > 0.80)
    }

    @Test("With 10 % NLOS ranges (+0.3…2.5 m) causal RMSE stays within 1.3 × the clean per-fix bound", arguments: seeds)
    func nlosRobust(seed: UInt64) {
        let rec = TrackFixture.recording(seed: seed, nlos: 0.1)
        let score = TrackFixture.score(TrackFixture.runCausal(rec, configuration: .standard), recording: rec)
        #expect(score.ratio <= 1.3, "RMSE \(score.rmseMeters) m vs CRB \(score.crbMeters) m")
    }

    @Test("Ranges 1 m long are gated while the track holds; the rest still update it")
    func nlosRangeIsGated() {
        let floor = TrackFixture.floor()
        let settled = TrackFixture.settledStillFilter(floor: floor, seed: 5)
        var filter = settled.filter
        let p = settled.position
        _ = filter.closeEpoch(atSeconds: 10)
        let l = floor.locators[0]
        let before = filter.state
        let outcome = filter.update(range: RangeMeasurement(timeSeconds: 10.1, tag: "T1", locator: l.address,
                                                            rangeMeters: p.distance(to: l.position) + 1.0), locator: l)
        #expect(outcome == .gated)
        #expect(filter.stateSeconds == 10.1)
        #expect(before != nil)
        let fix = filter.currentFix
        let error = fix.map { $0.position.horizontal.distance(to: p.horizontal) } ?? .infinity
        #expect(error < 0.1, "error \(error) m")
        #expect(fix.map { $0.quality.rejected.totalCount == 1 } == true)
    }

    @Test("After a 10 s outage the track re-acquires within 2 fixes, the reported accuracy grows, and the mean does not drift")
    func outageReacquires() {
        var rec = TrackFixture.recording(seed: 4, durationSeconds: 160)
        rec.ranges.removeAll { $0.timeSeconds >= 100 && $0.timeSeconds < 110 }
        let floor = rec.floor
        var filter = TrackFilter(tag: "T1", floor: floor.id, tagHeightMeters: floor.tagHeightMeters)
        guard let walk = rec.walk(of: "T1") else { Issue.record("no walk"); return }
        var accuracies: [Double] = []
        var positions: [Point2] = []
        var after: [Double] = []
        let rounds = RangeRounds.split(rec.ranges)
        var outageSampled = false
        for round in rounds {
            guard let t = round.last?.timeSeconds else { continue }
            if t > 110, !outageSampled {
                outageSampled = true
                for k in 0..<40 {
                    if let f = filter.fix(atSeconds: 100 + 0.25 * Double(k)) {
                        accuracies.append(f.horizontalAccuracyMeters)
                        positions.append(f.position.horizontal)
                    }
                }
            }
            for r in round { if let l = floor.locator(r.locator) { filter.update(range: r, locator: l) } }
            if t > 110, let f = filter.closeEpoch(atSeconds: t), after.count < 2 {
                after.append(f.position.horizontal.distance(to: walk.position(atSeconds: t)))
            }
        }
        #expect(accuracies.count == 40)
        for (a, b) in zip(accuracies, accuracies.dropFirst()) { #expect(b > a) }
        #expect((accuracies.last ?? 0) > 1.0)
        // No drift: the reported mean stops moving after the coast horizon (1 s).
        if let a = positions.dropFirst(8).first, let b = positions.last { #expect(a.distance(to: b) < 1e-9) }
        #expect(after.count == 2)
        #expect((after.last ?? .infinity) < 0.3, "errors after the outage: \(after)")
    }

    @Test("Soft long gate (locus_measurement_soft_excess): ν ≤ 2.5 as it is, 2.5 < ν ≤ 4 taken with S raised to y²/1.5², beyond ±4 refused; the short side stays hard")
    func softLongGateRule() {
        let s = 0.01  // S, m² (√S = 0.1 m)
        func extra(_ nu: Double) -> Double {
            KalmanKernels.softGateExtraVariance(residualMeters: nu * 0.1, innovationVarianceSquareMeters: s, gateLong: 2.5, gateShort: 4)
        }
        #expect(extra(0) == 0 && extra(2.4) == 0 && extra(-3.9) == 0)
        for nu in [2.6, 3.0, 3.9] {
            let e = extra(nu)
            let y = nu * 0.1
            #expect(e > 0 && abs(y / (s + e).squareRoot() - 1.5) < 1e-12, "ν \(nu): extra \(e) m²")
        }
        #expect(extra(4.1) == -1 && extra(-4.1) == -1 && extra(10) == -1)
    }

    @Test("Soft long gate in the filter: a range ~3σ long is taken, ~6σ long is gated, the track holds")
    func softLongGate() {
        let floor = TrackFixture.floor()
        let (filter, p, t) = TrackFixture.settledStillFilter(floor: floor, seed: 13)
        let l = floor.locators[0]
        // At the last range's time (no prediction), √S ≈ σ = 0.1 m.
        func take(longBy excess: Double) -> (TrackUpdateOutcome, Double) {
            var f = filter
            let o = f.update(range: RangeMeasurement(timeSeconds: t, tag: "T1", locator: l.address,
                                                     rangeMeters: (f.currentFix.map { $0.position.distance(to: l.position) } ?? 0) + excess), locator: l)
            return (o, (f.currentFix?.position.horizontal).map { $0.distance(to: p.horizontal) } ?? .infinity)
        }
        let (soft, softError) = take(longBy: 0.35)
        let (hard, hardError) = take(longBy: 0.6)
        #expect(soft == .accepted && hard == .gated, "\(soft) \(hard)")
        #expect(softError < 0.1 && hardError < 0.1, "errors \(softError) m, \(hardError) m")
    }

    @Test("Gate hysteresis: a 3 m jump (tag carried fast) is re-acquired within 6 fixes, tight and loose",
          arguments: [TrackFilterConfiguration.Coupling.tight, .loose])
    func jumpIsReacquired(coupling: TrackFilterConfiguration.Coupling) {
        let floor = TrackFixture.floor()
        let config = TrackFilterConfiguration(coupling: coupling)
        var filter = TrackFilter(configuration: config, tag: "T1", floor: floor.id, tagHeightMeters: floor.tagHeightMeters)
        var rng = SeededGenerator(seed: 9)
        var fixesAfterJump = 0
        var reacquiredAfter: Int?
        for k in 0..<120 {
            let p = k < 60 ? Point3(x: 6, y: 5, z: 1.1) : Point3(x: 9, y: 5, z: 1.1)
            var round: [RangeMeasurement] = []
            for (i, l) in floor.locators.enumerated() {
                round.append(RangeMeasurement(timeSeconds: Double(k) * 0.25 + Double(i) * 0.004, tag: "T1", locator: l.address,
                                              rangeMeters: p.distance(to: l.position) + 0.1 * rng.nextGaussian()))
            }
            switch coupling {
            case .tight:
                for r in round { if let l = floor.locator(r.locator) { filter.update(range: r, locator: l) } }
            case .loose:
                if let f = TrackFixture.leastSquaresFix(round, floor: floor) { filter.update(fix: f) }
            }
            guard let t = round.last?.timeSeconds, let f = filter.closeEpoch(atSeconds: t) else { continue }
            if k >= 60 {
                fixesAfterJump += 1
                if reacquiredAfter == nil, f.position.horizontal.distance(to: p.horizontal) < 0.2 { reacquiredAfter = fixesAfterJump }
            }
        }
        #expect(reacquiredAfter.map { $0 <= 6 } == true, "re-acquired after \(String(describing: reacquiredAfter)) fixes")
        if let f = filter.currentFix { #expect(f.position.horizontal.distance(to: Point2(x: 9, y: 5)) < 0.1) }
    }

    @Test("One round whose ranges run long together (7 of 8 locators +0.8 m, ≥ 6 of them gated: the old gate would have opened) does not re-acquire the track: the gate opens only after a whole round's worth of net rejections")
    func correlatedRoundKeepsTrack() {
        let floor = TrackFixture.floor()
        var filter = TrackFilter(tag: "T1", floor: floor.id, tagHeightMeters: floor.tagHeightMeters)
        let p = Point3(x: 6, y: 4, z: floor.tagHeightMeters)
        var rng = SeededGenerator(seed: 11)
        func round(_ k: Int, longBy: (Int) -> Double) -> [TrackUpdateOutcome] {
            floor.locators.enumerated().map { i, l in
                filter.update(range: RangeMeasurement(timeSeconds: Double(k) * 0.25 + Double(i) * 0.004, tag: "T1", locator: l.address,
                                                      rangeMeters: p.distance(to: l.position) + 0.1 * rng.nextGaussian() + longBy(i)), locator: l)
            }
        }
        for k in 0..<40 { _ = round(k) { _ in 0 } }
        #expect(filter.initializationCount == 1)
        let outcomes = round(40) { i in i < 7 ? 0.8 : 0 }
        #expect(outcomes.prefix(7).filter { $0 == .gated }.count >= 6, "\(outcomes)")
        #expect(filter.initializationCount == 1, "the track was re-acquired from one round")
        let error = filter.currentFix.map { $0.position.horizontal.distance(to: p.horizontal) } ?? .infinity
        #expect(error < 0.1, "error \(error) m")
        // A whole round gated (the tag really moved unlike the model) still opens the gate.
        _ = round(41) { _ in 0 }
        _ = round(42) { _ in 3.0 }
        #expect(filter.initializationCount == 2, "re-acquisitions: \(filter.initializationCount - 1)")
    }

    @Test("NEES: mean normalised position error over 40 seeded runs lies inside the 95 % χ² band")
    func neesConsistency() {
        var sum = 0.0
        var count = 0
        for seed in 100..<140 as Range<UInt64> {
            let rec = TrackFixture.recording(seed: seed, durationSeconds: 60)
            guard let walk = rec.walk(of: "T1") else { continue }
            let fixes = TrackFixture.runCausal(rec, configuration: .standard)
            // One sample every 5 s (20 fixes), so that samples are nearly independent.
            for f in stride(from: 20, to: fixes.count, by: 20).map({ fixes[$0] }) {
                let p = walk.position(atSeconds: f.timeSeconds)
                let ex = f.position.x - p.x, ey = f.position.y - p.y
                let c = f.covariance
                let det = c.xx * c.yy - c.xy * c.xy
                sum += (ex * ex * c.yy - 2 * ex * ey * c.xy + ey * ey * c.xx) / det
                count += 1
            }
        }
        // Mean of N χ²(2) draws: 95 % band of χ²(2N)/N, N ≈ 440: about 2 ± 0.19.
        let n = Double(count)
        let half = 1.96 * (4 / n).squareRoot()
        let mean = sum / n
        #expect(count > 400)
        #expect(mean > 2 - half && mean < 2 + half, "mean NEES \(mean) over \(count) samples")
    }

    @Test("Fixes carry velocity, speed and course consistent with the walk")
    func velocityFilled() {
        let rec = TrackFixture.recording(seed: 2, durationSeconds: 60)
        guard let walk = rec.walk(of: "T1") else { Issue.record("no walk"); return }
        let fixes = TrackFixture.runCausal(rec, configuration: .standard)
        var e2 = 0.0, n = 0.0
        for f in fixes.dropFirst(20) {
            guard let v = f.velocity else { Issue.record("no velocity"); return }
            let tv = walk.velocity(atSeconds: f.timeSeconds)
            e2 += (v.x - tv.x) * (v.x - tv.x) + (v.y - tv.y) * (v.y - tv.y)
            n += 1
            #expect(f.speedMetersPerSecond.map { $0.isFinite } == true)
            #expect(f.horizontalAccuracyMeters > 0 && f.horizontalAccuracyMeters < 0.5)
        }
        #expect((e2 / n).squareRoot() < 0.3)
        #expect(fixes.contains { $0.courseRadians != nil })
    }

    @Test("A fix that overflows the numbers re-initialises the track with E4005 instead of producing NaN")
    func divergenceReinitialises() {
        var filter = TrackFilter(configuration: TrackFilterConfiguration(coupling: .loose), tag: "T1", floor: "1F")
        let q = FixQuality(hdop: 1, pdop: 1, residualRMSMeters: 0, locatorsUsed: 4)
        func fix(_ t: Double, _ x: Double, _ v: Double) -> PositionFix {
            PositionFix(timeSeconds: t, tag: "T1", floor: "1F", position: Point3(x: x, y: 0, z: 0),
                        covariance: SymmetricMatrix3(xx: v, yy: v, zz: 0), quality: q)
        }
        #expect(filter.update(fix: fix(0, 1, 0.01)) == .initialized)
        #expect(filter.update(fix: fix(0.25, 1, 0.01)) == .accepted)
        let outcome = filter.update(fix: fix(0.5, 1e200, 0.01))
        #expect(outcome == .diverged)
        #expect(filter.lastError?.code == .filterDivergence)
        #expect(filter.state == nil)
        #expect(filter.state.map { $0.isFinite } ?? true)
        #expect(filter.update(fix: fix(0.75, 2, 0.01)) == .initialized)
        #expect(filter.currentFix.map { $0.position.isFinite } == true)
        #expect(filter.update(fix: PositionFix(timeSeconds: 1, tag: "T1", floor: "1F", position: Point3(x: .nan, y: 0, z: 0),
                                               covariance: SymmetricMatrix3(xx: 1, yy: 1, zz: 0), quality: q)) == .unusable)
    }
}
