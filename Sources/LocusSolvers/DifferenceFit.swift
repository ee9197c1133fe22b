import LocusCore
import LocusNumerics

/// The normal equations of the difference fit at one point, per unit σ² (σ the per-arrival noise):
/// N = Σ_groups [Σ vᵢvᵢᵀ − (Σ vᵢ)(Σ vᵢ)ᵀ/(m+1)], b = Σ_groups [Σ vᵢeᵢ − (Σ vᵢ)(Σ eᵢ)/(m+1)],
/// c = Σ_groups [Σ eᵢ² − (Σ eᵢ)²/(m+1)] (χ²·σ², m²), with vᵢ, eᵢ one group's Jacobian rows and
/// residuals (see `DifferenceFit.linearize`). Planar: the z entries are 0.
struct DifferenceNormal {
    var xx = 0.0, xy = 0.0, xz = 0.0, yy = 0.0, yz = 0.0, zz = 0.0
    var bx = 0.0, by = 0.0, bz = 0.0
    /// χ²·σ² at the point, m².
    var c = 0.0

    /// N as a symmetric matrix (F of `DifferenceGeometry` when every arrival is in the fit).
    var information: SymmetricMatrix3 { SymmetricMatrix3(xx: xx, xy: xy, xz: xz, yy: yy, yz: yz, zz: zz) }
}

/// One Gauss–Newton fit's answer.
struct DifferenceFitResult {
    /// p̂, metres (planar: z = h).
    var position: Point3
    /// The normal equations of the last linearisation (one step before p̂: the last step was within
    /// the tolerance, so they differ by O(‖δ‖)).
    var normal: DifferenceNormal
    /// Gauss–Newton steps taken.
    var iterations: Int
    /// True when the last step met the tolerance.
    var isConverged: Bool
}

/// One epoch's difference problem laid over the caller's spans and the workspace's buffers, with
/// the linearisation, the seed and the Gauss–Newton fit (the rejection search is in
/// `DifferenceFit+Rejection.swift`). Internal to `DifferenceSolver`; the pointers live only for one
/// solve.
///
/// **Estimator.** Each group g (a run of pairs sharing one arrival at the reference A, `DifferencePair`)
/// is m + 1 arrivals: the reference's, observed as 0, and each B's, observed as zⱼ; arrival i reads
/// ρᵢ(p) + β_g + noise (σ² each, independent), β_g a nuisance offset. Least squares in (p, β₁…β_G),
/// β eliminated in closed form (β̂_g = the group's mean of zᵢ − ρᵢ), leaves per group the centred sums
/// above — exactly generalised least squares on the differences with Σ = σ²(I + 11ᵀ): its inverse is
/// σ⁻²WᵀW, W = I + c 11ᵀ the whitening of `DifferenceModel`, and WᵀW = I + c(2 + mc) 11ᵀ =
/// I − 11ᵀ/(m+1). Every row comes from `DifferenceModel.jacobian` relative to the group's reference
/// (vᵢ = ∂(ρᵢ − ρ_A)/∂p, eᵢ = zᵢ − (ρᵢ − ρ_A), the reference's own row 0); the centred sums do not
/// change when a common vector is added to every row, so leaving out any arrival — the reference's
/// too — is dropping its row and lowering m + 1: the group is re-referenced to its remaining arrivals
/// (differences of differences stay valid, zⱼ − z_k = ρⱼ − ρ_k + noise).
struct DifferenceFit {
    let locators: UnsafeBufferPointer<Point3>
    let pairs: UnsafeBufferPointer<DifferencePair>
    /// Planar model: p = (x, y) at the tag height.
    let planar: Bool
    /// h, metres (planar).
    let tagHeightMeters: Double
    /// Normal matrices below this reciprocal condition (1-norm) are degenerate.
    let minimumReciprocalCondition: Double
    /// Per locator: 1 while left out of the fit.
    let excluded: UnsafeMutableBufferPointer<Int32>
    /// Per locator: the census stamp that last counted it.
    let stamps: UnsafeMutableBufferPointer<Int32>
    /// Per pair: vx, vy, vz, e at the rejection search's linearisation point.
    let rows: UnsafeMutableBufferPointer<Double>
    /// Per pair: the residual of `readingScores`.
    let residuals: UnsafeMutableBufferPointer<Double>
    /// Per locator: how long its arrivals read (`readingScores`).
    let scores: UnsafeMutableBufferPointer<Double>
    /// The seed's normal equations.
    let seedScratch: UnsafeMutableBufferPointer<Double>
    /// The last census stamp.
    var stamp: Int32 = 0

