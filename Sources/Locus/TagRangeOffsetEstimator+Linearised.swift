import LocusCore

extension TagRangeOffsetEstimator {
    /// What the seeded one-linearisation solve of an epoch came to.
    enum LinearisedOutcome {
        /// The epoch's solution, its ranges dropped as outliers and its first worst range.
        case solved(Epoch)
        /// Too few usable ranges, a locator at the seed, a singular geometry or a non-finite result:
        /// the epoch is not used (the iterative path would give up on it as well).
        case unusable
        /// The position step |Δx| + |Δy| reached `seededStepToleranceMeters`: the seed was far from
        /// the epoch's solution and one linearisation there is not accurate enough. `position` =
        /// seed + (Δₓ, Δ_y) and `offsetMeters` = Δ_b are one Gauss–Newton step on (the outliers found
        /// so far left out): a start closer to the epoch's solution than the seed.
        case far(position: Point2, offsetMeters: Double)
    }

    /// One epoch's (x, y, b) solution linearised ONCE at the tracked seed s = (xₛ, yₛ), b = 0.
    ///
    /// One pass over the n ranges computes, for range i to locator aᵢ with the tag at height h,
    /// ρᵢ = ‖(xₛ, yₛ, h) − aᵢ‖ (m), the row hᵢ = ((xₛ − aᵢₓ)/ρᵢ, (yₛ − aᵢ_y)/ρᵢ, 1) and the residual
    /// vᵢ = rᵢ − ρᵢ (m), kept in two stack buffers (≤ 64 rows: ≤ 1 KiB and ≤ ½ KiB, under the
    /// standard library's always-on-the-stack limit, so no heap). Then
    /// N = Σ hᵢhᵢᵀ, g = Σ hᵢvᵢ, Δ = N⁻¹g (adjugate of the 3×3 N), and the linearised residuals
    /// after the step vᵢ' = vᵢ − hᵢ·Δ. While the largest |vₖ'| exceeds `rejectionSigmas`·σ and more
    /// than max(4, `minimumRanges`) ranges remain, range k is dropped by the downdate
    /// N ← N − hₖhₖᵀ, g ← g − hₖvₖ and Δ solved again — no new square root or division per range.
    /// The result is b = Δ_b (m), position s + (Δₓ, Δ_y), cofactor (N⁻¹)_bb (times the variance factor
    /// when the worst |vₖ'| stays beyond the limit with no range to spare: `softEpochVarianceFactor`).
    ///
    /// Accuracy: this is one Gauss–Newton step from the seed. With the seed a distance d from the
    /// epoch's solution, the step's error (and each vᵢ' 's error against the exact residual) is
    /// O(d²/ρ) — ρ being the ranges, metres. From a tracked seed a few cm away (the step gate
    /// `seededStepToleranceMeters`, 15 cm, applied to the final Δ's position part) and ranges of
    /// metres, that is ~1 mm (a few mm at the gate), far below an epoch's σ of the offset (σ·√(N⁻¹)_bb ≈ 4 cm for 8 ranges of
    /// σ = 0.1 m); the iterative path agrees to that. Before an outlier is dropped, its pull may
    /// make the intermediate Δ larger (decimetres): the residuals then err by centimetres, small
    /// against the 3σ = 0.3 m rejection threshold. A final step ≥ the gate returns `.far` with the
    /// point reached, where the iterative solve continues.
    ///
    /// Called with n ≥ max(4, `minimumRanges`) and n ≤ 64 ranges.
    static func solveLinearised(locators: UnsafeBufferPointer<Point3>, rangesMeters: UnsafeBufferPointer<Double>,
                                count n: Int, tagHeightMeters h: Double, seed: Point2,
                                configuration c: TagRangeOffsetConfiguration) -> LinearisedOutcome {
        withUnsafeTemporaryAllocation(of: SIMD2<Double>.self, capacity: n) { directions in
            withUnsafeTemporaryAllocation(of: Double.self, capacity: n) { residuals in
                solveLinearised(locators: locators, rangesMeters: rangesMeters, count: n, tagHeightMeters: h, seed: seed,
                                configuration: c, directions: directions, residuals: residuals)
            }
        }
    }

