import LocusCore
@testable import LocusNumerics
@testable import LocusSolvers

/// The reference oracle the tests hold the C search (`Trilaterator`, `KernelTrilaterator`) to: the same
/// algorithm re-spelled in Swift over LAPACKE, written independently of the kernel's arithmetic (agreement
/// 1e-9 m, same rejections). Not used by the library: the C search is the one implementation
/// (12–27× faster at 4–32 locators, measured in SolverBench before this moved here).
///
/// The same algorithm as the kernel (centred coordinates, linearised seed,
/// Gauss–Newton WLS, χ² gate, penalised subset search over long-reading ranges), with LAPACKE doing the
/// linear algebra: rank-revealing `dgelsy` for the seed and every Gauss–Newton step, `dsyrk` +
/// `dpotrf`/`dpotri` for covariance and DOP. Any number of locators; the model (r̂ᵢ, ∂r̂ᵢ/∂p) is the
/// kernel's `locus_tril_model`, so both paths minimise the same function.
package struct LapackTrilaterator: Trilaterating {
    /// The settings this solver uses.
    package var configuration: TrilaterationConfiguration

    /// A LAPACKE solver with the given settings.
    package init(configuration: TrilaterationConfiguration = .standard) { self.configuration = configuration }

    /// `Trilaterating` conformance: solves in a fresh oracle workspace (`workspace` is not used).
    /// - Throws: as `solve(locators:rangesMeters:workspace:)` with a `LapackOracleWorkspace`.
    package func solve(locators: Span<Point3>, rangesMeters: Span<Double>,
                       workspace: inout TrilaterationWorkspace) throws(LocusError) -> TrilaterationSolution {
        var oracle = LapackOracleWorkspace()
        return try locators.withUnsafeBufferPointer { (locators) throws(LocusError) in
            try rangesMeters.withUnsafeBufferPointer { (rangesMeters) throws(LocusError) in
                try solve(locators: locators, rangesMeters: rangesMeters, workspace: &oracle)
            }
        }
    }

    /// Solves one fix. No allocation when `workspace` already holds `locators.count` locators.
    /// Complexity O(n p²) per Gauss–Newton step; the rejection search runs the fits described in
    /// `TrilaterationConfiguration.isRobust`.
    /// - Throws: E4001, E4002, E4003, E4004, E1003 (see `Trilaterating`); E5101 on a LAPACK misuse.
    package func solve(locators: UnsafeBufferPointer<Point3>, rangesMeters: UnsafeBufferPointer<Double>,
                       workspace ws: inout LapackOracleWorkspace) throws(LocusError) -> TrilaterationSolution {
        precondition(locators.count == rangesMeters.count, "one range per locator")
        let c = configuration
        guard c.isValid else { throw LocusError(.invalidArgument, "invalid trilateration configuration") }
        let n = locators.count
        for i in 0..<n {
            guard locators[i].isFinite else { throw LocusError(.invalidArgument, "locator \(i) has a non-finite coordinate") }
            let r = rangesMeters[i]
            guard r.isFinite, r >= 0 else { throw LocusError(.invalidRange, "a range is negative or not finite") }
        }
        let model = n == 0 ? (c.mode.kernelModel ?? .planar)
            : TrilaterationKernel.chooseModel(locators: locators.span, requested: c.mode.kernelModel,
                                              planarHeightSpreadRatio: c.planarHeightSpreadRatio)
        let p = model.unknowns
        let planar = model == .planar
        guard n >= p + 1 else {
            throw LocusError(.tooFewRanges, "too few usable ranges: 3 needed in planar mode, 4 in spatial mode")
        }
        ws.reserve(n)
        // Centre on the locators' centroid (planar: z not centred, the model uses h − zᵢ).
        var cx = 0.0, cy = 0.0, cz = 0.0
        for q in locators { cx += q.x; cy += q.y; cz += q.z }
        cx /= Double(n); cy /= Double(n); cz /= Double(n)
        if planar { cz = 0 }
        for i in 0..<n {
            let q = locators[i]
            ws.centred[i] = Point3(x: q.x - cx, y: q.y - cy, z: q.z - cz)
            let sigma = c.sigmaMeters + c.sigmaGrowthPerMeter * rangesMeters[i]
            ws.sqrtWeights[i] = 1 / sigma
            ws.isActive[i] = true
        }
        var x = try seed(n: n, planar: planar, p: p, ranges: rangesMeters, ws: &ws)
        var fit = try gaussNewton(n: n, model: model, skip: -1, tolerance: c.convergenceToleranceMeters, from: x,
                                  ranges: rangesMeters, ws: &ws)
        x = fit.x
        var used = n
        var rejectedMask: UInt64 = 0
        var rejectedCount = 0
        if c.isRobust, fit.chiSquare > TrilaterationKernel.chiSquareQuantile995(degreesOfFreedom: n - p),
           !(c.guardsAgainstCommonBias && readsCommonBias(n: n, at: x, planar: planar, ranges: rangesMeters, ws: ws)) {
            var best = try searchRejections(n: n, model: model, fullFit: fit, ranges: rangesMeters, ws: &ws)
            if planar, let reflected = try reflectedSearch(n: n, model: model, fullFit: fit, first: best, ranges: rangesMeters, ws: &ws) {
                best = reflected
            }
            fit = best
            x = fit.x
            for i in 0..<n { ws.isActive[i] = true }
            for q in 0..<ws.bestCount {
                let index = ws.bestExcluded[q]
                ws.isActive[index] = false
                if index < 64 { rejectedMask |= 1 << UInt64(index) }
            }
            rejectedCount = ws.bestCount
            used = n - rejectedCount
            if rejectedCount > 0 {   // polish the chosen fit to the full tolerance
                fit = try gaussNewton(n: n, model: model, skip: -1, tolerance: c.convergenceToleranceMeters, from: x,
                                      ranges: rangesMeters, ws: &ws)
                x = fit.x
            }
        }
        // Covariance (JᵀWJ)⁻¹ · max(1, χ²/dof) and DOP (HᵀH)⁻¹ at the solution, over the used rows.
        TrilaterationKernel.model(locators: ws.centred, count: n, model: model, tagHeightMeters: c.tagHeightMeters, at: x,
                                  rangesMeters: &ws.predicted, jacobian: &ws.jacobian, leadingDimension: n)
        var row = 0
        var sse = 0.0
        for i in 0..<n where ws.isActive[i] {
            for k in 0..<p { ws.a[row + k * used] = ws.jacobian[i + k * n] }
            let e = rangesMeters[i] - ws.predicted[i]
            sse += e * e
            row += 1
        }
        LapackLinearAlgebra.gram(of: ws.a, rows: used, columns: p, into: &ws.normal)
        try LapackLinearAlgebra.invertPositiveDefinite(&ws.normal, order: p)
        let q11 = ws.normal[0], q22 = ws.normal[1 + p], q33 = planar ? 0 : ws.normal[8]
        let pdop = (q11 + q22 + q33).squareRoot()
        guard q11 >= 0, q22 >= 0, q33 >= 0, pdop <= c.maximumDOP else {
            throw LocusError(.degenerateGeometry, "locators are collinear, coplanar or coincident: position not determined")
        }
        row = 0
        for i in 0..<n where ws.isActive[i] {
            for k in 0..<p { ws.a[row + k * used] = ws.sqrtWeights[i] * ws.jacobian[i + k * n] }
            row += 1
        }
        LapackLinearAlgebra.gram(of: ws.a, rows: used, columns: p, into: &ws.normal)
        try LapackLinearAlgebra.invertPositiveDefinite(&ws.normal, order: p)
        let dof = used - p
        let factor = dof > 0 ? max(1, fit.chiSquare / Double(dof)) : 1
        let cov: SymmetricMatrix3
        if planar {
            cov = SymmetricMatrix3(xx: ws.normal[0] * factor, xy: ws.normal[2] * factor, yy: ws.normal[3] * factor, zz: 0)
        } else {
            cov = SymmetricMatrix3(xx: ws.normal[0] * factor, xy: ws.normal[3] * factor, xz: ws.normal[6] * factor,
                                   yy: ws.normal[4] * factor, yz: ws.normal[7] * factor, zz: ws.normal[8] * factor)
        }
        let position = Point3(x: x.x + cx, y: x.y + cy, z: planar ? c.tagHeightMeters : x.z + cz)
        return TrilaterationSolution(
            position: position, covariance: cov, model: planar ? .planar : .spatial, hdop: (q11 + q22).squareRoot(),
            vdop: planar ? nil : q33.squareRoot(), pdop: pdop, residualRMSMeters: (sse / Double(used)).squareRoot(),
            chiSquare: fit.chiSquare, degreesOfFreedom: dof, rejectedMask: rejectedMask, rejectedCount: rejectedCount,
            locatorsUsed: used, iterations: fit.iterations, isConverged: fit.isConverged)
    }

    /// The kernel's second start (`reflected_search`, trilateration.c; planar, locators near one line: scatter
    /// across their principal axis ≤ 0.1 of that along it): the search again from the
    /// reflection x′ of the all-ranges fit across the locators' principal axis, when x′'s all-ranges χ² is
    /// within 4·χ²(fit) + the gate (the all-ranges fit from x′ when x′ passes the gate); its result when
    /// its penalised cost is lower than the first search's, which `ws.best…` then holds, else nil with
    /// the first search's set put back.
    private func reflectedSearch(n: Int, model: TrilaterationKernel.Model, fullFit: Fit, first: Fit,
                                 ranges: UnsafeBufferPointer<Double>, ws: inout LapackOracleWorkspace) throws(LocusError) -> Fit? {
        let lambda = configuration.rejectionPenalty
        let gate = TrilaterationKernel.chiSquareQuantile995(degreesOfFreedom: n - 2)
        var sxx = 0.0, sxy = 0.0, syy = 0.0
        for i in 0..<n { let q = ws.centred[i]; sxx += q.x * q.x; sxy += q.x * q.y; syy += q.y * q.y }
        let half = 0.5 * (sxx + syy), disc = max(0, 0.25 * (sxx - syy) * (sxx - syy) + sxy * sxy).squareRoot()
        let smaller = half - disc
        var nx = sxy, ny = smaller - sxx
        if abs(nx) + abs(ny) <= 1e-12 * (sxx + syy) { nx = smaller - syy; ny = sxy }
        let norm = (nx * nx + ny * ny).squareRoot()
        guard norm > 0, disc > 1e-12 * (sxx + syy), smaller <= 0.1 * (half + disc) else { return nil }   // near one line only
        nx /= norm; ny /= norm
        let d = fullFit.x.x * nx + fullFit.x.y * ny
        let xr = Point3(x: fullFit.x.x - 2 * d * nx, y: fullFit.x.y - 2 * d * ny, z: 0)
        var c = 0.0
        for i in 0..<n {
            let e = residual(index: i, at: xr, planar: true, ranges: ranges, ws: ws)
            c += ws.sqrtWeights[i] * ws.sqrtWeights[i] * e * e
        }
        guard c < 4 * fullFit.chiSquare + gate else { return nil }
        let firstSet = Array(ws.bestExcluded[0..<ws.bestCount])
        let reflected: Fit
        if c > gate {
            reflected = try searchRejections(n: n, model: model, fullFit: Fit(x: xr, chiSquare: c, iterations: 0, isConverged: false),
                                             ranges: ranges, ws: &ws)
        } else {
            guard let f = try? gaussNewton(n: n, model: model, skip: -1, tolerance: configuration.convergenceToleranceMeters,
                                           from: xr, ranges: ranges, ws: &ws) else { return nil }
            reflected = f
            ws.bestCount = 0
        }
        if reflected.chiSquare + lambda * Double(ws.bestCount) < first.chiSquare + lambda * Double(firstSet.count) { return reflected }
        for (q, index) in firstSet.enumerated() { ws.bestExcluded[q] = index }
        ws.bestCount = firstSet.count
        return nil
    }

    /// One Gauss–Newton result in centred coordinates.
    struct Fit {
        var x: Point3
        var chiSquare: Double
        var iterations: Int
        var isConverged: Bool
    }

    /// The penalised subset search of the kernel (see `TrilaterationConfiguration.isRobust`):
    /// minimum of χ²(without E) + λ|E| over sets E of long-reading ranges, |E| ≤ K, n − |E| ≥ p + 1.
    /// Leaves the chosen set in `ws.bestExcluded[0..<ws.bestCount]` and returns its fit.
    /// - Throws: E5101 on a LAPACK misuse (data-dependent failures only disqualify a candidate).
    private func searchRejections(n: Int, model: TrilaterationKernel.Model, fullFit: Fit,
                                  ranges: UnsafeBufferPointer<Double>,
                                  ws: inout LapackOracleWorkspace) throws(LocusError) -> Fit {
        let c = configuration
        let p = model.unknowns
        let lambda = c.rejectionPenalty
        let kmax = min(c.maximumRejections, n - p - 1)
        var bestCost = fullFit.chiSquare
        var bestFit = fullFit
        var levelStart = fullFit.x   // warm start of a greedy level: the previous level's best
        let candidateTolerance = max(c.convergenceToleranceMeters, Self.candidateToleranceMeters)
        ws.bestCount = 0
        ws.levelCount = 0
        var levelHasBest = true
        var k = 1
        while k <= kmax {
            if bestCost <= lambda * Double(k) { break }   // every set of k or more ranges costs at least λk
            let exhaustive = k <= 3 && Self.combinations(n, k) <= 64
            if !exhaustive && !levelHasBest { break }
            // Base set: empty (exhaustive) or the previous level's best (greedy extension).
            let baseCount = exhaustive ? 0 : ws.levelCount
            for q in 0..<baseCount { ws.candidate[q] = ws.levelExcluded[q] }
            let t = exhaustive ? k : 1
            let start = exhaustive ? fullFit.x : levelStart
            var eligibleCount = 0
            if exhaustive {
                for i in 0..<n { ws.eligible[i] = i }
                eligibleCount = n
            } else {
                // Greedy: the `greedyCandidates` longest-reading ranges (largest positive eᵢ/σᵢ at the
                // level's start), kept in index order — the kernel's rule.
                for i in 0..<n {
                    var inBase = false
                    for q in 0..<baseCount where ws.candidate[q] == i { inBase = true }
                    if inBase { continue }
                    let z = residual(index: i, at: start, planar: model == .planar, ranges: ranges, ws: ws) * ws.sqrtWeights[i]
                    guard z > 0 else { continue }
                    var slot = -1
                    if eligibleCount < Self.greedyCandidates {
                        slot = eligibleCount
                        eligibleCount += 1
                    } else {
                        var weakest = 0
                        for q in 1..<eligibleCount where ws.s[q] < ws.s[weakest] { weakest = q }
                        if z > ws.s[weakest] { slot = weakest }
                    }
                    if slot >= 0 { ws.eligible[slot] = i; ws.s[slot] = z }
                }
                var a = 1
                while a < eligibleCount {
                    let index = ws.eligible[a], score = ws.s[a]
                    var b = a
                    while b > 0 && ws.eligible[b - 1] > index {
                        ws.eligible[b] = ws.eligible[b - 1]; ws.s[b] = ws.s[b - 1]; b -= 1
                    }
                    ws.eligible[b] = index; ws.s[b] = score
                    a += 1
                }
            }
            if eligibleCount < t { break }
            // Screen every t-combination (lexicographic) with one linearised step from the level's
            // point over the kept ranges (the kernel's `screen`): its lower bound and fit start.
            TrilaterationKernel.model(locators: ws.centred, count: n, model: model, tagHeightMeters: c.tagHeightMeters,
                                      at: start, rangesMeters: &ws.predicted, jacobian: &ws.jacobian, leadingDimension: n)
            // √(Σ wᵢ/r̂ᵢ²) over the level's ranges (the base set left out), for every screen's slack.
            var curvature = 0.0
            for i in 0..<n where ws.predicted[i] > 0 {
                var inBase = false
                for q in 0..<baseCount where ws.candidate[q] == i { inBase = true }
                if !inBase { curvature += ws.sqrtWeights[i] * ws.sqrtWeights[i] / (ws.predicted[i] * ws.predicted[i]) }
            }
            let slackScale = 0.5 * Self.screenBall * Self.screenBall * curvature.squareRoot()
            let continues = k < kmax && !(k + 1 <= 3 && Self.combinations(n, k + 1) <= 64)
            var comb = (0, 1, 2)
            var screenedCount = 0
            while true {
                let picks = (ws.eligible[comb.0], t > 1 ? ws.eligible[comb.1] : -1, t > 2 ? ws.eligible[comb.2] : -1)
                for i in 0..<n { ws.isActive[i] = true }
                for q in 0..<baseCount { ws.isActive[ws.candidate[q]] = false }
                ws.isActive[picks.0] = false
                if picks.1 >= 0 { ws.isActive[picks.1] = false }
                if picks.2 >= 0 { ws.isActive[picks.2] = false }
                // A greedy level's few extensions are all fitted, from the level's point (the kernel's rule).
                let screen = exhaustive
                    ? try linearStep(n: n, p: p, picks: picks, slackScale: slackScale, ranges: ranges, ws: &ws)
                    : (delta: Point3(x: 0, y: 0, z: 0), bound: 0.0)
                if let screen, continues || screen.bound + lambda * Double(k) < bestCost {
                    ws.screened[screenedCount] = LapackOracleWorkspace.ScreenedCandidate(
                        picks: picks, bound: screen.bound,
                        start: Point3(x: start.x + screen.delta.x, y: start.y + screen.delta.y, z: start.z + screen.delta.z))
                    screenedCount += 1
                }
                if !Self.advance(&comb, size: t, over: eligibleCount) { break }
            }
            // Fit in increasing order of the bound (ties: enumeration order) until it proves that no
            // candidate left can win — or, when a greedy level follows, none can beat this level's best.
            var levelBest = Double.infinity
            var levelFound = false
            var levelBestPoint = start
            while true {
                var next = -1
                for r in 0..<screenedCount where !ws.screened[r].isTaken {
                    if next < 0 || ws.screened[r].bound < ws.screened[next].bound { next = r }
                }
                if next < 0 { break }
                let bound = ws.screened[next].bound
                if continues ? !(bound < levelBest) : !(bound + lambda * Double(k) < bestCost) { break }
                ws.screened[next].isTaken = true
                let picks = ws.screened[next].picks
                let size = baseCount + t
                ws.candidate[baseCount] = picks.0
                if t > 1 { ws.candidate[baseCount + 1] = picks.1 }
                if t > 2 { ws.candidate[baseCount + 2] = picks.2 }
                for i in 0..<n { ws.isActive[i] = true }
                for q in 0..<size { ws.isActive[ws.candidate[q]] = false }
                var fit: Fit?
                do throws(LocusError) {
                    fit = try gaussNewton(n: n, model: model, skip: -1, tolerance: candidateTolerance,
                                          from: ws.screened[next].start, ranges: ranges, ws: &ws)
                } catch {
                    if error.code == .lapackInternal { throw error }
                    fit = nil
                }
                if let fit, fit.chiSquare < levelBest {
                    var longReading = true
                    for q in 0..<size where !(residual(index: ws.candidate[q], at: fit.x, planar: model == .planar,
                                                        ranges: ranges, ws: ws) > 0) {
                        longReading = false   // NLOS only lengthens a range
                    }
                    if longReading {
                        levelBest = fit.chiSquare
                        levelFound = true
                        levelBestPoint = fit.x
                        for q in 0..<size { ws.levelExcluded[q] = ws.candidate[q] }
                        ws.levelCount = size
                        if fit.chiSquare + lambda * Double(k) < bestCost {
                            bestCost = fit.chiSquare + lambda * Double(k)
                            bestFit = fit
                            for q in 0..<size { ws.bestExcluded[q] = ws.candidate[q] }
                            ws.bestCount = size
                        }
                    }
                }
            }
            levelHasBest = levelFound
            if levelFound { levelStart = levelBestPoint }
            k += 1
        }
        return bestFit
    }

    /// Screens one candidate set (the kernel's `screen`): one linearised Gauss–Newton step from the
    /// point of the last `TrilaterationKernel.model` call (its r̂ᵢ and ∂r̂ᵢ/∂p in `ws.predicted`,
    /// `ws.jacobian`) over the active ranges, δ = argmin ‖W^½(e − Jδ)‖ by `dgelsy`, with
    /// χ²_lin = ‖W^½(e − Jδ)‖² and the lower bound (√χ²_lin − s‖δ‖²)₊² on χ² within β‖δ‖ of the point,
    /// s = `slackScale` = β²/2 · √(Σ wᵢ/r̂ᵢ²) over the level's ranges (β = `screenBall`). nil when the
    /// rank is below p or a picked range cannot read long after the step (eⱼ − gⱼ·δ + β²‖δ‖²/(2r̂ⱼ) ≤ 0).
    /// - Throws: E5101 on a LAPACK misuse.
    private func linearStep(n: Int, p: Int, picks: (Int, Int, Int), slackScale: Double, ranges: UnsafeBufferPointer<Double>,
                            ws: inout LapackOracleWorkspace) throws(LocusError) -> (delta: Point3, bound: Double)? {
        var m = 0
        for i in 0..<n where ws.isActive[i] { m += 1 }
        var row = 0
        for i in 0..<n where ws.isActive[i] {
            let sw = ws.sqrtWeights[i]
            for k in 0..<p { ws.a[row + k * m] = sw * ws.jacobian[i + k * n] }
            ws.b[row] = sw * (ranges[i] - ws.predicted[i])
            row += 1
        }
        let rank = try LapackLinearAlgebra.leastSquares(
            a: &ws.a, rows: m, columns: p, b: &ws.b, pivots: &ws.pivots,
            reciprocalCondition: configuration.minimumReciprocalCondition.squareRoot(), work: &ws.work)
        guard rank == p else { return nil }
        let d0 = ws.b[0], d1 = ws.b[1], d2 = p == 3 ? ws.b[2] : 0
        var chiSquareLinear = 0.0
        for i in 0..<n where ws.isActive[i] {
            var g = d0 * ws.jacobian[i] + d1 * ws.jacobian[i + n]
            if p == 3 { g += d2 * ws.jacobian[i + 2 * n] }
            let r = ws.sqrtWeights[i] * (ranges[i] - ws.predicted[i] - g)
            chiSquareLinear += r * r
        }
        guard chiSquareLinear.isFinite else { return nil }
        let step2 = d0 * d0 + d1 * d1 + d2 * d2
        func readsLong(_ j: Int) -> Bool {   // after the step, within the ball's reach; NLOS only lengthens a range
            var g = d0 * ws.jacobian[j] + d1 * ws.jacobian[j + n]
            if p == 3 { g += d2 * ws.jacobian[j + 2 * n] }
            let rh = ws.predicted[j]
            let reach = rh > 0 ? Self.screenBall * Self.screenBall * 0.5 * step2 / rh : 0
            return ranges[j] - rh - g + reach > 0
        }
        guard readsLong(picks.0), picks.1 < 0 || readsLong(picks.1), picks.2 < 0 || readsLong(picks.2) else { return nil }
        let root = max(chiSquareLinear, 0).squareRoot() - slackScale * step2
        return (Point3(x: d0, y: d1, z: d2), root > 0 ? root * root : 0)
    }

    /// β: the screen's lower bound holds within β‖δ‖ of the level's point (the kernel's
    /// LOCUS_TRIL_SCREEN_BALL).
    static let screenBall = 2.0

    /// The kernel's common-bias test at the all-ranges fit: every zᵢ = eᵢ/σᵢ within [−0.5, 5] and
    /// more than half above +0.75.
    private func readsCommonBias(n: Int, at x: Point3, planar: Bool, ranges: UnsafeBufferPointer<Double>,
                                 ws: LapackOracleWorkspace) -> Bool {
        var longCount = 0
        for i in 0..<n {
            let z = residual(index: i, at: x, planar: planar, ranges: ranges, ws: ws) * ws.sqrtWeights[i]
            if z < -0.5 || z > 5 { return false }
            if z > 0.75 { longCount += 1 }
        }
        return 2 * longCount > n
    }

    /// A greedy level tries this many of the longest-reading ranges (the kernel's
    /// LOCUS_TRIL_GREEDY_CANDIDATES).
    static let greedyCandidates = 4

    /// Candidate fits of the rejection search stop at this step size (the kernel's
    /// LOCUS_TRIL_CANDIDATE_TOLERANCE_M); the chosen fit is then polished.
    static let candidateToleranceMeters = 1e-6

    /// Binomial coefficient C(n, k) as a double.
    private static func combinations(_ n: Int, _ k: Int) -> Double {
        var c = 1.0
        for i in 0..<k { c = c * Double(n - i) / Double(i + 1) }
        return c
    }

    /// Advances a t-combination (t ≤ 3) of 0..<count; false after the last one.
    private static func advance(_ comb: inout (Int, Int, Int), size t: Int, over count: Int) -> Bool {
        var c0 = comb.0, c1 = comb.1, c2 = comb.2
        var q = t - 1
        func value(_ i: Int) -> Int { i == 0 ? c0 : i == 1 ? c1 : c2 }
        while q >= 0 && value(q) == count - t + q { q -= 1 }
        if q < 0 { return false }
        if q == 0 { c0 += 1; c1 = c0 + 1; c2 = c1 + 1 }
        if q == 1 { c1 += 1; c2 = c1 + 1 }
        if q == 2 { c2 += 1 }
        comb = (c0, c1, c2)
        return true
    }

    /// Linearised seed: aᵢ·p = −½[(sᵢ − s̄) − (qᵢ − q̄)] with aᵢ the centred locator, qᵢ = ‖aᵢ‖²,
    /// sᵢ = rᵢ² (planar: rᵢ² − (h − zᵢ)², over (x, y)); solved by rank-revealing `dgelsy`.
    /// - Throws: E4002 when the rank is below p (collinear, coplanar or coincident locators).
    private func seed(n: Int, planar: Bool, p: Int, ranges: UnsafeBufferPointer<Double>,
                      ws: inout LapackOracleWorkspace) throws(LocusError) -> Point3 {
        let h = configuration.tagHeightMeters
        var meanS = 0.0, meanQ = 0.0
        for i in 0..<n {
            let q = ws.centred[i]
            let r = ranges[i]
            let qi: Double
            if planar {
                let dz = h - q.z
                ws.s[i] = r * r - dz * dz
                qi = q.x * q.x + q.y * q.y
            } else {
                ws.s[i] = r * r
                qi = q.x * q.x + q.y * q.y + q.z * q.z
            }
            ws.predicted[i] = qi
            meanS += ws.s[i]; meanQ += qi
        }
        meanS /= Double(n); meanQ /= Double(n)
        for i in 0..<n {
            let q = ws.centred[i]
            ws.a[i] = q.x
            ws.a[i + n] = q.y
            if !planar { ws.a[i + 2 * n] = q.z }
            ws.b[i] = -0.5 * ((ws.s[i] - meanS) - (ws.predicted[i] - meanQ))
        }
        let rank = try LapackLinearAlgebra.leastSquares(
            a: &ws.a, rows: n, columns: p, b: &ws.b, pivots: &ws.pivots,
            reciprocalCondition: configuration.minimumReciprocalCondition.squareRoot(), work: &ws.work)
        guard rank == p else {
            throw LocusError(.degenerateGeometry, "locators are collinear, coplanar or coincident: position not determined")
        }
        let x = Point3(x: ws.b[0], y: ws.b[1], z: planar ? 0 : ws.b[2])
        guard x.isFinite else { throw LocusError(.solverDiverged, "the seed is not finite") }
        return x
    }

    /// Newton's method over the active ranges except `skip` (the kernel's): δ = H⁻¹ JᵀW e by `dposv`
    /// where the Hessian of χ²/2, H = JᵀWJ + Σ wᵢ(eᵢ/r̂ᵢ)gᵢgᵢᵀ − (Σ wᵢeᵢ/r̂ᵢ) I, is positive definite,
    /// else the Gauss–Newton step δ = argmin ‖W^½ (e − J δ)‖ by `dgelsy` (which also tests the rank),
    /// p ← p + δ until the estimated distance to the optimum ‖δₖ‖ρ/(1 − ρ), ρ = ‖δₖ‖/‖δₖ₋₁‖, is
    /// within `tolerance` (χ² is that of the last linearisation, one step before p), or the step
    /// limit (then χ² at p).
    /// - Throws: E4002 rank below p, E4004 non-finite iterate or residuals, E5101 LAPACK misuse.
    private func gaussNewton(n: Int, model: TrilaterationKernel.Model, skip: Int, tolerance: Double, from start: Point3,
                             ranges: UnsafeBufferPointer<Double>,
                             ws: inout LapackOracleWorkspace) throws(LocusError) -> Fit {
        let c = configuration
        let p = model.unknowns
        var x = start
        var previous = Double.infinity
        var iterations = 0
        var chiSquare = 0.0
        var isConverged = false
        while true {
            TrilaterationKernel.model(locators: ws.centred, count: n, model: model, tagHeightMeters: c.tagHeightMeters,
                                      at: x, rangesMeters: &ws.predicted, jacobian: &ws.jacobian, leadingDimension: n)
            var m = 0
            for i in 0..<n where ws.isActive[i] && i != skip { m += 1 }
            var row = 0
            chiSquare = 0
            for i in 0..<n where ws.isActive[i] && i != skip {
                let sw = ws.sqrtWeights[i]
                for k in 0..<p { ws.a[row + k * m] = sw * ws.jacobian[i + k * n] }
                let be = sw * (ranges[i] - ws.predicted[i])
                ws.b[row] = be
                chiSquare += be * be
                row += 1
            }
            guard chiSquare.isFinite else { throw LocusError(.solverDiverged, "non-finite residuals") }
            if iterations >= c.maximumIterations { break }
            // Newton: H = JᵀWJ + Σ wᵢ (eᵢ/r̂ᵢ) gᵢgᵢᵀ − (Σ wᵢ eᵢ/r̂ᵢ) I (the Hessian of χ²/2, as
            // ∂²r̂ᵢ/∂p² = (I − gᵢgᵢᵀ)/r̂ᵢ), gradient JᵀW e.
            LapackLinearAlgebra.gram(of: ws.a, rows: m, columns: p, into: &ws.hessian)
            var q = 0.0
            for k in 0..<p { ws.gradient[k] = 0 }
            for i in 0..<n where ws.isActive[i] && i != skip {
                let w = ws.sqrtWeights[i] * ws.sqrtWeights[i], rh = ws.predicted[i]
                let e = ranges[i] - rh
                let wei = rh > 0 ? w * e / rh : 0
                q += wei
                for k in 0..<p {
                    let gk = ws.jacobian[i + k * n]
                    ws.gradient[k] += w * gk * e
                    for l in 0..<p { ws.hessian[k + l * p] += wei * gk * ws.jacobian[i + l * n] }
                }
            }
            for k in 0..<p { ws.hessian[k + k * p] -= q }
            let rank = try LapackLinearAlgebra.leastSquares(
                a: &ws.a, rows: m, columns: p, b: &ws.b, pivots: &ws.pivots,
                reciprocalCondition: c.minimumReciprocalCondition.squareRoot(), work: &ws.work)
            guard rank == p else {
                throw LocusError(.degenerateGeometry, "locators are collinear, coplanar or coincident: position not determined")
            }
            // The Newton step where H is positive definite, else the Gauss–Newton step from dgelsy.
            let newton = try LapackLinearAlgebra.solvePositiveDefinite(&ws.hessian, order: p, b: &ws.gradient)
            let d0 = newton ? ws.gradient[0] : ws.b[0], d1 = newton ? ws.gradient[1] : ws.b[1]
            let d2 = p == 3 ? (newton ? ws.gradient[2] : ws.b[2]) : 0
            x = Point3(x: x.x + d0, y: x.y + d1, z: x.z + d2)
            guard x.isFinite else { throw LocusError(.solverDiverged, "the iterative solver produced a non-finite iterate") }
            let step = (d0 * d0 + d1 * d1 + d2 * d2).squareRoot()
            iterations += 1
            // Estimated distance to the optimum |δ|ρ/(1 − ρ), ρ = |δₖ|/|δₖ₋₁| (the kernel's rule).
            if step <= tolerance || (previous.isFinite && step < previous && step * step <= tolerance * (previous - step)) {
                isConverged = true
                break
            }
            previous = step
        }
        return Fit(x: x, chiSquare: chiSquare, iterations: iterations, isConverged: isConverged)
    }

    /// eⱼ = rⱼ − r̂ⱼ(x) in centred coordinates.
    private func residual(index j: Int, at x: Point3, planar: Bool, ranges: UnsafeBufferPointer<Double>,
                          ws: LapackOracleWorkspace) -> Double {
        let q = ws.centred[j]
        let dx = x.x - q.x, dy = x.y - q.y
        let dz = planar ? configuration.tagHeightMeters - q.z : x.z - q.z
        return ranges[j] - RangeModel.predicted(dx: dx, dy: dy, dz: dz)
    }
}