    /// Where `linearize` takes its rows from.
    enum RowSource {
        /// `DifferenceModel.jacobian` at the point, for the arrivals in the fit.
        case model
        /// The same for every pair, each row also stored in `rows` (the search's linearisation point).
        case modelStoringRows
        /// The stored `rows` (the point is ignored).
        case rows
    }

    /// The end of the group starting at pair `start`: the run of pairs sharing its arrival.
    @inline(__always)
    func groupEnd(from start: Int) -> Int {
        let first = pairs[start]
        var end = start + 1
        while end < pairs.count && pairs[end].sharesArrival(with: first) { end += 1 }
        return end
    }

    /// The point of the unknowns (x, y[, z]): planar z is the tag height.
    @inline(__always)
    func point(_ x: Double, _ y: Double, _ z: Double) -> Point3 {
        Point3(x: x, y: y, z: planar ? tagHeightMeters : z)
    }

    /// The normal equations at `x` over the arrivals in the fit (see the type's comment). O(pairs).
    /// `.model` runs the C kernel (`DifferenceModel.normalEquations`, the same sums with the model's
    /// functions inlined); the search's stored rows are summed here.
    @inline(__always)
    func linearize(at x: Point3, source: RowSource) -> DifferenceNormal {
        if source == .model {
            let normal = DifferenceModel.normalEquations(at: x, locators: locators.span, pairs: pairs.span,
                                                         excluded: UnsafeBufferPointer(excluded).span, planar: planar)
            let n = normal.information, g = normal.gradient
            return DifferenceNormal(xx: n.xx, xy: n.xy, xz: n.xz, yy: n.yy, yz: n.yz, zz: n.zz,
                                    bx: g.x, by: g.y, bz: g.z, c: normal.residualSquares)
        }
        var out = DifferenceNormal()
        var start = 0
        let count = pairs.count
        while start < count {
            let end = groupEnd(from: start)
            let reference = Int(pairs[start].reference)
            let a = locators[reference]
            var arrivals = excluded[reference] == 0 ? 1 : 0
            var sx = 0.0, sy = 0.0, sz = 0.0, se = 0.0, see = 0.0
            var sxx = 0.0, sxy = 0.0, sxz = 0.0, syy = 0.0, syz = 0.0, szz = 0.0
            var sxe = 0.0, sye = 0.0, sze = 0.0
            for j in start..<end {
                let pair = pairs[j]
                let locator = Int(pair.locator)
                let gx: Double, gy: Double, gz: Double, e: Double
                switch source {
                case .rows:
                    if excluded[locator] != 0 { continue }
                    gx = rows[4 * j]; gy = rows[4 * j + 1]; gz = rows[4 * j + 2]; e = rows[4 * j + 3]
                case .model, .modelStoringRows:
                    if source == .model && excluded[locator] != 0 { continue }
                    let (h, g) = DifferenceModel.jacobian(at: x, reference: a, locator: locators[locator])
                    gx = g.x; gy = g.y; gz = planar ? 0 : g.z; e = pair.differenceMeters - h
                    if source == .modelStoringRows {
                        rows[4 * j] = gx; rows[4 * j + 1] = gy; rows[4 * j + 2] = gz; rows[4 * j + 3] = e
                        if excluded[locator] != 0 { continue }
                    }
                }
                arrivals += 1
                sx += gx; sy += gy; sz += gz; se += e; see += e * e
                sxx += gx * gx; sxy += gx * gy; sxz += gx * gz; syy += gy * gy; syz += gy * gz; szz += gz * gz
                sxe += gx * e; sye += gy * e; sze += gz * e
            }
            if arrivals >= 2 {
                // (I + 11ᵀ)⁻¹ = WᵀW = I + κ 11ᵀ, κ = c(2 + mc) = −1/(m+1), c the model's whitening.
                let m = arrivals - 1
                let c = DifferenceModel.whitening(count: m)
                let kappa = c * (2 + Double(m) * c)
                out.xx += sxx + kappa * sx * sx; out.xy += sxy + kappa * sx * sy; out.xz += sxz + kappa * sx * sz
                out.yy += syy + kappa * sy * sy; out.yz += syz + kappa * sy * sz; out.zz += szz + kappa * sz * sz
                out.bx += sxe + kappa * sx * se; out.by += sye + kappa * sy * se; out.bz += sze + kappa * sz * se
                out.c += max(0, see + kappa * se * se)
            }
            start = end
        }
        return out
    }

