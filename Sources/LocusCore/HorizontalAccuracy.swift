#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Horizontal accuracy figures from a position covariance.
///
/// The 95 % radius r of a 2-D Gaussian with horizontal covariance eigenvalues λ₁ ≥ λ₂ solves
/// P(‖e‖ ≤ r) = 0.95. In polar coordinates that probability is
///   P(r) = 1 / (2π√(λ₁λ₂)) ∫₀^{2π} (1 − exp(−r² q(θ)/2)) / q(θ) dθ,  q(θ) = cos²θ/λ₁ + sin²θ/λ₂,
/// which we integrate with the periodic trapezoidal rule (spectrally accurate) and invert by
/// bisection, once, for a table of r/√λ₁ over the axis ratio ρ = √(λ₂/λ₁) ∈ [0, 1]. Per fix the
/// radius is one table interpolation (relative error below 1e-4): ρ = 1 gives √(−2 ln 0.05) ≈ 2.4477σ,
/// ρ → 0 gives 1.96σ.
@usableFromInline package enum HorizontalAccuracy {
    /// DRMS √(σx² + σy²), metres.
    @inlinable package static func drms(_ c: SymmetricMatrix3) -> Double {
        max(0, c.xx + c.yy).squareRoot()
    }

    /// The 95 % horizontal radius, metres.
    package static func radius95(_ c: SymmetricMatrix3) -> Double {
        let mean = 0.5 * (c.xx + c.yy)
        let half = 0.5 * (c.xx - c.yy)
        let disc = (half * half + c.xy * c.xy).squareRoot()
        let l1 = max(0, mean + disc), l2 = max(0, mean - disc)
        guard l1 > 0, l1.isFinite else { return 0 }
        let rho = min(1, (l2 / l1).squareRoot())
        let pos = rho * Double(table.count - 1)
        let i = min(table.count - 2, Int(pos))
        let f = pos - Double(i)
        return l1.squareRoot() * (table[i] * (1 - f) + table[i + 1] * f)
    }

    /// r95/√λ₁ at ρ = k/(count−1).
    static let table: [Double] = (0...128).map { k in radius95Unit(rho: Double(k) / 128) }

    /// Solves P(r) = 0.95 for λ₁ = 1, λ₂ = ρ² by Newton's method on P(r) − 0.95, with
    /// P′(r) = 1 / (2π√(λ₁λ₂)) ∫₀^{2π} r·exp(−r² q(θ)/2) dθ; the root lies in [1.96, 2.45].
    static func radius95Unit(rho: Double) -> Double {
        if rho < 1e-9 { return 1.959963984540054 }
        let l1 = 1.0, l2 = rho * rho
        let n = 256
        var r = 2.2
        for _ in 0..<8 {
            var p = 0.0, dp = 0.0
            for j in 0..<n {
                let th = 2 * Double.pi * Double(j) / Double(n)
                let c = cos(th), s = sin(th)
                let q = c * c / l1 + s * s / l2
                let e = exp(-r * r * q / 2)
                p += (1 - e) / q
                dp += r * e
            }
            let norm = Double(n) * (l1 * l2).squareRoot()
            let step = (p / norm - 0.95) / (dp / norm)
            r = min(2.5, max(1.9, r - step))
            if abs(step) < 1e-12 { break }
        }
        return r
    }
}
