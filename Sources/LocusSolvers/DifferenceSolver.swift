import LocusCore
import LocusNumerics

/// The range-difference (TDoA) solver: one epoch's `DifferencePair`s in, the weighted least-squares
/// position out, as a `TrilaterationSolution` (the range solver's answer, so the engine maps both
/// the same way).
///
/// **Model.** zⱼ = ρ_B − ρ_A + noise (m), ρ = ‖p − locator‖, A the pair's reference; σ
/// (`configuration.sigmaMeters`) is the noise of ONE ARRIVAL, so a difference has variance 2σ² and
/// the m differences of a group sharing one arrival at A have Σ = σ²(I + 11ᵀ) (`DifferenceModel`,
/// where the prediction, its Jacobian and the whitening are spelled; this solver only calls them).
///
/// **Estimator.** Generalised least squares, min Σ_groups rᵀΣ⁻¹r, r = z − h(p), solved in its
/// equivalent pseudo-range form: the m + 1 arrivals of a group read ρᵢ(p) + β_g with independent
/// noise σ² (the reference's arrival observed as 0), β_g a nuisance offset per group, eliminated in
/// closed form — the same estimate and covariance as Σ above (`DifferenceFit`; the tests compare with
/// a dense GLS on Σ). Steps:
/// 0. Warm start (optional `seed`, the tag's previous fix): Gauss–Newton from there; its fit is the
///    answer when it converged inside the site with χ² within the gate (steps 1–3 skipped), else
///    it is dropped and the solve runs as without a seed.
/// 1. Start: the linear least squares in (p, ρ_A) of the largest group (planar at the tag height;
///    `DifferenceFit.seed`), else the locators' centroid.
/// 2. Gauss–Newton with closed-form 2×2/3×3 solves (step halving while χ² would grow), to
///    `convergenceToleranceMeters` or `maximumIterations`.
/// 3. NLOS (`isRobust`): when χ² > χ²₀.₉₉₅(dof) (Wilson–Hilferty), the range kernel's penalised
///    subset search over LOCATORS — min χ²(without E) + λ|E| (λ = `rejectionPenalty`, |E| ≤
///    `maximumRejections`), among sets whose locators' arrivals read long at the fit without them;
///    leaving out a group's reference re-references the group to its other arrivals
///    (`DifferenceFit.searchRejections`). There is no common-bias guard: a bias common to every
///    arrival cancels in a difference.
/// 4. Figures: covariance σ²F⁻¹ · max(1, χ²/dof) with F the information of the differences in the
///    fit (`DifferenceGeometry.covariance`; the Cramér–Rao bound σ²F⁻¹ on clean data), the
///    DIFFERENCE geometry's HDOP/VDOP/PDOP (√ of F⁻¹'s entries), χ² (σ units), dof = Σ m − p,
///    residual RMS √(σ²χ²/Σ m) (m per arrival: the whitened residuals' RMS), the rejected locators.
///
/// Mode: `.planar` (p = (x, y) at `tagHeightMeters`), `.spatial`, or `.automatic` by the range
/// solver's rule (`TrilaterationKernel.chooseModel` on the given locators). `sigmaGrowthPerMeter` and
/// the common-bias guard of the configuration are not used.
///
/// No heap allocation with a reused `DifferenceWorkspace` (grown once); no LAPACK. Deterministic.
package struct DifferenceSolver: Sendable {
    /// The settings this solver uses (the range solver's; σ per arrival).
    var configuration: TrilaterationConfiguration

    /// A solver with the given settings.
    package init(configuration: TrilaterationConfiguration = .standard) { self.configuration = configuration }

    /// Solves one fix from the epoch's `pairs` (differences with biases removed) over `locators`
    /// (the epoch's distinct locator positions, indexed by the pairs). Complexity O(pairs · steps)
    /// when the χ² gate passes. With a reused `workspace` a call allocates nothing.
    ///
    /// `seed` (optional, m; planar: its z is ignored) is a warm start — the tag's previous fix.
    /// Gauss–Newton then starts there instead of at the closed form (step 1 is skipped), and its
    /// answer stands only when it converged inside the site with χ² within the gate; otherwise the
    /// solve runs exactly as without a seed (the closed form, the search). A seed can therefore only
    /// change a fix by moving it within the convergence tolerance of the same least-squares optimum
    /// (or to another optimum that passes the gate — none was found in the tests, from 1 km away);
    /// it never changes a fix that needs the search. Deterministic for a given seed.
    /// - Throws: E4001 too few independent differences (3 from 4 locators planar, 4 from 5
    ///   spatial), E4002 degenerate geometry (a singular normal matrix, reciprocal condition below
    ///   `minimumReciprocalCondition`, or PDOP above `maximumDOP`), E4003 a non-finite difference,
    ///   E4004 a non-finite iterate, E1003 an invalid configuration, a non-finite locator or a pair
    ///   whose indices are out of range or equal.
    package func solve(locators: Span<Point3>, pairs: Span<DifferencePair>, seed: Point3? = nil,
                       workspace: inout DifferenceWorkspace) throws(LocusError) -> TrilaterationSolution {
        guard configuration.isValid else {
            throw LocusError(.invalidArgument, "invalid difference solver configuration")
        }
        let n = locators.count
        for i in 0..<n where !locators[i].isFinite {
            throw LocusError(.invalidArgument, "locator \(i) has a non-finite coordinate")
        }
        for k in 0..<pairs.count {
            let pair = pairs[k]
            guard pair.reference >= 0, Int(pair.reference) < n, pair.locator >= 0, Int(pair.locator) < n,
                  pair.reference != pair.locator else {
                throw LocusError(.invalidArgument,
                                 "difference pair \(k) names locators \(pair.reference), \(pair.locator) of \(n)")
            }
            guard pair.differenceMeters.isFinite else {
                throw LocusError(.invalidRange, "difference \(k) is not finite")
            }
        }
        let model = TrilaterationKernel.chooseModel(locators: locators, requested: configuration.mode.kernelModel,
                                                    planarHeightSpreadRatio: configuration.planarHeightSpreadRatio)
        workspace.reserve(locators: n, pairs: pairs.count)
        return try Self.solve(locators: locators, pairs: pairs, planar: model == .planar, configuration: configuration,
                              seed: seed, scratch: &workspace.scratch, marks: &workspace.marks)
    }

    /// Convenience overload over arrays (allocates a workspace).
    /// - Throws: as `solve(locators:pairs:workspace:)`.
    func solve(locators: [Point3], pairs: [DifferencePair],
                       seed: Point3? = nil) throws(LocusError) -> TrilaterationSolution {
        var workspace = DifferenceWorkspace()
        return try solve(locators: locators.span, pairs: pairs.span, seed: seed, workspace: &workspace)
    }

    /// Array overload reusing `workspace`.
    /// - Throws: as `solve(locators:pairs:workspace:)`.
    func solve(locators: [Point3], pairs: [DifferencePair], seed: Point3? = nil,
               workspace: inout DifferenceWorkspace) throws(LocusError) -> TrilaterationSolution {
        try solve(locators: locators.span, pairs: pairs.span, seed: seed, workspace: &workspace)
    }

    /// 99.5 % quantile of χ² with k degrees of freedom by Wilson–Hilferty,
    /// k (1 − 2/(9k) + z √(2/(9k)))³, z = 2.5758293035489 (within 0.7 % of the table at k = 1, closer
    /// beyond); +∞ for k < 1 (nothing to test).
    static func chiSquareQuantile995(degreesOfFreedom k: Int) -> Double {
        guard k >= 1 else { return .infinity }
        let a = 2 / (9 * Double(k))
        let t = 1 - a + 2.5758293035489 * a.squareRoot()
        return Double(k) * t * t * t
    }

    /// The solve over the spans' and the workspace's buffers (taken as two inout arrays, as
    /// `KernelTrilaterator` does: a mutable span of each at once would overlap two accesses to the
    /// one workspace).
    private static func solve(locators: Span<Point3>, pairs: Span<DifferencePair>, planar: Bool,
                              configuration: TrilaterationConfiguration, seed: Point3?, scratch: inout [Double],
                              marks: inout [Int32]) throws(LocusError) -> TrilaterationSolution {
        var doubles = scratch.mutableSpan
        var ints = marks.mutableSpan
        return try locators.withUnsafeBufferPointer { (locators) throws(LocusError) in
            try pairs.withUnsafeBufferPointer { (pairs) throws(LocusError) in
                try doubles.withUnsafeMutableBufferPointer { (doubles) throws(LocusError) in
                    try ints.withUnsafeMutableBufferPointer { (ints) throws(LocusError) in
                        try solve(locators: locators, pairs: pairs, planar: planar, configuration: configuration,
                                  seed: seed, doubles: doubles, ints: ints)
                    }
                }
            }
        }
    }

    /// Steps 1–4 of the type's comment in carved workspace buffers.
    private static func solve(locators: UnsafeBufferPointer<Point3>, pairs: UnsafeBufferPointer<DifferencePair>,
                              planar: Bool, configuration c: TrilaterationConfiguration, seed: Point3?,
                              doubles: UnsafeMutableBufferPointer<Double>,
                              ints: UnsafeMutableBufferPointer<Int32>) throws(LocusError) -> TrilaterationSolution {
        let n = locators.count, count = pairs.count, slots = DifferenceWorkspace.candidateSlots
        @inline(__always) func carve(_ base: UnsafeMutableBufferPointer<Double>, _ from: Int,
                                     _ length: Int) -> UnsafeMutableBufferPointer<Double> {
            UnsafeMutableBufferPointer(rebasing: base[from..<(from + length)])
        }
        @inline(__always) func carve(_ base: UnsafeMutableBufferPointer<Int32>, _ from: Int,
                                     _ length: Int) -> UnsafeMutableBufferPointer<Int32> {
            UnsafeMutableBufferPointer(rebasing: base[from..<(from + length)])
        }
        let excluded = carve(ints, 0, n), stamps = carve(ints, n, n)
        for i in 0..<n { excluded[i] = 0; stamps[i] = 0 }
        var fit = DifferenceFit(locators: locators, pairs: pairs, planar: planar, tagHeightMeters: c.tagHeightMeters,
                                minimumReciprocalCondition: c.minimumReciprocalCondition, excluded: excluded,
                                stamps: stamps, rows: carve(doubles, 0, 4 * count),
                                residuals: carve(doubles, 4 * count, count), scores: carve(doubles, 5 * count, n),
                                seedScratch: carve(doubles, 5 * count + n + 4 * slots, DifferenceWorkspace.seedDoubles))
        let unknowns = planar ? 2 : 3
        let eligible = carve(ints, 2 * n, n)
        let all = fit.census(eligible: eligible)
        guard all.differences >= unknowns + 1, all.locators >= unknowns + 2 else {
            let mode = planar ? "planar" : "spatial"
            throw LocusError(.tooFewRanges, "too few independent differences: \(unknowns + 1) from \(unknowns + 2) locators "
                             + "needed in \(mode) mode, \(all.differences) from \(all.locators) given")
        }
        let sigmaSquared = c.sigmaMeters * c.sigmaMeters
        let gate = chiSquareQuantile995(degreesOfFreedom: all.differences - unknowns)
        // The warm start: its fit stands when it converged inside the site and passes the χ² gate
        // (nothing to search); anything else is the cold solve below, as without a seed.
        if let seed, seed.isFinite,
           let warm = try? fit.gaussNewton(from: seed, tolerance: c.convergenceToleranceMeters,
                                           maximumIterations: c.maximumIterations),
           warm.isConverged, warm.normal.c / sigmaSquared <= gate,
           !fit.isOutsideSite(warm.position, eligible: eligible, count: all.locators) {
            return try answer(warm, used: all, rejected: 0, mask: 0, planar: planar, configuration: c)
        }
        let start = fit.seed() ?? fit.centroid()
        var result: DifferenceFitResult
        var failure: LocusError?
        do {
            result = try fit.gaussNewton(from: start, tolerance: c.convergenceToleranceMeters,
                                         maximumIterations: c.maximumIterations)
        } catch {
            // Robust: gross outliers can wreck the all-arrivals fit (its normal matrix singular on
            // the way); the search may still find a set without them (every set beats χ² = ∞).
            // Plain, or when no set is found: the error stands.
            guard c.isRobust else { throw error }
            var normal = fit.linearize(at: start, source: .model)
            normal.c = .infinity
            result = DifferenceFitResult(position: start, normal: normal, iterations: 0, isConverged: false)
            failure = error
        }
        // The second solution (see `DifferenceFit.isOutsideSite`): try again from the centroid.
        var outside = failure == nil && fit.isOutsideSite(result.position, eligible: eligible, count: all.locators)
        if outside, let inside = try? fit.gaussNewton(from: fit.centroid(), tolerance: c.convergenceToleranceMeters,
                                                      maximumIterations: c.maximumIterations),
           !fit.isOutsideSite(inside.position, eligible: eligible, count: all.locators) {
            result = inside
            outside = false
        }
        var rejected = 0
        let best = carve(ints, 4 * n, n)
        if c.isRobust && (failure != nil || outside || !(result.normal.c / sigmaSquared <= gate)) {
            let sets = DifferenceSearchSets(eligible: eligible, count: all.locators, level: carve(ints, 3 * n, n),
                                            best: best,
                                            candidate: carve(ints, 5 * n, n), picks: carve(ints, 6 * n, 4 * slots),
                                            combination: carve(ints, 6 * n + 4 * slots, 4),
                                            predicted: carve(doubles, 5 * count + n, slots),
                                            starts: carve(doubles, 5 * count + n + slots, 3 * slots))
            let settings = DifferenceSearchSettings(rejectionPenalty: c.rejectionPenalty,
                                                    maximumRejections: c.maximumRejections, sigmaSquared: sigmaSquared,
                                                    tolerance: c.convergenceToleranceMeters,
                                                    maximumIterations: c.maximumIterations)
            (result, rejected) = try fit.searchRejections(full: result, sets: sets, settings: settings)
        }
        if let failure, rejected == 0 { throw failure }
        // A spatial fit that no search brought back inside the site is the second solution (metres
        // under the floor or over the ceiling: `DifferenceFit.isOutsideSite`), never a position.
        if !planar && fit.isOutsideSite(result.position, eligible: eligible, count: all.locators) {
            throw LocusError(.degenerateGeometry, "the differences' spatial fit lies outside the locators' site (their second solution)")
        }
        var mask: UInt64 = 0
        for q in 0..<rejected where best[q] < 64 { mask |= 1 << UInt64(best[q]) }
        let used = rejected > 0 ? fit.census() : all
        return try answer(result, used: used, rejected: rejected, mask: mask, planar: planar, configuration: c)
    }

    /// Step 4 of the type's comment: the solution's figures from the final fit over `used` (its
    /// differences and locators).
    /// - Throws: E4002 a singular geometry at the solution or PDOP above the limit.
    private static func answer(_ result: DifferenceFitResult, used: (differences: Int, locators: Int),
                               rejected: Int, mask: UInt64, planar: Bool,
                               configuration c: TrilaterationConfiguration) throws(LocusError) -> TrilaterationSolution {
        let unknowns = planar ? 2 : 3
        let sigmaSquared = c.sigmaMeters * c.sigmaMeters
        let dof = used.differences - unknowns
        let chiSquare = result.normal.c / sigmaSquared
        guard let q = DifferenceGeometry.covariance(result.normal.information, planar: planar,
                                                    minimumReciprocalCondition: c.minimumReciprocalCondition) else {
            throw LocusError(.degenerateGeometry, "the differences' geometry is singular at the solution")
        }
        let hdop = (q.xx + q.yy).squareRoot(), pdop = (q.xx + q.yy + q.zz).squareRoot()
        guard pdop.isFinite, pdop <= c.maximumDOP else {
            throw LocusError(.degenerateGeometry, "difference PDOP \(pdop) above \(c.maximumDOP)")
        }
        let factor = sigmaSquared * max(1, dof > 0 ? chiSquare / Double(dof) : 1)
        let covariance = SymmetricMatrix3(xx: q.xx * factor, xy: q.xy * factor, xz: q.xz * factor,
                                          yy: q.yy * factor, yz: q.yz * factor, zz: q.zz * factor)
        return TrilaterationSolution(
            position: result.position, covariance: covariance, model: planar ? .planar : .spatial, hdop: hdop,
            vdop: planar ? nil : q.zz.squareRoot(), pdop: pdop,
            residualRMSMeters: (result.normal.c / Double(max(1, used.differences))).squareRoot(),
            chiSquare: chiSquare, degreesOfFreedom: dof, rejectedMask: mask, rejectedCount: rejected,
            locatorsUsed: used.locators, iterations: result.iterations, isConverged: result.isConverged)
    }
}
