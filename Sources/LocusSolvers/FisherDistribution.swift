#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tail probabilities of Fisher's F distribution, for tests whose covariance is estimated from a
/// few groups (Hotelling's T² with a covariance from G time blocks: T²·(G − p)/(p·(G − 1)) is
/// F(p, G − p) under the null hypothesis).
enum FisherDistribution {
    /// P(F > f) for F ~ F(d1, d2): I_x(d2/2, d1/2) at x = d2/(d2 + d1·f), the regularised incomplete
    /// beta function. 1 for f ≤ 0; d1, d2 > 0.
    static func upperTail(_ f: Double, d1: Double, d2: Double) -> Double {
        precondition(d1 > 0 && d2 > 0, "FisherDistribution.upperTail: degrees of freedom must be positive")
        guard f > 0 else { return 1 }
        guard f.isFinite else { return 0 }
        return regularisedBeta(d2 / (d2 + d1 * f), a: d2 / 2, b: d1 / 2)
    }

    /// The regularised incomplete beta function I_x(a, b) = B(x; a, b)/B(a, b), 0 ≤ x ≤ 1, by its
    /// continued fraction (modified Lentz), on the side where it converges fast.
    static func regularisedBeta(_ x: Double, a: Double, b: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        let logFront = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(1 - x)
        if x < (a + 1) / (a + b + 2) {
            return exp(logFront) * continuedFraction(x, a: a, b: b) / a
        }
        return 1 - exp(logFront) * continuedFraction(1 - x, a: b, b: a) / b
    }

    /// The continued fraction of I_x(a, b) (Numerical Recipes' betacf), to a relative 1e-14.
    private static func continuedFraction(_ x: Double, a: Double, b: Double) -> Double {
        let tiny = 1e-300
        let qab = a + b, qap = a + 1, qam = a - 1
        var c = 1.0
        var d = 1 - qab * x / qap
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var h = d
        for m in 1...300 {
            let m = Double(m), m2 = 2 * m
            var aa = m * (b - m) * x / ((qam + m2) * (a + m2))
            d = 1 + aa * d
            if abs(d) < tiny { d = tiny }
            c = 1 + aa / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            h *= d * c
            aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
            d = 1 + aa * d
            if abs(d) < tiny { d = tiny }
            c = 1 + aa / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-14 { break }
        }
        return h
    }
}
