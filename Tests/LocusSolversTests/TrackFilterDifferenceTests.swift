import Testing
@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSimulation
@testable import LocusSolvers

/// The causal filter on range differences (TDoA, issue #40 item 3): accuracy against the per-fix
/// Cramér–Rao bound, the whitened update against the textbook vector update, gating and hysteresis,
/// the initialisation contract, and numbers that never go NaN.
@Suite struct TrackFilterDifferenceTests {
    static let seeds: [UInt64] = [1, 2, 3]

    @Test("Causal RMSE on differences (4 Hz, 8 locators, σ = 0.1 m per arrival) is at most 0.80 × the per-fix CRB",
          arguments: seeds)
    func causalBeatsBound(seed: UInt64) {
        let run = DifferenceFixture.simulate(seed: seed)
        let fixes = DifferenceFixture.runCausal(run)
        let score = DifferenceFixture.score(fixes, run: run)
        #expect(fixes.count == run.blinks.count)
        #expect(fixes.allSatisfy { $0.position.isFinite && $0.covariance.isFinite })
        #expect(score.ratio <= 0.80, "RMSE \(score.rmseMeters) m vs CRB \(score.crbMeters) m")
        print("differences causal seed \(seed): RMSE \(score.rmseMeters) m, CRB \(score.crbMeters) m, ratio \(score.ratio)")
    }

    @Test("The single-model baseline takes differences too (RMSE at most 1.3 × the per-fix CRB)")
    func singleModel() {
        let run = DifferenceFixture.simulate(seed: 1)
        let fixes = DifferenceFixture.runCausal(run, configuration: TrackFilterConfiguration(usesInteractingModels: false))
        let score = DifferenceFixture.score(fixes, run: run)
        #expect(fixes.count == run.blinks.count)
        #expect(score.ratio <= 1.3, "RMSE \(score.rmseMeters) m vs CRB \(score.crbMeters) m")
        print("differences causal single model: RMSE \(score.rmseMeters) m, CRB \(score.crbMeters) m, ratio \(score.ratio)")
    }

    /// The textbook vector EKF update with the group's correlated noise, in information form:
    /// P⁺ = (P⁻¹ + HᵀΣ⁻¹H)⁻¹, x⁺ = x + P⁺HᵀΣ⁻¹(z − h), Σ⁻¹ = σ⁻²(I − 11ᵀ/(m+1)).
    static func vectorUpdate(_ s: KalmanState, pairs: [DifferencePair], sigma: Double) throws -> KalmanState {
        let p = Point3(x: s.x[0], y: s.x[1], z: DifferenceFixture.tagHeight)
        let m = pairs.count
        var hs: [(Double, Double)] = [], ys: [Double] = []
        for pair in pairs {
            let j = DifferenceModel.jacobian(at: p, reference: DifferenceFixture.positions[Int(pair.reference)],
                                             locator: DifferenceFixture.positions[Int(pair.locator)])
            hs.append((j.gradient.x, j.gradient.y)); ys.append(pair.differenceMeters - j.predicted)
        }
        func sigmaInverse(_ i: Int, _ k: Int) -> Double { ((i == k ? 1 : 0) - 1 / Double(m + 1)) / (sigma * sigma) }
        var info = try TrackSmoother.inverse4(s.p)
        var b = SIMD2<Double>.zero
        for i in 0..<m {
            for k in 0..<m {
                let w = sigmaInverse(i, k)
                info[0] += hs[i].0 * w * hs[k].0; info[1] += hs[i].0 * w * hs[k].1
                info[4] += hs[i].1 * w * hs[k].0; info[5] += hs[i].1 * w * hs[k].1
                b[0] += hs[i].0 * w * ys[k]; b[1] += hs[i].1 * w * ys[k]
            }
        }
        let post = try TrackSmoother.inverse4(info)
        var x = s.x
        for r in 0..<4 { x[r] += post[4 * r] * b[0] + post[4 * r + 1] * b[1] }
        return KalmanState(x: x, p: post)
    }

