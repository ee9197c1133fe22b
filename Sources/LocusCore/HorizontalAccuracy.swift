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
@usableFromInline enum HorizontalAccuracy {
    /// DRMS √(σx² + σy²), metres.
    @inlinable static func drms(_ c: SymmetricMatrix3) -> Double {
        max(0, c.xx + c.yy).squareRoot()
    }

    /// The 95 % horizontal radius, metres.
    static func radius95(_ c: SymmetricMatrix3) -> Double {
        let (major, minor) = SymmetricMatrix3.eigenvalues2x2(xx: c.xx, xy: c.xy, yy: c.yy)
        let l1 = max(0, major), l2 = max(0, minor)
        guard l1 > 0, l1.isFinite else { return 0 }
        let rho = min(1, (l2 / l1).squareRoot())
        let pos = rho * Double(table.count - 1)
        let i = min(table.count - 2, Int(pos))
        let f = pos - Double(i)
        return l1.squareRoot() * (table[i] * (1 - f) + table[i + 1] * f)
    }

    /// r95/√λ₁ at ρ = k/(count−1): `radius95Unit(rho: k / 128)` for k = 0…128, written out (the
    /// computation — 129 × up to 8 × 256 exponentials — cost every process a few milliseconds at its
    /// first fix; a test checks that the two agree bit for bit).
    static let table: [Double] = [
        1.959963984540054, 1.959979555556175, 1.9600262750504063, 1.9601041623712832, 1.9602132498012224,
        1.960353582609181, 1.9605252191245177, 1.9607282308326648, 1.9609627024926215, 1.9612287322771342,
        1.961526431935936, 1.9618559269827909, 1.9622173569071815, 1.9626108754116087, 1.9630366506752752,
        1.9634948656459261, 1.9639857183604876, 1.9645094222966182, 1.9650662067564735, 1.9656563172848331,
        1.966280016123557, 1.966937582704798, 1.9676293141857508, 1.968355526027718, 1.9691165526230614,
        1.9699127479735956, 1.970744486424973, 1.9716121634616184, 1.9725161965678646, 1.9734570261615105,
        1.974435116606945, 1.9754509573163401, 1.9765050639482873, 1.9775979797155339, 1.9787302768152077,
        1.9799025579980543, 1.981115458296651, 1.9823696469380239, 1.983665829472479, 1.9850047501590007,
        1.9863871946574254, 1.9878139930880707, 1.9892860235277396, 1.990804216016053, 1.992369557141895,
        1.9939830952652844, 1.9956459464015204, 1.9973593007505699, 1.9991244297979696, 2.0009426938451864,
        2.0028155497549585, 2.0047445586250507, 2.0067313930417146, 2.008777843515778, 2.010885823679311,
        2.0130573738178246, 2.0152946623393215, 2.0175999848310533, 2.0199757604293835, 2.0224245253197717,
        2.024948923289697, 2.0275516933687174, 2.0302356547021616, 2.0330036889111374, 2.0358587202855043,
        2.0388036942353964, 2.0418415544858606, 2.0449752195369957, 2.048207558927599, 2.0515413698347684,
        2.054979354515795, 2.058524099055716, 2.062178053826622, 2.0659435159963904, 2.069822614350279,
        2.0738172966105255, 2.077929319362147, 2.0821602406191, 2.086511414997316, 2.090983991401359,
        2.095578913081102, 2.100296919874255, 2.10513855242049, 2.110104158112385, 2.1151938985371745,
        2.120407758160253, 2.1257455540054413, 2.131206946096743, 2.1367914484408326, 2.14249844034712,
        2.1483271779025603, 2.154276805439294, 2.1603463668551885, 2.166534816668939, 2.172841030711473,
        2.179263816375477, 2.1858019223622493, 2.192454047881485, 2.1992188512737685, 2.206094958038387,
        2.2130809682594967, 2.220175463433, 2.2273770127039834, 2.2346841785303915, 2.2420955217937046,
        2.2496096063807585, 2.2572250032635783, 2.2649402941057986, 2.272754074425323, 2.2806649563431876,
        2.2886715709487038, 2.29677257031017, 2.3049666291600643, 2.3132524462820827, 2.321628745626718,
        2.3300942771802107, 2.338647817610653, 2.3472881707135214, 2.356014167677148, 2.3648246671876034,
        2.3737185553907514, 2.382694745727924, 2.3917521786603326, 2.4008898212961856, 2.410106666933172,
        2.419401734527682, 2.428774068101628, 2.43822273609614, 2.447746830680836
    ]

    /// Solves P(r) = 0.95 for λ₁ = 1, λ₂ = ρ² by Newton's method on P(r) − 0.95, with
    /// P′(r) = 1 / (2π√(λ₁λ₂)) ∫₀^{2π} r·exp(−r² q(θ)/2) dθ; the root lies in [1.96, 2.45] and grows
    /// with ρ. Accurate to about 1e-13 for ρ ≥ 2⁻¹² (the 256-point rule, doubled while nρ < 16).
    static func radius95Unit(rho: Double) -> Double {
        if rho < 1e-9 { return 1.959963984540054 }
        let l1 = 1.0, l2 = rho * rho
        // The integrand's peaks (at θ = ±π/2) are about ρ wide: the rule needs nρ ≥ 16 points across
        // one to reach full precision (256 points alone left ρ < 1/16 short: 1.9 for ρ = 1/128,
        // clamped, where the answer is 1.95998).
        var n = 256
        while Double(n) * rho < 16 && n < 1 << 16 { n *= 2 }
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
