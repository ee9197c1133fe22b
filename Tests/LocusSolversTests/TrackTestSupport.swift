@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSimulation
@testable import LocusSolvers
import LocusTestSupport

/// Shared fixtures for the tracking tests: a floor, simulated runs, the per-fix Cramér–Rao bound,
/// and a TEST-ONLY least-squares stand-in (until the Trilaterator lands on main) for loose coupling.
enum TrackFixture {
    /// A tightly coupled filter that has tracked a tag standing at (6, 4) for 40 rounds of every
    /// locator of `floor` (4 Hz, 4 ms slots, σ 0.1 m), and the tag's position and last range time.
    static func settledStillFilter(floor: Floor, seed: UInt64) -> (filter: TrackFilter, position: Point3, lastSeconds: Double) {
        var filter = TrackFilter(tag: "T1", floor: floor.id, tagHeightMeters: floor.tagHeightMeters)
        let p = Point3(x: 6, y: 4, z: floor.tagHeightMeters)
        var rng = SeededGenerator(seed: seed)
        var t = 0.0
        for k in 0..<40 {
            for (i, l) in floor.locators.enumerated() {
                t = Double(k) * 0.25 + Double(i) * 0.004
                filter.update(range: RangeMeasurement(timeSeconds: t, tag: "T1", locator: l.address,
                                                      rangeMeters: p.distance(to: l.position) + 0.1 * rng.nextGaussian()), locator: l)
            }
        }
        return (filter, p, t)
    }

    /// 20 m × 12 m floor, 8 locators at 2.5 m on the walls, tags at 1.1 m.
    static func floor(locatorCount: Int = 8) -> Floor {
        let all: [(Double, Double)] = [(0, 0), (20, 0), (20, 12), (0, 12), (10, 0), (20, 6), (10, 12), (0, 6)]
        let locators = all.prefix(locatorCount).enumerated().map { i, p in
            Locator(address: LocatorAddress(UInt16(0x100 + i)), position: Point3(x: p.0, y: p.1, z: 2.5))
        }
        return Floor(id: "1F", widthMeters: 20, heightMeters: 12, tagHeightMeters: 1.1, locators: locators)
    }

    static func recording(seed: UInt64, durationSeconds: Double = 240, nlos: Double = 0, dropout: Double = 0,
                          locatorCount: Int = 8) -> SimulatedRecording {
        SimulatedRecording.simulate(floor: floor(locatorCount: locatorCount), tagCount: 1, durationSeconds: durationSeconds,
                                    seed: seed,
                                    ranging: RangeSimulationConfiguration(nlosProbability: nlos, dropoutProbability: dropout))
    }

    /// Per-fix CRB at a point: σ·√trace((HᵀH)⁻¹), rows H = ((x−xᵢ)/ρᵢ, (y−yᵢ)/ρᵢ).
    static func crb(at p: Point2, floor: Floor, sigmaMeters: Double = 0.1) -> Double {
        var a00 = 0.0, a01 = 0.0, a11 = 0.0
        for l in floor.locators {
            let dx = p.x - l.position.x, dy = p.y - l.position.y, dz = floor.tagHeightMeters - l.position.z
            let r2 = dx * dx + dy * dy + dz * dz
            a00 += dx * dx / r2; a01 += dx * dy / r2; a11 += dy * dy / r2
        }
        let det = a00 * a11 - a01 * a01
        return sigmaMeters * ((a00 + a11) / det).squareRoot()
    }

    /// Groups a single tag's ranges into rounds (a gap > 50 ms starts a new round).
    /// The recording smoothed offline as `locus replay --smooth` would: over its ranges at each
    /// round's last range time (tight), or over each round's least-squares fix (loose).
    static func smoothed(_ rec: SimulatedRecording, configuration: TrackFilterConfiguration) throws -> [PositionFix] {
        switch configuration.coupling {
        case .tight:
            let times = RangeRounds.split(rec.ranges).compactMap { $0.last?.timeSeconds }
            return try TrackSmoother.smooth(ranges: rec.ranges, floor: rec.floor, outputTimesSeconds: times, configuration: configuration)
        case .loose:
            let fixes = RangeRounds.split(rec.ranges).compactMap { leastSquaresFix($0, floor: rec.floor) }
            return try TrackSmoother.smooth(fixes, configuration: configuration)
        }
    }