    /// The structure of the fit with the current left-out locators: independent differences
    /// Σ_groups m (groups of at least 2 arrivals in the fit) and the distinct locators they use.
    /// With `eligible`, the used locators' indices are written there (in first-use order). O(pairs).
    mutating func census(eligible: UnsafeMutableBufferPointer<Int32>? = nil) -> (differences: Int, locators: Int) {
        stamp &+= 1
        var differences = 0, used = 0
        var start = 0
        while start < pairs.count {
            let end = groupEnd(from: start)
            let reference = Int(pairs[start].reference)
            var arrivals = excluded[reference] == 0 ? 1 : 0
            for j in start..<end where excluded[Int(pairs[j].locator)] == 0 { arrivals += 1 }
            if arrivals >= 2 {
                differences += arrivals - 1
                if excluded[reference] == 0 && stamps[reference] != stamp {
                    stamps[reference] = stamp
                    eligible?[used] = Int32(reference)
                    used += 1
                }
                for j in start..<end {
                    let locator = Int(pairs[j].locator)
                    if excluded[locator] == 0 && stamps[locator] != stamp {
                        stamps[locator] = stamp
                        eligible?[used] = Int32(locator)
                        used += 1
                    }
                }
            }
            start = end
        }
        return (differences, used)
    }

    /// δ = N⁻¹b by the closed-form 2×2 / 3×3 inverse, or nil when N's reciprocal condition
    /// 1/(‖N‖₁‖N⁻¹‖₁) is below the limit or not finite.
    @inline(__always)
    func step(_ n: DifferenceNormal) -> (Double, Double, Double)? {
        if planar {
            // ‖N⁻¹‖₁ of a 2×2 is ‖N‖₁/|det|: rcond = |det|/‖N‖₁², tested without a division.
            let det = n.xx * n.yy - n.xy * n.xy
            let norm = max(abs(n.xx) + abs(n.xy), abs(n.xy) + abs(n.yy))
            guard det.isFinite, norm.isFinite, abs(det) > 0, abs(det) >= minimumReciprocalCondition * norm * norm else {
                return nil
            }
            let inverse = 1 / det
            return ((n.yy * n.bx - n.xy * n.by) * inverse, (n.xx * n.by - n.xy * n.bx) * inverse, 0)
        }
        let c00 = n.yy * n.zz - n.yz * n.yz, c01 = n.xz * n.yz - n.xy * n.zz, c02 = n.xy * n.yz - n.xz * n.yy
        let c11 = n.xx * n.zz - n.xz * n.xz, c12 = n.xy * n.xz - n.xx * n.yz, c22 = n.xx * n.yy - n.xy * n.xy
        let det = n.xx * c00 + n.xy * c01 + n.xz * c02
        let norm = max(abs(n.xx) + abs(n.xy) + abs(n.xz), abs(n.xy) + abs(n.yy) + abs(n.yz),
                       abs(n.xz) + abs(n.yz) + abs(n.zz))
        let cofactorNorm = max(abs(c00) + abs(c01) + abs(c02), abs(c01) + abs(c11) + abs(c12),
                               abs(c02) + abs(c12) + abs(c22))
        // rcond = |det| / (‖N‖₁ ‖adj N‖₁), tested without a division.
        guard det.isFinite, norm.isFinite, cofactorNorm.isFinite, abs(det) > 0,
              abs(det) >= minimumReciprocalCondition * norm * cofactorNorm else { return nil }
        let inverse = 1 / det
        return ((c00 * n.bx + c01 * n.by + c02 * n.bz) * inverse,
                (c01 * n.bx + c11 * n.by + c12 * n.bz) * inverse,
                (c02 * n.bx + c12 * n.by + c22 * n.bz) * inverse)
    }

