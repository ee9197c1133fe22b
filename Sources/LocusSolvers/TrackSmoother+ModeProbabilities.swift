import LocusCore
import LocusNumerics

extension TrackSmoother {
    /// Smoothed IMM mode probabilities: the causal (forward) IMM's μᶠₖ combined with those of the same
    /// IMM run backwards in time over the same measurements, μᵇₖ (t → −t: the still, steady,
    /// manoeuvring and agile models are the same in both directions; only the velocity changes sign):
    ///   μˢₖ ∝ μᶠₖ ⊙ μᵇₖ / π,
    /// with π the chain's stationary distribution (uniform for the symmetric switching of
    /// `InteractingModels`, so it drops out). Each side sees one half of the data, so a manoeuvre is
    /// recognised from both of its ends: the smoother's process noise rises where the walker turns,
    /// not a detection delay later (forward pass alone), and falls again as soon as the walk is
    /// straight. Both sides have seen node k's own measurement (its likelihood counts twice: a slight
    /// over-confidence, which the window mean of `assignProcessNoise` dilutes). Dimensionless, per
    /// node. Falls back to μᶠ when the product vanishes.
    static func smoothedModeProbabilities(forward: SIMD4<Double>, backward: SIMD4<Double>) -> SIMD4<Double> {
        let mu = forward * backward
        let sum = (mu[0] + mu[1]) + (mu[2] + mu[3])
        guard sum > 1e-300, sum.isFinite else { return forward }
        return mu / sum
    }

    /// The backward IMM's model probabilities after each range of `ranges` (non-decreasing time):
    /// a `TrackFilter` fed the ranges from last to first at time −t. Entry i holds μᵇ having seen
    /// ranges i…n−1 (uniform where the backward track has no state, or the locator is unknown and
    /// nothing was seen yet; all uniform for the single-model filter, which has no modes). Complexity O(n).
    static func backwardModeProbabilities(ranges: [RangeMeasurement], floor: Floor,
                                          configuration: TrackFilterConfiguration) -> [SIMD4<Double>] {
        let uniform = TrackFilter.uniformModeProbabilities
        var out = [SIMD4<Double>](repeating: uniform, count: ranges.count)
        guard let first = ranges.first, configuration.usesInteractingModels else { return out }
        var filter = TrackFilter(configuration: forwardConfiguration(configuration), tag: first.tag, floor: floor.id,
                                 tagHeightMeters: floor.tagHeightMeters)
        var last = uniform
        for i in stride(from: ranges.count - 1, through: 0, by: -1) {
            let r = ranges[i]
            if let locator = floor.locator(r.locator) {
                filter.update(correctedRangeMeters: locator.correctedRange(r.rangeMeters), timeSeconds: -r.timeSeconds,
                              address: locator.address, anchor: locator.position)
                last = filter.modeProbabilities
            }
            out[i] = last
        }
        return out
    }

    /// The backward IMM's model probabilities after each fix of `fixes` (non-decreasing time), as
    /// `backwardModeProbabilities(ranges:…)` for the loosely coupled filter. Complexity O(n).
    static func backwardModeProbabilities(fixes: [PositionFix], configuration: TrackFilterConfiguration) -> [SIMD4<Double>] {
        let uniform = TrackFilter.uniformModeProbabilities
        var out = [SIMD4<Double>](repeating: uniform, count: fixes.count)
        guard let first = fixes.first, configuration.usesInteractingModels else { return out }
        var filter = TrackFilter(configuration: forwardConfiguration(configuration), tag: first.tag, floor: first.floor,
                                 tagHeightMeters: first.position.z)
        for i in stride(from: fixes.count - 1, through: 0, by: -1) {
            // At −t (the filter never reads a fix's velocity, so it needs no reversing).
            filter.update(fix: fixes[i], atSeconds: -fixes[i].timeSeconds)
            out[i] = filter.modeProbabilities
        }
        return out
    }

    /// The mean of `values` over a sliding window: entry k is the average of the values at the nodes m
    /// with |t_m − t_k| ≤ w (w = `halfWidthSeconds`; times non-decreasing; w ≤ 0 returns the values as
    /// they are). One pass with a running total, O(n); at every 1024th node the total is summed
    /// afresh over its window, so rounding does not accumulate along a long recording.
    static func windowMean(_ values: [SIMD4<Double>], timesSeconds t: [Double], halfWidthSeconds w: Double) -> [SIMD4<Double>] {
        precondition(values.count == t.count, "TrackSmoother.windowMean: one time per value")
        guard w > 0, !values.isEmpty else { return values }
        var out: [SIMD4<Double>] = []  // appended: a copy of `values` would be copied again on its first write
        out.reserveCapacity(values.count)
        var lo = 0, hi = -1
        var sum = SIMD4<Double>.zero
        for k in values.indices {
            while hi + 1 < values.count, t[hi + 1] <= t[k] + w {
                hi += 1
                sum += values[hi]
            }
            while t[lo] < t[k] - w {
                sum -= values[lo]
                lo += 1
            }
            if k & 1023 == 0 {
                sum = .zero
                for m in lo...hi { sum += values[m] }
            }
            out.append(sum / Double(hi - lo + 1))
        }
        return out
    }
}
