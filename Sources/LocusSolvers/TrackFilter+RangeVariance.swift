import Glibc
import LocusCore

// The range variance a tightly coupled track takes its ranges with (issue #42, docs/tracking.md): σ_r²,
// or the variance its own innovations show when that is smaller, learnt per second of epochs.
extension TrackFilter {
    /// The range variance R the tightly coupled updates take, m²: σ_r² (`rangeSigmaMeters`), or, with
    /// `rangeVarianceTimeConstantSeconds` > 0, the track's estimate R̂ held within [(f σ_r)², σ_r²],
    /// f = `rangeSigmaFloorFraction` (never more than σ_r²: a site's σ_r stays the bound it states; NLOS
    /// ranges, which raise R̂, meet the gate instead).
    package var rangeVarianceSquareMeters: Double {
        let c = configuration
        let most = c.rangeSigmaMeters * c.rangeSigmaMeters
        guard c.rangeVarianceTimeConstantSeconds > 0 else { return most }
        let least = most * c.rangeSigmaFloorFraction * c.rangeSigmaFloorFraction
        return min(most, max(least, rangeVarianceEstimate))
    }

    /// Teaches the range-variance estimate the closing epoch (at t, seconds; `covariance` the position
    /// covariance of its fix, m²): its sample s (`TrackEpochQuality.rangeVarianceSample`) blended as
    /// R̂ ← R̂ + (1 − e^(−Δt/τ))(s − R̂), Δt the time since the last epoch that taught it (the first one only
    /// starts the clock), τ = `rangeVarianceTimeConstantSeconds`. A weight per second, not per epoch or
    /// range: streams of any rate forget at the same pace. Only while the tag hears
    /// `rangeVarianceMinimumLocators` locators within τ (else the estimate stays as it is).
    mutating func learnRangeVariance(atSeconds t: Double, covariance c: SymmetricMatrix3) {
        let tau = configuration.rangeVarianceTimeConstantSeconds
        guard tau > 0, let sample = epoch.rangeVarianceSample(xx: c.xx, xy: c.xy, yy: c.yy), sample.isFinite,
              buffer.hasLocators(configuration.rangeVarianceMinimumLocators, since: t - tau) else { return }
        if rangeVarianceSeconds.isFinite {
            guard t > rangeVarianceSeconds else { return }
            let weight = 1 - exp(-(t - rangeVarianceSeconds) / tau)
            rangeVarianceEstimate += weight * (sample - rangeVarianceEstimate)
        }
        rangeVarianceSeconds = t
    }
}