    /// Gauss–Newton on χ² from `start` over the arrivals in the fit: δ = N⁻¹b, halved (at most 10
    /// times) while χ² would grow or N would turn singular (far outliers can pull the all-arrivals
    /// fit towards a point where the geometry degenerates; it then stops at the last good point).
    /// Stops when ‖δ‖ ≤ `tolerance` or the estimated distance to the optimum ‖δₖ‖ρ/(1 − ρ),
    /// ρ = ‖δₖ‖/‖δₖ₋₁‖ < 1, is; or after `maximumIterations` steps.
    /// - Throws: E4002 a singular normal matrix, E4004 a non-finite iterate or χ².
    func gaussNewton(from start: Point3, tolerance: Double,
                     maximumIterations: Int) throws(LocusError) -> DifferenceFitResult {
        var x = point(start.x, start.y, start.z)
        var normal = linearize(at: x, source: .model)
        guard normal.c.isFinite else { throw LocusError(.solverDiverged, "the difference fit produced a non-finite χ²") }
        guard var d = step(normal) else {
            throw LocusError(.degenerateGeometry,
                             "the differences' locators do not determine the position (singular normal matrix)")
        }
        var previous = Double.infinity
        var iterations = 0
        var converged = false
        while iterations < maximumIterations {
            iterations += 1
            var t = 1.0
            var next = point(x.x + d.0, x.y + d.1, x.z + d.2)
            let length = (d.0 * d.0 + d.1 * d.1 + d.2 * d.2).squareRoot()
            guard next.isFinite, length.isFinite else {
                throw LocusError(.solverDiverged, "the difference fit produced a non-finite iterate")
            }
            // ‖δ‖ρ/(1 − ρ) ≤ tol with ρ = ‖δ‖/‖δₖ₋₁‖ < 1, multiplied out: ‖δ‖² ≤ tol (‖δₖ₋₁‖ − ‖δ‖)
            // (no division on the iteration's critical path).
            if length <= tolerance
                || (previous.isFinite && length < previous && length * length <= tolerance * (previous - length)) {
                x = next
                converged = true
                break
            }
            var nextNormal = linearize(at: next, source: .model)
            var nextStep = step(nextNormal)
            var halvings = 0
            while !(nextNormal.c <= normal.c * (1 + 1e-12) + 1e-18 && nextStep != nil) && halvings < 10 {
                t *= 0.5
                halvings += 1
                next = point(x.x + t * d.0, x.y + t * d.1, x.z + t * d.2)
                nextNormal = linearize(at: next, source: .model)
                nextStep = step(nextNormal)
            }
            guard nextNormal.c.isFinite else {
                throw LocusError(.solverDiverged, "the difference fit produced a non-finite χ²")
            }
            guard let following = nextStep else { break }   // no way on: stay where the geometry holds
            x = next
            normal = nextNormal
            d = following
            previous = t * length
        }
        return DifferenceFitResult(position: x, normal: normal, iterations: iterations, isConverged: converged)
    }

