import LocusCore

/// Parameters of the simulated UWB ranging.
///
/// Each tag ranges all locators of the floor once per round, at rate f (Hz), locator i at
/// t = t₀ + k/f + j·τ_tag + i·τ (slot τ, a few ms). A range is
///   r = ‖p(t) − aᵢ‖ + bᵢ + σ·n + B,  n ~ N(0, 1),
/// where p(t) is the tag at height h (the floor's tag height), aᵢ the locator, bᵢ its bias, and
/// B = 0 with probability 1 − p_NLOS, else B ~ U(b_min, b_max) (non-line-of-sight: always long).
/// Each range is dropped with probability p_drop, or when the true distance exceeds the maximum
/// range; negative results are clamped to 0.
package struct RangeSimulationConfiguration: Sendable, Hashable {
    /// Gaussian range noise σ, metres.
    var sigmaMeters: Double
    /// Probability p_NLOS that a range carries a positive NLOS bias.
    var nlosProbability: Double
    /// NLOS bias interval [b_min, b_max], metres (always added: NLOS is long).
    var nlosBiasMeters: ClosedRange<Double>
    /// Probability that a range is lost.
    var dropoutProbability: Double
    /// Ranging rounds per second per tag, Hz.
    var roundRateHertz: Double
    /// Spacing between the ranges of one round, seconds.
    package var slotSeconds: Double
    /// Ranges beyond this true distance are not received, metres.
    var maximumRangeMeters: Double

    /// Creates a configuration; every argument defaults to the value of `standard`.
    package init(sigmaMeters: Double = 0.1, nlosProbability: Double = 0, nlosBiasMeters: ClosedRange<Double> = 0.3...2.5,
                 dropoutProbability: Double = 0, roundRateHertz: Double = 4, slotSeconds: Double = 0.004,
                 maximumRangeMeters: Double = .infinity) {
        self.sigmaMeters = sigmaMeters
        self.nlosProbability = nlosProbability
        self.nlosBiasMeters = nlosBiasMeters
        self.dropoutProbability = dropoutProbability
        self.roundRateHertz = roundRateHertz
        self.slotSeconds = slotSeconds
        self.maximumRangeMeters = maximumRangeMeters
    }

    /// σ = 0.1 m, no NLOS (bias 0.3–2.5 m when enabled), no dropouts, 4 Hz rounds, 4 ms slots,
    /// unlimited reach.
    static let standard = RangeSimulationConfiguration()
}

/// One truth sample: where a tag was at a time.
package struct TruthSample: Sendable, Hashable {
    /// Time, seconds.
    package var timeSeconds: Double
    /// The tag (`T1`, `T2`, …).
    package var tag: TagID
    /// Position (z is the floor's tag height), metres.
    package var position: Point3
}