    @Test("A group's whitened sequential update equals the vector EKF update with Σ = σ²(I + 11ᵀ) (single model and every IMM model)")
    func whitenedEqualsVectorUpdate() throws {
        let run = DifferenceFixture.simulate(seed: 5, durationSeconds: 2)
        let blink = run.blinks[3]
        var prior = KalmanState(px: blink.truth.x + 0.3, py: blink.truth.y - 0.2, vx: 0.5, vy: -0.4,
                                positionSigmaMeters: 0.4, velocitySigmaMetersPerSecond: 0.8)
        prior.p[1] = 0.03; prior.p[4] = 0.03; prior.p[2] = 0.05; prior.p[8] = 0.05
        let expected = try Self.vectorUpdate(prior, pairs: blink.pairs, sigma: DifferenceFixture.sigma)
        for imm in [false, true] {
            var filter = TrackFilter(configuration: TrackFilterConfiguration(usesInteractingModels: imm), tag: "T1", floor: "1F",
                                     tagHeightMeters: DifferenceFixture.tagHeight)
            filter.reset(to: prior, atSeconds: blink.timeSeconds)
            let outcome = DifferenceFixture.update(&filter, blink.pairs)
            #expect(outcome == .accepted)
            guard let s = filter.state else { Issue.record("no state"); continue }
            for i in 0..<4 { #expect(abs(s.x[i] - expected.x[i]) < 1e-9, "imm \(imm) x[\(i)]: \(s.x[i]) vs \(expected.x[i])") }
            for i in 0..<16 { #expect(abs(s.p[i] - expected.p[i]) < 1e-9, "imm \(imm) P[\(i)]: \(s.p[i]) vs \(expected.p[i])") }
        }
    }

    @Test("Outlier differences of +5 m and +25 m (and −5 m) are gated, the track carries on, and nothing goes NaN")
    func gatesOutliers() {
        // Every 10th blink one difference gets +5 m (locator 3), every 10th another +25 m (locator 6),
        // every 20th a −5 m one (locator 2) — after the first 4 s.
        let outlier: (Int, Int) -> Double = { k, j in
            guard k >= 16 else { return 0 }
            if k % 10 == 5 && j == 3 { return 5 }
            if k % 10 == 0 && j == 6 { return 25 }
            if k % 20 == 7 && j == 2 { return -5 }
            return 0
        }
        let run = DifferenceFixture.simulate(seed: 2, outlier: outlier)
        var filter = TrackFilter(tag: "T1", floor: "1F", tagHeightMeters: DifferenceFixture.tagHeight)
        var fixes: [PositionFix] = []
        var missed = 0, wronglyGated = 0, outliers = 0
        for (k, blink) in run.blinks.enumerated() {
            DifferenceFixture.apply(blink, to: &filter) { i, o in
                let j = Int(blink.pairs[i].locator)
                if outlier(k, j) != 0 {
                    outliers += 1
                    if o != .gated { missed += 1 }
                } else if o == .gated {
                    wronglyGated += 1
                }
            }
            guard let f = filter.closeEpoch(atSeconds: blink.timeSeconds) else { Issue.record("no fix at \(k)"); continue }
            fixes.append(f)
        }
        #expect(outliers > 40)
        #expect(missed == 0)
        #expect(filter.initializationCount == 1, "the track was re-acquired \(filter.initializationCount - 1) times")
        #expect(fixes.allSatisfy { $0.position.isFinite && $0.covariance.isFinite && $0.velocity?.x.isFinite ?? false })
        let score = DifferenceFixture.score(fixes, run: run)
        #expect(score.ratio <= 0.85, "RMSE \(score.rmseMeters) m vs CRB \(score.crbMeters) m")
        print("differences with outliers: RMSE \(score.rmseMeters) m, CRB \(score.crbMeters) m, clean ones gated \(wronglyGated)")
    }

    @Test("Before a seed, after a gap, or when the gate opens the filter answers .buffered and takes the engine's seed")
    func initialisationContract() {
        let run = DifferenceFixture.simulate(seed: 3, durationSeconds: 30)
        var filter = TrackFilter(tag: "T1", floor: "1F", tagHeightMeters: DifferenceFixture.tagHeight)
        let b0 = run.blinks[0]
        #expect(DifferenceFixture.update(&filter, b0.pairs) == .buffered)
        #expect(!filter.isTracking)
        #expect(DifferenceFixture.apply(b0, to: &filter) == .initialized)
        #expect(filter.isTracking && filter.initializationCount == 1)
        for blink in run.blinks[1..<40] { #expect(DifferenceFixture.apply(blink, to: &filter) == .accepted) }
        // A gap longer than reinitializeAfterSeconds (2 s): dropped for re-seeding.
        let late = run.blinks[52]
        #expect(DifferenceFixture.update(&filter, late.pairs) == .buffered)
        #expect(!filter.isTracking)
        #expect(DifferenceFixture.apply(late, to: &filter) == .initialized)
        for blink in run.blinks[53..<80] { DifferenceFixture.apply(blink, to: &filter) }
        // The tag "teleports" 6 m: every difference is gated; one blink's 7 leave the score under gateOpenScore
        // (8), the next blink's reach it and the track is re-acquired.
        let moved = Point3(x: run.blinks[80].truth.x < 10 ? run.blinks[80].truth.x + 6 : run.blinks[80].truth.x - 6,
                           y: run.blinks[80].truth.y, z: DifferenceFixture.tagHeight)
        func teleported(_ blink: DifferenceFixture.Blink) -> DifferenceFixture.Blink {
            var jumped = blink
            for i in jumped.pairs.indices {
                let pair = jumped.pairs[i]
                jumped.pairs[i].differenceMeters = moved.distance(to: DifferenceFixture.positions[Int(pair.locator)])
                    - moved.distance(to: DifferenceFixture.positions[Int(pair.reference)])
            }
            return jumped
        }
        var gated = 0
        let first = DifferenceFixture.update(&filter, teleported(run.blinks[80]).pairs) { _, o in if o == .gated { gated += 1 } }
        #expect(first == .gated)
        #expect(gated == 7)
        let jumped = teleported(run.blinks[81])
        let outcome = DifferenceFixture.update(&filter, jumped.pairs)
        #expect(outcome == .buffered)
        #expect(DifferenceFixture.apply(jumped, to: &filter) == .initialized)
        let fix = filter.closeEpoch(atSeconds: jumped.timeSeconds)
        #expect(fix.map { Point2(x: $0.position.x, y: $0.position.y).distance(to: Point2(x: moved.x, y: moved.y)) < 0.3 } ?? false)
        #expect(filter.initializationCount == 3)
    }

    @Test("Unusable differences (NaN, infinite, bad indices, the reference as B, a non-finite time) change nothing and never give NaN")
    func unusableInputs() {
        let run = DifferenceFixture.simulate(seed: 4, durationSeconds: 10)
        var filter = TrackFilter(tag: "T1", floor: "1F", tagHeightMeters: DifferenceFixture.tagHeight)
        for blink in run.blinks[0..<20] { DifferenceFixture.apply(blink, to: &filter) }
        guard let before = filter.state else { Issue.record("no state"); return }
        let t = run.blinks[20].timeSeconds
        let bad: [[DifferencePair]] = [
            [DifferencePair(reference: 0, locator: 1, differenceMeters: .nan, timeSeconds: t)],
            [DifferencePair(reference: 0, locator: 1, differenceMeters: .infinity, timeSeconds: t)],
            [DifferencePair(reference: 0, locator: 9, differenceMeters: 1, timeSeconds: t)],
            [DifferencePair(reference: -1, locator: 1, differenceMeters: 1, timeSeconds: t)],
            [DifferencePair(reference: 2, locator: 2, differenceMeters: 0, timeSeconds: t)],
            [DifferencePair(reference: 0, locator: 1, differenceMeters: 1, timeSeconds: .nan)],
            [DifferencePair(reference: 0, locator: 1, differenceMeters: 1, timeSeconds: .infinity)],
            [],
        ]
        for pairs in bad {
            let outcome = DifferenceFixture.update(&filter, pairs)
            #expect(outcome == .unusable, "\(pairs)")
            #expect(filter.isTracking)
        }
        #expect(filter.state?.x == before.x)
        // A usable pair beside an unusable one in the same group: the usable one is taken.
        let mixed = [DifferencePair(reference: 0, locator: 1, differenceMeters: .nan, timeSeconds: t),
                     run.blinks[20].pairs[1]]
        #expect(DifferenceFixture.update(&filter, mixed) == .accepted)
        for blink in run.blinks[21...] { DifferenceFixture.apply(blink, to: &filter) }
        let fix = filter.closeEpoch(atSeconds: run.blinks.last?.timeSeconds ?? 0)
        #expect(fix?.position.isFinite ?? false)
        #expect(filter.lastError == nil)
    }

    /// Blinks of a tag at `position(t)` (σ per arrival), reference locator 0, at 4 Hz for `seconds`.
    static func blinks(seconds: Double, seed: UInt64, position: (Double) -> Point2) -> [DifferenceFixture.Blink] {
        var rng = SeededGenerator(seed: seed)
        return (0..<Int(seconds * 4)).map { k in
            let t = Double(k) * 0.25
            let p = position(t)
            let tag = Point3(x: p.x, y: p.y, z: DifferenceFixture.tagHeight)
            let arrivals = DifferenceFixture.positions.map { tag.distance(to: $0) + DifferenceFixture.sigma * rng.nextGaussian() }
            let pairs = (1..<8).map { DifferencePair(reference: 0, locator: $0, differenceMeters: arrivals[$0] - arrivals[0], timeSeconds: t) }
            return DifferenceFixture.Blink(timeSeconds: t, truth: p, pairs: pairs, rows: [])
        }
    }

    @Test("The IMM's model likelihoods follow the differences: a standing tag ends in the still model, a walking one does not")
    func modeProbabilities() {
        var still = TrackFilter(tag: "T1", floor: "1F", tagHeightMeters: DifferenceFixture.tagHeight)
        for blink in Self.blinks(seconds: 20, seed: 11, position: { _ in Point2(x: 7, y: 6) }) {
            DifferenceFixture.apply(blink, to: &still)
            _ = still.closeEpoch(atSeconds: blink.timeSeconds)
        }
        var walking = TrackFilter(tag: "T1", floor: "1F", tagHeightMeters: DifferenceFixture.tagHeight)
        for blink in Self.blinks(seconds: 12, seed: 12, position: { t in Point2(x: 4 + 1.0 * t, y: 5 + 0.3 * t) }) {
            DifferenceFixture.apply(blink, to: &walking)
            _ = walking.closeEpoch(atSeconds: blink.timeSeconds)
        }
        let muStill = still.modeProbabilities, muWalking = walking.modeProbabilities
        #expect(muStill[0] > 0.8, "still: \(muStill)")
        #expect(muWalking[0] < 0.05, "walking: \(muWalking)")
        #expect(abs(muStill.sum() - 1) < 1e-12 && abs(muWalking.sum() - 1) < 1e-12)
        #expect(walking.state.map { abs($0.x[2] - 1.0) < 0.15 && abs($0.x[3] - 0.3) < 0.15 } ?? false, "velocity \(String(describing: walking.state?.x))")
    }

    @Test("A difference group a little older than the track (a hybrid tag's later range came first) is applied; one too old re-seeds")
    func lateGroups() {
        let run = DifferenceFixture.simulate(seed: 6, durationSeconds: 20)
        var filter = TrackFilter(tag: "T1", floor: "1F", tagHeightMeters: DifferenceFixture.tagHeight)
        for k in 0..<40 {
            for r in run.rounds[k] { if let l = DifferenceFixture.hall.locator(r.locator) { filter.update(range: r, locator: l) } }
            // The blink at the round's start, after the round's ranges (up to 28 ms later): late but within 0.1 s.
            #expect(DifferenceFixture.update(&filter, run.blinks[k].pairs) == .accepted, "blink \(k)")
        }
        #expect(filter.initializationCount == 1)
        var old = run.blinks[39]
        for i in old.pairs.indices { old.pairs[i].timeSeconds -= 0.5 }
        #expect(DifferenceFixture.update(&filter, old.pairs) == .buffered)
        #expect(!filter.isTracking && filter.lastError == nil)
    }

    @Test("A hybrid tag (ranges and differences alternating) fuses both in one track: better than either alone",
          arguments: [1, 2] as [UInt64])
    func hybridFusesBoth(seed: UInt64) {
        let run = DifferenceFixture.simulate(seed: seed)
        let hybrid = DifferenceFixture.runCausal(run, include: { $0 % 2 == 1 }, ranges: { $0 % 2 == 0 })
        let rangesOnly = DifferenceFixture.runCausal(run, include: { _ in false }, ranges: { $0 % 2 == 0 })
        let differencesOnly = DifferenceFixture.runCausal(run, include: { $0 % 2 == 1 })
        let h = DifferenceFixture.score(hybrid, run: run), r = DifferenceFixture.score(rangesOnly, run: run),
            d = DifferenceFixture.score(differencesOnly, run: run)
        #expect(hybrid.count == run.blinks.count)
        #expect(h.rmseMeters < r.rmseMeters && h.rmseMeters < d.rmseMeters,
                "hybrid \(h.rmseMeters) m, ranges alone \(r.rmseMeters) m, differences alone \(d.rmseMeters) m")
        print("hybrid seed \(seed): hybrid \(h.rmseMeters) m, ranges alone \(r.rmseMeters) m, differences alone \(d.rmseMeters) m")
    }
}