    /// The closed-form start: the linear least squares in (p, r_A) of the largest group (the most
    /// arrivals in the fit), r_A = ρ_A the distance to its pivot A — its reference, or when that is
    /// left out its first remaining arrival (zⱼ − z_A then stands for zⱼ: differences of differences).
    /// With p and the locators taken relative to a, ρⱼ = zⱼ + r_A squared minus r_A² = ‖p‖² gives
    ///   spatial: 2 bⱼ·p + 2 zⱼ r_A = ‖bⱼ‖² − zⱼ²   (unknowns x, y, z, r_A: 4 differences at least);
    ///   planar (p_z = h − a_z = d known):
    ///            2 (bⱼₓ x + bⱼᵧ y) + 2 zⱼ r_A = bⱼₓ² + bⱼᵧ² + bⱼ_z² − 2 d bⱼ_z − zⱼ²
    ///   (unknowns x, y, r_A: 3 differences at least),
    /// solved by its normal equations (LDLᵀ). nil when no group has enough differences or the
    /// system is singular; the caller then starts elsewhere (the locators' centroid).
    func seed() -> Point3? {
        var bestStart = -1, bestEnd = -1, bestCount = 0
        var start = 0
        while start < pairs.count {
            let end = groupEnd(from: start)
            var count = excluded[Int(pairs[start].reference)] == 0 ? 1 : 0
            for j in start..<end where excluded[Int(pairs[j].locator)] == 0 { count += 1 }
            if count > bestCount { bestCount = count; bestStart = start; bestEnd = end }
            start = end
        }
        let q = planar ? 3 : 4
        guard bestCount >= q + 1 else { return nil }
        // The pivot: the reference (z = 0) or the first remaining arrival.
        var pivot = Int(pairs[bestStart].reference), pivotDifference = 0.0
        if excluded[pivot] != 0 {
            for j in bestStart..<bestEnd where excluded[Int(pairs[j].locator)] == 0 {
                pivot = Int(pairs[j].locator); pivotDifference = pairs[j].differenceMeters
                break
            }
        }
        let a = locators[pivot]
        let d = tagHeightMeters - a.z
        // The normal equations' lower triangle and right-hand side, summed in scalars (q ≤ 4).
        var n00 = 0.0, n10 = 0.0, n11 = 0.0, n20 = 0.0, n21 = 0.0, n22 = 0.0, n30 = 0.0, n31 = 0.0, n32 = 0.0, n33 = 0.0
        var r0 = 0.0, r1 = 0.0, r2 = 0.0, r3 = 0.0
        for j in bestStart..<bestEnd {
            let pair = pairs[j]
            let locator = Int(pair.locator)
            guard excluded[locator] == 0, locator != pivot else { continue }
            let b = locators[locator]
            let bx = b.x - a.x, by = b.y - a.y, bz = b.z - a.z, z = pair.differenceMeters - pivotDifference
            let u0 = 2 * bx, u1 = 2 * by
            let u2: Double, u3: Double, rhs: Double
            if planar {
                u2 = 2 * z; u3 = 0
                rhs = bx * bx + by * by + bz * bz - 2 * d * bz - z * z
            } else {
                u2 = 2 * bz; u3 = 2 * z
                rhs = bx * bx + by * by + bz * bz - z * z
            }
            n00 += u0 * u0; n10 += u1 * u0; n11 += u1 * u1; n20 += u2 * u0; n21 += u2 * u1; n22 += u2 * u2
            n30 += u3 * u0; n31 += u3 * u1; n32 += u3 * u2; n33 += u3 * u3
            r0 += u0 * rhs; r1 += u1 * rhs; r2 += u2 * rhs; r3 += u3 * rhs
        }
        let s = seedScratch
        s[0] = n00; s[q] = n10; s[q + 1] = n11; s[2 * q] = n20; s[2 * q + 1] = n21; s[2 * q + 2] = n22
        s[q * q] = r0; s[q * q + 1] = r1; s[q * q + 2] = r2
        if q == 4 { s[12] = n30; s[13] = n31; s[14] = n32; s[15] = n33; s[19] = r3 }
        // LDLᵀ in the lower triangle (no square root; one division a row, its reciprocal kept on the
        // diagonal), then the two triangular solves on the right-hand side.
        var scale = 0.0
        for u in 0..<q { scale = max(scale, s[u * q + u]) }
        guard scale > 0, scale.isFinite else { return nil }
        for u in 0..<q {
            var diagonal = s[u * q + u]
            for k in 0..<u { diagonal -= s[u * q + k] * s[u * q + k] * s[k * q + k] }
            guard diagonal > 1e-12 * scale else { return nil }
            for v in (u + 1)..<q {
                var value = s[v * q + u]
                for k in 0..<u { value -= s[v * q + k] * s[u * q + k] * s[k * q + k] }
                s[v * q + u] = value
            }
            let reciprocal = 1 / diagonal
            for v in (u + 1)..<q { s[v * q + u] *= reciprocal }
            s[u * q + u] = diagonal
        }
        for u in 0..<q {
            var value = s[q * q + u]
            for k in 0..<u { value -= s[u * q + k] * s[q * q + k] }
            s[q * q + u] = value
        }
        for u in stride(from: q - 1, through: 0, by: -1) {
            var value = s[q * q + u] / s[u * q + u]
            for k in (u + 1)..<q { value -= s[k * q + u] * s[q * q + k] }
            s[q * q + u] = value
        }
        let p = point(a.x + s[q * q], a.y + s[q * q + 1], planar ? tagHeightMeters : a.z + s[q * q + 2])
        return p.isFinite ? p : nil
    }