/// A simulated recording: ranges sorted by time, and the truth behind them.
package struct SimulatedRecording: Sendable {
    /// Every range of every tag, sorted by (time, tag, locator).
    package var ranges: [RangeMeasurement]
    /// Truth samples at the requested rate, sorted by (time, tag).
    var truth: [TruthSample]
    /// The walk of each tag, in tag order (tags `T1`, `T2`, …).
    var walks: [(tag: TagID, walk: WalkTrajectory)]
    /// The floor the recording is on.
    var floor: Floor

    /// The walk of `tag`, or nil. O(tags).
    func walk(of tag: TagID) -> WalkTrajectory? { walks.first { $0.tag == tag }?.walk }

    /// Simulates `tagCount` walkers (`T1`…) on `floor` for `durationSeconds` from time 0.
    ///
    /// Deterministic for a seed: tag j's walk draws from `SeededGenerator(seed ⊕ j·φ)` and its ranges
    /// from a second generator, so changing the range model leaves the walks unchanged.
    /// Complexity O(tags · (duration/Δt + duration · f · locators)).
    /// - Precondition: `tagCount ≥ 1`, `durationSeconds > 0`, positive rates, the floor has locators.
    package static func simulate(floor: Floor, tagCount: Int = 1, durationSeconds: Double, seed: UInt64,
                                 walk: WalkConfiguration = .standard,
                                 ranging: RangeSimulationConfiguration = .standard,
                                 truthRateHertz: Double = 10) -> SimulatedRecording {
        precondition(tagCount >= 1 && durationSeconds > 0 && ranging.roundRateHertz > 0 && truthRateHertz > 0,
                     "SimulatedRecording: counts, durations and rates must be positive")
        precondition(!floor.locators.isEmpty, "SimulatedRecording: the floor has no locators")
        let h = floor.tagHeightMeters
        var ranges: [RangeMeasurement] = []
        var truth: [TruthSample] = []
        var walks: [(tag: TagID, walk: WalkTrajectory)] = []
        let rounds = Int(durationSeconds * ranging.roundRateHertz)
        let tagSlot = Double(floor.locators.count) * ranging.slotSeconds
        for j in 0..<tagCount {
            let (tag, trajectory) = walkOfTag(j, floor: floor, durationSeconds: durationSeconds, seed: seed, walk: walk)
            var rangeRNG = SeededGenerator(seed: (seed &+ 0x5DEE_CE66_D1CE_4E5B) ^ (UInt64(j + 1) &* 0xD1B5_4A32_D192_ED03))
            walks.append((tag, trajectory))
            for k in 0..<rounds {
                let t0 = Double(k) / ranging.roundRateHertz + Double(j) * tagSlot
                for (i, locator) in floor.locators.enumerated() {
                    let t = t0 + Double(i) * ranging.slotSeconds
                    let p = trajectory.position(atSeconds: t)
                    let truePoint = Point3(x: p.x, y: p.y, z: walk.vertical?.height(atSeconds: t, tagIndex: j) ?? h)
                    let d = truePoint.distance(to: locator.position)
                    // Draw every variate for every slot so that one option does not shift the others' streams.
                    let noise = rangeRNG.nextGaussian()
                    let nlos = rangeRNG.nextUnit() < ranging.nlosProbability
                    let bias = rangeRNG.uniform(ranging.nlosBiasMeters.lowerBound, ranging.nlosBiasMeters.upperBound)
                    let dropped = rangeRNG.nextUnit() < ranging.dropoutProbability
                    if dropped || d > ranging.maximumRangeMeters { continue }
                    let r = max(0, (1 + locator.biasSlope) * d + locator.biasMeters + ranging.sigmaMeters * noise + (nlos ? bias : 0))
                    ranges.append(RangeMeasurement(timeSeconds: t, tag: tag, locator: locator.address,
                                                   rangeMeters: r, floor: floor.id))
                }
            }
            appendTruth(of: tag, trajectory, height: h, vertical: walk.vertical, tagIndex: j, durationSeconds: durationSeconds,
                        rateHertz: truthRateHertz, to: &truth)
        }
        ranges.sort { a, b in
            if a.timeSeconds != b.timeSeconds { return a.timeSeconds < b.timeSeconds }
            if a.tag != b.tag { return a.tag < b.tag }
            return a.locator < b.locator
        }
        sortTruth(&truth)
        return SimulatedRecording(ranges: ranges, truth: truth, walks: walks, floor: floor)
    }

    /// Tag j's id (`T(j+1)`) and walk of `durationSeconds` + 1 s from time 0, drawn from
    /// `SeededGenerator(seed ⊕ (j+1)·φ)`: the same walk whatever the measurement model (ranges or
    /// differences), so one seed gives one truth.
    static func walkOfTag(_ j: Int, floor: Floor, durationSeconds: Double, seed: UInt64,
                          walk: WalkConfiguration) -> (TagID, WalkTrajectory) {
        var walkRNG = SeededGenerator(seed: seed ^ (UInt64(j + 1) &* 0x9E37_79B9_7F4A_7C15))
        let trajectory = WalkTrajectory.generate(on: floor, startSeconds: 0, durationSeconds: durationSeconds + 1,
                                                 configuration: walk, using: &walkRNG)
        return (TagID("T\(j + 1)"), trajectory)
    }

    /// Appends the truth of `tag` at t = s/rate, s = 0…⌊duration · rate⌋ (z = `height`, the tag height,
    /// or the flight's `vertical` profile of tag index `tagIndex`).
    static func appendTruth(of tag: TagID, _ trajectory: WalkTrajectory, height h: Double, vertical: VerticalProfile? = nil,
                            tagIndex j: Int = 0, durationSeconds: Double, rateHertz: Double, to truth: inout [TruthSample]) {
        let samples = Int(durationSeconds * rateHertz)
        for s in 0...samples {
            let t = Double(s) / rateHertz
            let p = trajectory.position(atSeconds: t)
            truth.append(TruthSample(timeSeconds: t, tag: tag, position: Point3(x: p.x, y: p.y, z: vertical?.height(atSeconds: t, tagIndex: j) ?? h)))
        }
    }

    /// Sorts truth samples by (time, tag).
    static func sortTruth(_ truth: inout [TruthSample]) {
        truth.sort { a, b in a.timeSeconds != b.timeSeconds ? a.timeSeconds < b.timeSeconds : a.tag < b.tag }
    }
}
