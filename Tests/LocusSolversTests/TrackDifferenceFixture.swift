@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSimulation
@testable import LocusSolvers

/// Simulated range differences (TDoA) for the filter and smoother tests: a seeded walk (LocusSimulation's
/// `WalkTrajectory`, 0.8–1.5 m/s with stops and turns) in a 20 m × 15 m hall with 8 locators, uplink
/// blinks at 4 Hz heard by every locator, each arrival with its own error N(0, σ²), differenced against
/// one reference (locator 0): zⱼ = (dⱼ + nⱼ) − (d₀ + n₀).
enum DifferenceFixture {
    static let tagHeight = 1.1
    static let sigma = 0.1

    /// 20 m × 15 m, 8 locators at 2.5 m (corners and mid-walls), tags at 1.1 m.
    static let hall: Floor = {
        let all: [(Double, Double)] = [(0, 0), (20, 0), (20, 15), (0, 15), (10, 0), (20, 7.5), (10, 15), (0, 7.5)]
        let locators = all.enumerated().map { i, p in
            Locator(address: LocatorAddress(UInt16(0x200 + i)), position: Point3(x: p.0, y: p.1, z: 2.5))
        }
        return Floor(id: "1F", widthMeters: 20, heightMeters: 15, tagHeightMeters: tagHeight, locators: locators)
    }()
    static let positions = hall.locators.map(\.position)
    static let addresses = hall.locators.map(\.address)

    /// One blink: its time, the truth, its pairs (by index into `positions`) and the same as rows.
    struct Blink {
        var timeSeconds: Double
        var truth: Point2
        var pairs: [DifferencePair]
        var rows: [RangeDifference]
    }

    struct Run {
        var walk: WalkTrajectory
        var blinks: [Blink]
        /// Ranges (8 per round, 4 ms apart, σ each), for the hybrid test: one round per blink time.
        var rounds: [[RangeMeasurement]]
    }

    /// A seeded run of `durationSeconds` at 4 Hz; `outlier(k, j)` adds metres to blink k's difference of
    /// locator j.
    static func simulate(seed: UInt64, durationSeconds: Double = 120, reference: Int = 0,
                         outlier: (Int, Int) -> Double = { _, _ in 0 }) -> Run {
        var rng = SeededGenerator(seed: seed)
        let walk = WalkTrajectory.generate(on: hall, startSeconds: 0, durationSeconds: durationSeconds + 1,
                                           configuration: .standard, using: &rng)
        var blinks: [Blink] = []
        var rounds: [[RangeMeasurement]] = []
        let count = Int(durationSeconds * 4)
        for k in 0..<count {
            let t = Double(k) * 0.25
            let p = walk.position(atSeconds: t)
            let tag = Point3(x: p.x, y: p.y, z: tagHeight)
            let arrivals = positions.map { tag.distance(to: $0) + sigma * rng.nextGaussian() }
            var pairs: [DifferencePair] = [], rows: [RangeDifference] = []
            for j in positions.indices where j != reference {
                let z = arrivals[j] - arrivals[reference] + outlier(k, j)
                pairs.append(DifferencePair(reference: reference, locator: j, differenceMeters: z, timeSeconds: t))
                rows.append(RangeDifference(timeSeconds: t, tag: "T1", reference: addresses[reference], locator: addresses[j],
                                            differenceMeters: z))
            }
            blinks.append(Blink(timeSeconds: t, truth: p, pairs: pairs, rows: rows))
            var round: [RangeMeasurement] = []
            for j in positions.indices {
                let tr = t + Double(j) * 0.004
                let q = walk.position(atSeconds: tr)
                let d = Point3(x: q.x, y: q.y, z: tagHeight).distance(to: positions[j])
                round.append(RangeMeasurement(timeSeconds: tr, tag: "T1", locator: addresses[j], rangeMeters: d + sigma * rng.nextGaussian()))
            }
            rounds.append(round)
        }
        return Run(walk: walk, blinks: blinks, rounds: rounds)
    }

