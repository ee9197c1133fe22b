import LocusCore
import LocusNumerics

extension TrackSmoother {
    /// The smoothed means of linear (position or no-measurement) nodes as one banded least-squares
    /// solve — the oracle for the RTS pass, and the LAPACKE path for whole recordings.
    ///
    /// The normal equations of J (see `TrackSmoother`) are block-tridiagonal with 4×4 blocks:
    ///   Dₖ = [segment start: P₀⁻¹] + HᵀRₖ⁻¹H + [k > start: Qₖ⁻¹] + [k < end: Fₖ₊₁ᵀQₖ₊₁⁻¹Fₖ₊₁],
    ///   Oₖ,ₖ₊₁ = −Fₖ₊₁ᵀQₖ₊₁⁻¹,  bₖ = [start: P₀⁻¹x̄₀] + HᵀRₖ⁻¹zₖ,
    /// with, per axis, Q⁻¹ = (1/q)·[[12/Δt³, −6/Δt²], [−6/Δt², 4/Δt]]. Stored as a symmetric band of
    /// kd = 7 super-diagonals and solved by LAPACKE `dpbsv` (banded Cholesky), O(n) time and memory.
    /// - Throws: `E1003` (invalidArgument) for a range or difference node (nonlinear) or a step with Δt ≤ 0 or q ≤ 0 inside
    ///   a segment; `E4005` when the information matrix is not positive definite; `E5101` on a LAPACK bug.
    package static func smoothedMeansBanded(_ nodes: [Node]) throws(LocusError) -> [SIMD4<Double>] {
        let n = nodes.count
        guard n > 0 else { return [] }
        let kd = 7, ld = kd + 1, order = 4 * n
        var band = [Double](repeating: 0, count: ld * order)
        var rhs = [Double](repeating: 0, count: order)
        @inline(__always) func add(_ i: Int, _ j: Int, _ v: Double) {
            // Upper triangle only: A[i, j] with i ≤ j.
            let (r, c) = i <= j ? (i, j) : (j, i)
            band[(kd + r - c) + c * ld] += v
        }
        for k in 0..<n {
            let node = nodes[k]
            let base = 4 * k
            if let prior = node.prior {
                let pinv = try inverse4(prior.p)
                for a in 0..<4 {
                    var s = 0.0
                    for b in 0..<4 {
                        if b >= a { add(base + a, base + b, pinv[4 * a + b]) }
                        s += pinv[4 * a + b] * prior.x[b]
                    }
                    rhs[base + a] += s
                }
            } else {
                precondition(k > 0, "TrackSmoother: the first node must carry a prior")
                let dt = node.timeSeconds - nodes[k - 1].timeSeconds
                let q = node.processNoiseDensity
                guard dt > 0, q > 0 else {
                    throw LocusError(.invalidArgument, "banded smoother: step at t = \(node.timeSeconds) s has Δt = \(dt) s, q = \(q)")
                }
                // Qinv per axis: [[qa, qb], [qb, qc]]
                let qa = 12 / (q * dt * dt * dt), qb = -6 / (q * dt * dt), qc = 4 / (q * dt)
                // F = [[1, dt], [0, 1]] per axis: FᵀQinvF = [[qa, qa·dt + qb], [qa·dt + qb, qa·dt² + 2qb·dt + qc]]
                let fa = qa, fb = qa * dt + qb, fc = qa * dt * dt + 2 * qb * dt + qc
                // −FᵀQinv = −[[qa, qb], [qa·dt + qb, qb·dt + qc]]
                let prev = base - 4
                for axis in 0..<2 {
                    let p0 = prev + axis, v0 = prev + 2 + axis, p1 = base + axis, v1 = base + 2 + axis
                    add(p0, p0, fa); add(p0, v0, fb); add(v0, v0, fc)
                    add(p1, p1, qa); add(p1, v1, qb); add(v1, v1, qc)
                    add(p0, p1, -qa); add(p0, v1, -qb)
                    add(v0, p1, -(qa * dt + qb)); add(v0, v1, -(qb * dt + qc))
                }
            }
            switch node.measurement {
            case .none:
                break
            case let .position(x, y, rxx, rxy, ryy):
                let det = rxx * ryy - rxy * rxy
                guard det > 0 else { throw LocusError(.invalidArgument, "banded smoother: fix covariance not positive definite") }
                let i00 = ryy / det, i01 = -rxy / det, i11 = rxx / det
                add(base, base, i00); add(base, base + 1, i01); add(base + 1, base + 1, i11)
                rhs[base] += i00 * x + i01 * y
                rhs[base + 1] += i01 * x + i11 * y
            case .range, .differences:
                throw LocusError(.invalidArgument, "banded smoother: range and difference nodes are nonlinear; use the RTS pass")
            }
        }
        try SmootherBandedSolver.solve(order: order, superDiagonals: kd, band: &band, rightHandSide: &rhs)
        return (0..<n).map { SIMD4(rhs[4 * $0], rhs[4 * $0 + 1], rhs[4 * $0 + 2], rhs[4 * $0 + 3]) }
    }

    /// Smooths a tag's fixes with the banded solve (means only; the covariance is the fix's own).
    /// - Throws: as `smoothedMeansBanded`.
    static func smoothBanded(_ fixes: [PositionFix],
                                     configuration: TrackFilterConfiguration = .standard) throws(LocusError) -> [PositionFix] {
        guard let first = fixes.first else { return [] }
        let nodes = nodes(fixes: fixes, configuration: configuration)
        let means = try smoothedMeansBanded(nodes)
        var out: [PositionFix] = []
        out.reserveCapacity(nodes.count)
        for (node, x) in zip(nodes, means) where node.isOutput {
            out.append(PositionFix(timeSeconds: node.timeSeconds, tag: first.tag, floor: first.floor,
                                   position: Point3(x: x[0], y: x[1], z: first.position.z),
                                   velocity: Vector3(x: x[2], y: x[3], z: 0), covariance: first.covariance,
                                   quality: first.quality))
        }
        return out
    }

    /// Inverse of a 4×4 symmetric positive definite matrix by Gauss–Jordan with partial pivoting.
    static func inverse4(_ m: SIMD16<Double>) throws(LocusError) -> SIMD16<Double> {
        var a = m
        var inv = SIMD16<Double>(repeating: 0)
        inv[0] = 1; inv[5] = 1; inv[10] = 1; inv[15] = 1
        for c in 0..<4 {
            var pivot = c
            for r in (c + 1)..<4 where abs(a[4 * r + c]) > abs(a[4 * pivot + c]) { pivot = r }
            guard abs(a[4 * pivot + c]) > 1e-300 else {
                throw LocusError(.filterDivergence, "smoother: prior covariance is singular")
            }
            if pivot != c {
                for j in 0..<4 {
                    a.swapAt(4 * c + j, 4 * pivot + j)
                    inv.swapAt(4 * c + j, 4 * pivot + j)
                }
            }
            let d = a[4 * c + c]
            for j in 0..<4 { a[4 * c + j] /= d; inv[4 * c + j] /= d }
            for r in 0..<4 where r != c {
                let f = a[4 * r + c]
                for j in 0..<4 { a[4 * r + j] -= f * a[4 * c + j]; inv[4 * r + j] -= f * inv[4 * c + j] }
            }
        }
        return inv
    }
}

extension SIMD16 {
    fileprivate mutating func swapAt(_ i: Int, _ j: Int) {
        let t = self[i]
        self[i] = self[j]
        self[j] = t
    }
}