    /// `solveLinearised` on caller-owned scratch: `directions[i]` = (∂ρᵢ/∂x, ∂ρᵢ/∂y), `residuals[i]` = vᵢ (m).
    private static func solveLinearised(locators: UnsafeBufferPointer<Point3>, rangesMeters: UnsafeBufferPointer<Double>,
                                        count n: Int, tagHeightMeters h: Double, seed: Point2,
                                        configuration c: TagRangeOffsetConfiguration,
                                        directions: UnsafeMutableBufferPointer<SIMD2<Double>>,
                                        residuals: UnsafeMutableBufferPointer<Double>) -> LinearisedOutcome {
        // The one pass with square roots and divisions: the same pairs, in the same order, as the
        // iterative path's first Gauss–Newton iteration, so N and g are bit for bit its first ones.
        var normal = NormalEquations()
        var used: UInt64 = n == 64 ? ~0 : (UInt64(1) << UInt64(n)) - 1
        let usable = forEachRangePair(used: used, locators: locators, rangesMeters: rangesMeters, x: seed.x, y: seed.y, h: h,
                                      b: 0) { i, j, pair, both in
            guard pair.rho[0] > 1e-9, pair.rho[1] > 1e-9 else { return false }
            directions[i] = SIMD2(pair.hx[0], pair.hy[0])
            residuals[i] = pair.v[0]
            normal.add(hx: pair.hx[0], hy: pair.hy[0], v: pair.v[0])
            if both {
                directions[j] = SIMD2(pair.hx[1], pair.hy[1])
                residuals[j] = pair.v[1]
                normal.add(hx: pair.hx[1], hy: pair.hy[1], v: pair.v[1])
            }
            return true
        }
        guard usable else { return .unusable }
        let minimumUsed = c.rangesNeeded
        let limitMeters = c.rejectionSigmas * c.rangeSigmaMeters
        var usedCount = n
        var dropped: UInt64 = 0
        var firstWorst = -1, firstWorstResidual = -1.0
        while true {
            guard let (d0, d1, d2, cofactor) = normal.solved() else { return .unusable }
            // Finite as plain compares (NaN fails them; `isFinite` is an integer test of the bits).
            let largest = Double.greatestFiniteMagnitude
            guard abs(d0) <= largest, abs(d1) <= largest, abs(d2) <= largest, cofactor > 0, cofactor <= largest else {
                return .unusable
            }
            // Linearised residuals after the step, in index order (ties keep the first, as the iterative
            // path); a plain loop with a bit test (usually every range is in use).
            let step = SIMD2(d0, d1)
            var worst = 0, worstResidual = -1.0, squares = 0.0
            for k in 0..<n where (used >> UInt64(k)) & 1 != 0 {
                let r = abs(residuals[k] - (directions[k] * step).sum() - d2)
                squares += r * r
                if r > worstResidual { worstResidual = r; worst = k }
            }
            if firstWorst < 0 { firstWorst = worst; firstWorstResidual = worstResidual }
            guard usedCount > minimumUsed, worstResidual > limitMeters else {
                if abs(d0) + abs(d1) >= c.seededStepToleranceMeters { return .far(position: Point2(x: seed.x + d0, y: seed.y + d1), offsetMeters: d2) }
                // An outlier found with no range to spare: which range it is cannot be told; the offset is
                // used, down-weighted, only while the outlier is moderate (`softEpochVarianceFactor`).
                let soft = worstResidual > limitMeters
                var factor = 1.0
                if soft {
                    guard let f = c.softEpochVarianceFactor(worstResidual: worstResidual, residualSquares: squares, ranges: usedCount) else { return .unusable }
                    factor = f
                }
                let solution = Solution(position: Point2(x: seed.x + d0, y: seed.y + d1), offsetMeters: d2,
                                        offsetCofactor: cofactor * factor, worstIndex: worst, worstResidualMeters: worstResidual,
                                        residualSquares: squares)
                return .solved(Epoch(solution: solution, firstWorstIndex: firstWorst,
                                     firstWorstResidualMeters: firstWorstResidual, droppedMask: dropped, linearisations: 1, linearised: true,
                                     isSoft: soft))
            }
            // Downdate: take row k = (hx, hy, 1) and its residual out of N and g.
            normal.remove(hx: directions[worst][0], hy: directions[worst][1], v: residuals[worst])
            let bit = UInt64(1) << UInt64(worst)
            used &= ~bit
            dropped |= bit
            usedCount -= 1
        }
    }
}