    /// The per-fix Cramér–Rao bound of one blink's differences at `point`: √trace(σ²F⁻¹), F from
    /// `DifferenceGeometry` (planar), metres.
    static func crb(pairs: [DifferencePair], at point: Point2) -> Double {
        let locators = positions
        let f = DifferenceGeometry.information(locators: locators.span, pairs: pairs.span,
                                               at: Point3(x: point.x, y: point.y, z: tagHeight), planar: true)
        guard let q = DifferenceGeometry.covariance(f, planar: true) else { return .infinity }
        return sigma * (q.xx + q.yy).squareRoot()
    }

    struct Score {
        var rmseMeters: Double
        var crbMeters: Double
        var fixes: Int
        var ratio: Double { rmseMeters / crbMeters }
    }

    /// RMSE of `fixes` against the walk and the RMS per-fix CRB (all 7 differences of a blink) at the
    /// truth points, skipping the first `skip` fixes. Every fix must be finite.
    static func score(_ fixes: [PositionFix], run: Run, skip: Int = 8) -> Score {
        let template = run.blinks[0].pairs
        var e2 = 0.0, c2 = 0.0, n = 0
        for f in fixes.dropFirst(skip) {
            let p = run.walk.position(atSeconds: f.timeSeconds)
            let dx = f.position.x - p.x, dy = f.position.y - p.y
            e2 += dx * dx + dy * dy
            let c = crb(pairs: template, at: p)
            c2 += c * c
            n += 1
        }
        return Score(rmseMeters: (e2 / Double(max(1, n))).squareRoot(), crbMeters: (c2 / Double(max(1, n))).squareRoot(), fixes: n)
    }

    /// `filter.update(differences:locators:addresses:report:)` on the hall's locators.
    @discardableResult
    static func update(_ filter: inout TrackFilter, _ pairs: [DifferencePair],
                       report: (Int, DifferenceRows.Outcome) -> Void = { _, _ in }) -> TrackUpdateOutcome {
        let locators = positions, addresses = addresses
        return filter.update(differences: pairs.span, locators: locators.span, addresses: addresses.span, report: report)
    }

    /// Applies one blink's differences as the engine would: `update(differences:…)`, and when that
    /// leaves the filter without a state, a least-squares seed of the blink (`reset(toFix:)`).
    @discardableResult
    static func apply(_ blink: Blink, to filter: inout TrackFilter, report: (Int, DifferenceRows.Outcome) -> Void = { _, _ in })
        -> TrackUpdateOutcome {
        let outcome = update(&filter, blink.pairs, report: report)
        if outcome == .buffered || outcome == .diverged {
            var configuration = TrilaterationConfiguration.standard
            configuration.mode = .planar
            configuration.tagHeightMeters = tagHeight
            configuration.sigmaMeters = sigma
            if let s = try? DifferenceSolver(configuration: configuration).solve(locators: positions, pairs: blink.pairs) {
                filter.reset(toFix: PositionFix(timeSeconds: blink.timeSeconds, tag: "T1", floor: hall.id, position: s.position,
                                                covariance: s.covariance,
                                                quality: FixQuality(hdop: s.hdop, pdop: s.pdop, residualRMSMeters: s.residualRMSMeters,
                                                                    locatorsUsed: s.locatorsUsed)))
                return .initialized
            }
        }
        return outcome
    }

    /// The causal filter over the blinks for which `include(k)` holds (ranges for those where
    /// `ranges(k)` holds instead), one fix per epoch at its close.
    static func runCausal(_ run: Run, configuration: TrackFilterConfiguration = .standard,
                          include: (Int) -> Bool = { _ in true }, ranges: (Int) -> Bool = { _ in false }) -> [PositionFix] {
        var filter = TrackFilter(configuration: configuration, tag: "T1", floor: hall.id, tagHeightMeters: tagHeight)
        var fixes: [PositionFix] = []
        for (k, blink) in run.blinks.enumerated() {
            var close = blink.timeSeconds
            if ranges(k) {
                for r in run.rounds[k] {
                    if let l = hall.locator(r.locator) { filter.update(range: r, locator: l) }
                }
                close = run.rounds[k].last?.timeSeconds ?? close
            } else if include(k) {
                apply(blink, to: &filter)
            } else {
                continue
            }
            if let f = filter.closeEpoch(atSeconds: close) { fixes.append(f) }
        }
        return fixes
    }
}
