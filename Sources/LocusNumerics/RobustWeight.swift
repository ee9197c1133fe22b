/// IRLS weights w(u) = ψ(u)/u of the M-estimators Locus fits with, for a standardised residual
/// u = e/σ̂ (unitless; e and σ̂ in metres). Even functions of u, in [0, 1].
///
/// NaN policy: `huber(.nan)` is NaN (it propagates), `tukeyBisquare(.nan)` is 0 (it rejects).
package enum RobustWeight {
    /// Huber: w = 1 for |u| ≤ k, k/|u| beyond (k = 1.345 gives 95 % efficiency under Gaussian noise).
    @inlinable package static func huber(_ u: Double, threshold k: Double) -> Double {
        let a = abs(u)
        return a <= k ? 1 : k / a
    }

    /// Tukey's bisquare: w = (1 − (u/c)²)² for |u| < c, 0 beyond — redescending, so gross outliers
    /// weigh nothing (c = 4.685 gives 95 % efficiency under Gaussian noise).
    @inlinable package static func tukeyBisquare(_ u: Double, threshold c: Double) -> Double {
        guard abs(u) < c else { return 0 }
        let v = 1 - (u / c) * (u / c)
        return v * v
    }
}