    /// True when `x` lies outside the site: the bounding box of the locators `eligible[0..<count]`
    /// widened horizontally by half its longer horizontal side and vertically by half its height
    /// span (at least 2 m) — a 20 × 15 m hall with locators at 0.2–4.5 m: x ∈ [−10, 30],
    /// z ∈ [−1.8, 6.5]. Spatial TDoA has a second solution out there — measured 8–20 m below the
    /// floor or 3–8 m above the ceiling, with a low χ² when an arrival is NLOS — which no tag heard
    /// by these locators occupies.
    ///
    /// `ceiling` (m, a subset's fit in the rejection search): also outside when spatial and more than
    /// this above the highest eligible locator (`isAboveLocators`).
    func isOutsideSite(_ x: Point3, eligible: UnsafeMutableBufferPointer<Int32>, count: Int,
                       ceiling: Double? = nil) -> Bool {
        guard count > 0 else { return false }
        var low = locators[Int(eligible[0])], high = low
        for e in 1..<max(1, count) {
            let l = locators[Int(eligible[e])]
            low = Point3(x: min(low.x, l.x), y: min(low.y, l.y), z: min(low.z, l.z))
            high = Point3(x: max(high.x, l.x), y: max(high.y, l.y), z: max(high.z, l.z))
        }
        let margin = 0.5 * max(high.x - low.x, high.y - low.y), vertical = max(2, 0.5 * (high.z - low.z))
        let top = ceiling.map { min($0, vertical) } ?? vertical
        return !(x.x >= low.x - margin && x.x <= high.x + margin && x.y >= low.y - margin && x.y <= high.y + margin
                 && (planar || (x.z >= low.z - vertical && x.z <= high.z + top)))
    }

    /// How far above the highest locator a candidate subset's spatial fit may lie: 0.5 m plus its
    /// vertical standard deviation σ√(N⁻¹)_zz (m; σ² per arrival, m²; ∞ planar or singular).
    /// Tags are not mounted above the locators, and with 3 of 8 arrivals NLOS a wrong subset's
    /// fit up there (spatial TDoA's second solution) can pass the χ² gate; the σ term keeps a right
    /// set's fit whose weak vertical strays (a flat 0.5 m: hall 1.83 × CRB but SolverBench's n = 16
    /// spatial NLOS RMSE 0.198 → 0.210 m; 0.5 m + 3σ: 1.95 ×; 0.5 m + σ: 1.84 ×, 0.198 m).
    func ceilingMargin(_ n: DifferenceNormal, sigmaSquared: Double) -> Double {
        guard !planar else { return .infinity }
        let c22 = n.xx * n.yy - n.xy * n.xy
        let det = n.xx * (n.yy * n.zz - n.yz * n.yz) + n.xy * (n.xz * n.yz - n.xy * n.zz) + n.xz * (n.xy * n.yz - n.xz * n.yy)
        guard det > 0, c22 > 0 else { return .infinity }
        return 0.5 + (sigmaSquared * c22 / det).squareRoot()
    }

    /// The centroid of the locators in the fit (planar: at the tag height) — the start when no
    /// group is large enough for `seed()`.
    func centroid() -> Point3 {
        var x = 0.0, y = 0.0, z = 0.0, count = 0.0
        var start = 0
        while start < pairs.count {
            let end = groupEnd(from: start)
            let reference = Int(pairs[start].reference)
            if excluded[reference] == 0 {
                let a = locators[reference]
                x += a.x; y += a.y; z += a.z; count += 1
            }
            for j in start..<end where excluded[Int(pairs[j].locator)] == 0 {
                let b = locators[Int(pairs[j].locator)]
                x += b.x; y += b.y; z += b.z; count += 1
            }
            start = end
        }
        return count > 0 ? point(x / count, y / count, z / count) : point(0, 0, 0)
    }
}