    /// A least-squares fix of one round from the merged `Trilaterator` (planar, robust), as the
    /// loosely coupled filter gets it in the pipeline.
    static func leastSquaresFix(_ round: [RangeMeasurement], floor: Floor, sigmaMeters: Double = 0.1) -> PositionFix? {
        var anchors: [Point3] = [], ranges: [Double] = [], addresses: [LocatorAddress] = []
        for r in round {
            guard let l = floor.locator(r.locator) else { continue }
            anchors.append(l.position); ranges.append(r.rangeMeters - l.biasMeters); addresses.append(l.address)
        }
        let solver = Trilaterator(configuration: TrilaterationConfiguration(mode: .planar, tagHeightMeters: floor.tagHeightMeters,
                                                                            sigmaMeters: sigmaMeters))
        guard let t = round.last?.timeSeconds, let s = try? solver.solve(locators: anchors, rangesMeters: ranges) else { return nil }
        return PositionFix(timeSeconds: t, tag: round[0].tag, floor: floor.id, position: s.position,
                           covariance: s.covariance, quality: s.fixQuality { addresses[$0] })
    }

    struct Score {
        var rmseMeters: Double
        var crbMeters: Double
        var ratio: Double { rmseMeters / crbMeters }
        var fixes: Int
    }

    /// RMSE of fixes against the walk, and RMS per-fix CRB at the truth points (skipping the first `skip` fixes).
    static func score(_ fixes: [PositionFix], recording: SimulatedRecording, skip: Int = 8) -> Score {
        guard let walk = recording.walks.first?.walk else { return Score(rmseMeters: .infinity, crbMeters: 1, fixes: 0) }
        var e2 = 0.0, c2 = 0.0, n = 0
        for f in fixes.dropFirst(skip) {
            let p = walk.position(atSeconds: f.timeSeconds)
            let dx = f.position.x - p.x, dy = f.position.y - p.y
            e2 += dx * dx + dy * dy
            let c = crb(at: p, floor: recording.floor)
            c2 += c * c
            n += 1
        }
        return Score(rmseMeters: (e2 / Double(max(1, n))).squareRoot(), crbMeters: (c2 / Double(max(1, n))).squareRoot(), fixes: n)
    }

    /// Runs the causal filter over a recording, one fix per round at the round's last range time.
    static func runCausal(_ recording: SimulatedRecording, configuration: TrackFilterConfiguration) -> [PositionFix] {
        let floor = recording.floor
        var filter = TrackFilter(configuration: configuration, tag: "T1", floor: floor.id, tagHeightMeters: floor.tagHeightMeters)
        var fixes: [PositionFix] = []
        for round in RangeRounds.split(recording.ranges) {
            guard let t = round.last?.timeSeconds else { continue }
            switch configuration.coupling {
            case .tight:
                for r in round {
                    if let l = floor.locator(r.locator) { filter.update(range: r, locator: l) }
                }
            case .loose:
                if let f = leastSquaresFix(round, floor: floor) { filter.update(fix: f) }
            }
            if let f = filter.closeEpoch(atSeconds: t) { fixes.append(f) }
        }
        return fixes
    }
}

extension TrackFilter {
    /// The filter's range entry point for a measurement and its locator (the bias taken out here).
    @discardableResult
    mutating func update(range: RangeMeasurement, locator: Locator) -> TrackUpdateOutcome {
        update(correctedRangeMeters: locator.correctedRange(range.rangeMeters), timeSeconds: range.timeSeconds,
               address: locator.address, anchor: locator.position)
    }
}
