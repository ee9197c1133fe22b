import LocusCore
import LocusNumerics

/// A bundle adjustment the survey test judges (`surveyTest`): `SelfCalibrationSolver` on ranges (an
/// epoch is a ranging round), `DifferenceSelfCalibrationSolver` on range differences (an epoch is a
/// blink, with its own offset τⱼ among the unknowns).
protocol SurveyTestable {
    var configuration: SelfCalibrationConfiguration { get }
    /// 2 (planar) or 3.
    var dimensions: Int { get }
    /// The locators' parameters (position corrections δᵢ: `offset`, 3 per locator, metres).
    var parameters: SelfCalibrationParameters { get }
    /// Epochs, and whether epoch j is used by the fit.
    var surveyEpochCount: Int { get }
    func isUsable(_ j: Int) -> Bool
    /// Epoch j's time, seconds.
    func surveyEpochTime(_ j: Int) -> Double
    /// Epoch j's fitted tag position (x, y), metres.
    func surveyEpochPlace(_ j: Int) -> (x: Double, y: Double)
    /// Epoch j's measurements (ranges, arrivals) and whether locator k is among them.
    func surveyEpoch(_ j: Int, hears k: Int) -> (count: Int, hears: Bool)
    /// An epoch's own unknowns: the tag's D coordinates (ranges), and the blink's offset τ (differences).
    var surveyEpochUnknowns: Int { get }
    /// "epochs" or "blinks", for the reasons in words.
    var surveyEpochWord: String { get }
    /// The reduced normal matrix S (count × count), δₖ's D columns in it, and per time block b (of
    /// `blockCount`, epoch j in `blockOf[j]`) the reduced score r_b (count values).
    func surveySystem(locator k: Int, blockOf: [Int], blockCount: Int)
        -> (s: [Double], count: Int, offsetColumns: [Int], blockRHS: [[Double]], blockS: [[Double]])
}

/// The survey check's test of one locator (issue #42): "bias only" against "bias + position
/// offset δ", on the directions the recording can see, with a covariance that real data earn — one
/// implementation for ranges and for range differences (`SurveyTestable`).
///
/// **Observable directions, ranges.** With δₖ and the bias bₖ both free, C = Cov(δₖ) has the bias (and every
/// tag position) profiled out: a displacement along the tags' lines of sight that the bias takes
/// up has a large σ there, one across them a small σ. The eigenvectors vₖ of C with σₖ ≤
/// `surveyCheckableSDMeters` are the *checkable* directions; a locator with none is "not checkable" and
/// is never flagged.
///
/// **Observable directions, range differences (TDoA).** In the pseudo-range form (`DifferenceSelfCalibrationData`)
/// arrival k of blink j is yₖⱼ = ‖pⱼ − (aₖ + δₖ)‖ + bₖ + τⱼ + ε, so ∂yₖⱼ/∂δₖ = −uₖⱼ as for a range, and
/// the locator's clock offset bₖ plays the range bias's part: it takes the component of −uₖⱼ·δₖ
/// common to all blinks (the mean line of sight). Two things differ. (1) Each blink's offset τⱼ
/// takes the part of the blink's residuals common to its arrivals, so a blink needs D + 2 arrivals
/// to fix pⱼ and τⱼ and one more to say anything about a locator: a shift of δₖ is seen only through
/// how −uₖⱼ·δₖ differs from what the blink's position and offset can absorb — the profiled
/// covariance is larger than from ranges of the same walk, and C says by how much. (2) The
/// reference locator A of a blink is not special in this form: its arrival is y_A = 0 with τⱼ =
/// −d(tag, A) − b_A − ε_A, and a difference z_AB = y_B − y_A sees δ_A through +u_Aⱼ in every row of
/// the blink; eliminating τⱼ gives back exactly the differences and their covariance, so δ_A's
/// observable directions are those of its own arrival, as for any locator, and a fixed reference is
/// checked like the others. What no recording of differences sees: a bias (clock offset) common to
/// all locators (it goes into every τⱼ; the gauge holds the biases' mean), and — as for ranges — a
/// displacement of δₖ along the lines of sight its bias takes.
///
/// **Honest covariance** (metres², on δₖ's D coordinates). Three pieces, from the reduced normal
/// matrix S (epochs eliminated; weights 1/σᵢ² from the scales, robust weights as in the fit), each
/// time block's share S_b of it and its reduced score r_b = Σⱼ∈b (g_θⱼ − H_θpⱼ H_pⱼpⱼ⁻¹ g_pⱼ) (from
/// differences with τⱼ centred out first), over the G non-empty time blocks b of the recording:
///
/// 1. The formal F = S⁺ on δₖ. Right for independent rows and an exact model (in simulation the
///    fitted δ spreads across seeds as F says), far too small on real data: rows at 100 Hz are
///    correlated over seconds and the model misses range scales and lever arms (≈ 1 mm for a bias
///    whose run-to-run spread is 2 cm).
/// 2. The delete-a-block jackknife: leaving block b out moves the fit by one Newton step
///    d_b = (S − S_b)⁺ r_b (its δₖ rows; the whole score sums to 0 at the fit), and
///
///      J = (G − 1)/G · Σ_b (d_b − d̄)(d_b − d̄)ᵀ.
///
///    It widens with whatever ties the rows of a block together. When the blocks carry equal shares
///    ((S − S_b)⁻¹ = S⁻¹·G/(G − 1)) it is the block sandwich A·M·Aᵀ (A = δₖ's rows of S⁺,
///    M = G/(G − 1)·Σ_b (r_b − r̄)(r_b − r̄)ᵀ) this check used before; where one block carries much of
///    the information along a direction (a tag passing near the locator) S − S_b is small there and
///    the jackknife larger.
/// 3. C = F^{1/2}·max(I, F^{-1/2} J F^{-1/2})·F^{1/2} (eigenvalues of the whitened J raised to 1 at
///    least): J where it exceeds F, F where it does not. Correlation and model errors widen the spread;
///    a block spread under the formal is chance. (Simulated 120 s of differences, the hall's mid-wall
///    0x0203, correct site, seeds 31–40: the sandwich's σ read 0.41–0.95 of F's in 19 of the 20
///    seed-directions — radially 1.7–7.4 cm against F's 2.4–6.0 cm, the fitted radial components
///    spreading with SD 6.8 cm over the seeds, as F says within its own scatter.)
///
/// **How many blocks the spread comes from.** Along a direction v (unit, an eigenvector of C) block b
/// carries the share w_b = vᵀ A S_b Aᵀ v of the information (m², ≥ 0), and the spread of G blocks of
/// unequal shares is worth the Kish/Satterthwaite effective number of blocks
///
///   ν_v = (Σ_b w_b)² / Σ_b w_b² · (G − 1)/G  ∈ [(G − 1)/G, G − 1]
///
/// (Satterthwaite: Σ y_b² with y_b ~ N(0, c·w_b) has the mean and variance of c·Σw_b·χ²_ν/ν); G − 1
/// with equal shares, about 1 when one block carries all. Where F is the floor along v (vᵀJv < vᵀFv),
/// ν_v = G − 1. On the hall's 0x0203 above: 3.5–7.6 radially, 4–14 along the wall. The σ stated per
/// direction (`sdMeters`, and held to `surveyCheckableSDMeters` for *checkable*) is
/// √(vᵀCv)·t(ν_v, 0.975)/t(G − 1, 0.975): as much wider as Student's t makes a 95 % interval from ν_v
/// degrees of freedom than from the G − 1 of equal blocks, the case the 3 cm was set for (with
/// G = 20: ×1 at ν = 19, ×1.23 at 5, ×2.05 at 2, ×6.1 at 1).
///
/// **Test.** Hotelling's T² of δ on the p checkable directions, T² = Σ (vₖ·δ)²/λₖ (λₖ = vₖᵀCvₖ,
/// unstated); with C worth ν = min ν_v over them (rounded down), F = T²·(ν − p + 1)/(p·ν) ~
/// F(p, ν − p + 1) (at least 1 denominator degree of freedom; with equal shares ν = G − 1 and it is
/// F(p, G − p)) when the locator is where it was surveyed (the bias-only model holds). Flagged when
/// P(F) < `surveyAlpha` (the false-alarm rate per locator checked; ≤ n·α per site) **and** the
/// projected offset is at least `surveyMinimumEffectMeters` (a real model error the blocks share — a
/// lever arm, a range scale — makes δ consistent across blocks; an offset smaller than the minimum is
/// not worth a move).
///
/// **Redundancy.** A locator's δ is judged by the others: in an epoch, the epoch's own unknowns
/// must be over-determined without it (at least U + 1 others, U = D for ranges, D + 1 for a blink
/// with its offset; D = 2 planar, 3 spatial; the held-out validation's leave-one-out rule). When fewer
/// than `surveyMinimumSupport` of its epochs are, it is "not checkable" (4 locators in 3-D from
/// ranges: the other 3 only just fix the tag, and δ would take up their errors).
extension SurveyTestable {
    /// Locator k's position check from this fit (δₖ and bₖ free): directions, honest σ, the test.
    /// - Throws: `E4002` when LAPACK fails.
    func surveyTest(locator k: Int) throws(LocusError) -> SelfCalibrationPositionCheck {
        let config = configuration, word = surveyEpochWord
        var check = SelfCalibrationPositionCheck(directions: [], sdMeters: [], thresholdMeters: config.surveyCheckableSDMeters)
        let used = (0..<surveyEpochCount).filter(isUsable)
        // Redundancy: epochs hearing k whose other measurements over-determine the epoch's unknowns.
        let needed = surveyEpochUnknowns + 1
        var heard = 0, supported = 0
        for j in used {
            let epoch = surveyEpoch(j, hears: k)
            guard epoch.hears else { continue }
            heard += 1
            if epoch.count - 1 >= needed { supported += 1 }
        }
        let support = heard > 0 ? Double(supported) / Double(heard) : 0
        guard support >= config.surveyMinimumSupport else {
            check.notCheckableReason = "the other locators over-determine the tag in \(Int((support * 100).rounded())) % of its \(word) "
                + "(\(needed) or more of them needed in at least \(Int((config.surveyMinimumSupport * 100).rounded())) %)"
            return check
        }
        // Time blocks.
        guard let t0 = used.map(surveyEpochTime).min(), let t1 = used.map(surveyEpochTime).max(), t1 > t0 else {
            check.notCheckableReason = "the recording spans no time"
            return check
        }
        let blockCount = config.surveyBlocks
        let byTime = try surveyTest(locator: k, check: check, blocks: (0..<surveyEpochCount).map { j in
            min(blockCount - 1, max(0, Int((surveyEpochTime(j) - t0) / (t1 - t0) * Double(blockCount))))
        }, unit: "time blocks")
        // Place blocks. A place's error (multipath, the body, the antenna's heading) is the same in every
        // time block that holds the place: a tag standing still, or a static survey of points recorded
        // side by side (CUHK-SZ's static sessions: 30 points as 30 tags, all from t = 0), puts every
        // place in every time block, the blocks' spread shrinks to the noise (± 1–2 mm), and the places'
        // shared errors move δ by 0.2–0.3 m: 4 of 8 correct locators flagged. So the epochs are also
        // grouped into places (cells of `surveyPlaceCellMeters` at their fitted positions), each place
        // whole in one block (places in the order first visited, cut into `surveyBlocks` by epochs), and
        // the more conservative of the two tests decides: not checkable, else the larger p-value. A walk
        // that seldom comes back gives about the time blocks; a handful of places, fewer than 8 blocks.
        var firstVisit: [SIMD2<Int>: (time: Double, epochs: Int)] = [:]
        let cell = config.surveyPlaceCellMeters
        func place(_ j: Int) -> SIMD2<Int> {
            let p = surveyEpochPlace(j)
            guard p.x.isFinite, p.y.isFinite, abs(p.x) < 1e9, abs(p.y) < 1e9 else { return SIMD2(Int.min, Int.min) }
            return SIMD2(Int((p.x / cell).rounded(.down)), Int((p.y / cell).rounded(.down)))
        }
        for j in used {
            let key = place(j), t = surveyEpochTime(j)
            let seen = firstVisit[key]
            firstVisit[key] = (min(seen?.time ?? t, t), (seen?.epochs ?? 0) + 1)
        }
        let places = firstVisit.sorted { a, b in
            a.value.time < b.value.time || (a.value.time == b.value.time && (a.key.x, a.key.y) < (b.key.x, b.key.y))
        }
        var blockOfPlace: [SIMD2<Int>: Int] = [:], before = 0
        for (key, value) in places {
            blockOfPlace[key] = min(blockCount - 1, before * blockCount / used.count)
            before += value.epochs
        }
        let byPlace = try surveyTest(locator: k, check: check, blocks: (0..<surveyEpochCount).map { j in
            isUsable(j) ? blockOfPlace[place(j)] ?? 0 : 0
        }, unit: "places (blocks of whole \(DecimalText.string(cell, decimals: 1)) m cells)")
        func conservatism(_ c: SelfCalibrationPositionCheck) -> Double {
            guard let test = c.test else { return 2 }
            return test.flagged ? test.pValue : 1 + test.pValue
        }
        return conservatism(byPlace) > conservatism(byTime) ? byPlace : byTime
    }

    /// The test of locator k over the blocks `blockOf` (each epoch's block, < `surveyBlocks`), starting
    /// from `check` (the redundancy found); `unit` names the blocks in a reason.
    private func surveyTest(locator k: Int, check start: SelfCalibrationPositionCheck, blocks blockOf: [Int], unit: String)
        throws(LocusError) -> SelfCalibrationPositionCheck {
        let config = configuration, dims = dimensions, word = surveyEpochWord
        var check = start
        let blockCount = config.surveyBlocks
        var nonEmpty = Set<Int>()
        for j in 0..<surveyEpochCount where isUsable(j) { nonEmpty.insert(blockOf[j]) }
        let g = nonEmpty.count
        let (s, count, offsetColumns, blockRHS, blockS) = surveySystem(locator: k, blockOf: blockOf, blockCount: blockCount)
        guard g >= 8, count > 0, offsetColumns.count == dims, offsetColumns.allSatisfy({ $0 >= 0 }) else {
            check.notCheckableReason = "the recording's \(word) fall in \(g) \(unit) (8 needed to estimate the spread)"
            return check
        }
        let inverse = try SymmetricEigen(s, size: count).pseudoInverse(relativeThreshold: config.rankThreshold)
        let blocks = nonEmpty.sorted()
        // A = δₖ's rows of S⁺ (dims × count): the per-block information's share Q_b = A S_b Aᵀ.
        let rows = (0..<dims).map { a in (0..<count).map { c in inverse[c * count + offsetColumns[a]] } }
        // The delete-a-block jackknife: d_b = δₖ's rows of (S − S_b)⁺ r_b, C = (G − 1)/G Σ (d_b − d̄)(d_b − d̄)ᵀ.
        var jack: [[Double]] = [], blockInformation: [[Double]] = []
        for b in blocks {
            var rest = s
            for c in 0..<(count * count) { rest[c] -= blockS[b][c] }
            let restInverse = try SymmetricEigen(rest, size: count).pseudoInverse(relativeThreshold: config.rankThreshold)
            jack.append((0..<dims).map { a in
                var sum = 0.0
                for c in 0..<count { sum += restInverse[c * count + offsetColumns[a]] * blockRHS[b][c] }
                return sum
            })
            var q = [Double](repeating: 0, count: dims * dims), sa = [Double](repeating: 0, count: count)
            for a in 0..<dims {
                for c in 0..<count {
                    var sum = 0.0
                    for d in 0..<count { sum += blockS[b][d * count + c] * rows[a][d] }
                    sa[c] = sum
                }
                for b2 in 0..<dims {
                    var sum = 0.0
                    for c in 0..<count { sum += rows[b2][c] * sa[c] }
                    q[a * dims + b2] = sum
                }
            }
            blockInformation.append(q)
        }
        let jackMean = (0..<dims).map { a in jack.reduce(0.0) { $0 + $1[a] } / Double(g) }
        var cov = [Double](repeating: 0, count: dims * dims)
        for d in jack {
            for a in 0..<dims { for b2 in 0..<dims { cov[a * dims + b2] += (d[a] - jackMean[a]) * (d[b2] - jackMean[b2]) * Double(g - 1) / Double(g) } }
        }
        guard cov.allSatisfy(\.isFinite) else {
            check.notCheckableReason = "the spread of its blocks is not finite"
            return check
        }
        // The formal covariance F = S⁺ on δₖ, and the honest one: the jackknife's J with each eigenvalue
        // of its whitened form F^{-1/2} J F^{-1/2} raised to 1 at least.
        var formal = [Double](repeating: 0, count: dims * dims)
        for a in 0..<dims { for b2 in 0..<dims { formal[a * dims + b2] = inverse[offsetColumns[a] * count + offsetColumns[b2]] } }
        let honest = try Self.flooredCovariance(cov, floor: formal, size: dims)
        // δₖᵀ F⁻¹ δₖ over all of its directions: what freeing δₖ lowers the fit's weighted squares by.
        let delta = (0..<3).map { parameters.offset[3 * k + $0] }
        let formalEigen = try SymmetricEigen(formal, size: dims)
        var gain = 0.0
        for e in 0..<dims where formalEigen.values[e] > 0 {
            var along = 0.0
            for a in 0..<dims { along += formalEigen.vectors[e * dims + a] * delta[a] }
            gain += along * along / formalEigen.values[e]
        }
        let eigen = try SymmetricEigen(honest, size: dims)
        // Per direction: v, its variance vᵀCv, ν_v and the σ stated; best stated first.
        var along: [(v: [Double], variance: Double, effective: Double, stated: Double)] = []
        for e in 0..<dims {
            let v = (0..<3).map { $0 < dims ? eigen.vectors[e * dims + $0] : 0 }
            func form(_ m: [Double]) -> Double {
                var sum = 0.0
                for a in 0..<dims { for b2 in 0..<dims { sum += v[a] * m[a * dims + b2] * v[b2] } }
                return sum
            }
            let variance = max(0, eigen.values[e])
            // ν: the blocks' effective number along v, unless the formal floor decides it.
            let shares = blockInformation.map { max(0, form($0)) }
            let total = shares.reduce(0, +), squares = shares.reduce(0) { $0 + $1 * $1 }
            let kish = squares > 0 ? total * total / squares * Double(g - 1) / Double(g) : 0
            let effective = form(cov) < form(formal) ? Double(g - 1) : min(Double(g - 1), kish)
            // The σ stated (and held to `surveyCheckableSDMeters`): widened by how much wider Student's t
            // makes a 95 % interval with ν degrees of freedom than with the G − 1 of equal blocks.
            along.append((v, variance, effective, variance.squareRoot() * Self.studentInflation(effective, reference: Double(g - 1))))
        }
        along.sort { $0.stated < $1.stated }
        var t2 = 0.0, length2 = 0.0, p = 0, nu = Double(g - 1)
        for (v, variance, effective, stated) in along {
            let sign = (abs(v[0]) >= abs(v[1]) ? v[0] : v[1]) < 0 ? -1.0 : 1.0
            check.directions.append(Vector3(x: sign * v[0], y: sign * v[1], z: sign * v[2]))
            check.sdMeters.append(stated)
            check.effectiveBlocks.append(effective)
            guard stated <= config.surveyCheckableSDMeters, variance > 0 else { continue }
            let alongDelta = v[0] * delta[0] + v[1] * delta[1] + v[2] * delta[2]
            t2 += alongDelta * alongDelta / variance
            length2 += alongDelta * alongDelta
            nu = min(nu, effective)
            p += 1
        }
        guard p > 0 else { return check }
        // ν the covariance's effective degrees of freedom (the fewest of the p directions'), rounded down;
        // F(p, ν − p + 1), at least 1 denominator degree of freedom.
        let denominator = max(1, Int(nu.rounded(.down)) - p + 1)
        let f = t2 * Double(denominator) / (Double(p) * Double(denominator + p - 1))
        let pValue = FisherDistribution.upperTail(f, d1: Double(p), d2: Double(denominator))
        let length = length2.squareRoot()
        check.test = .init(statistic: t2, degreesOfFreedom: (p, denominator), pValue: pValue, formalGain: gain.isFinite ? gain : 0,
                           alpha: config.surveyAlpha,
                           minimumEffectMeters: config.surveyMinimumEffectMeters, offsetAlongMeters: length, blocks: g,
                           flagged: pValue < config.surveyAlpha && length >= config.surveyMinimumEffectMeters)
        return check
    }
}

extension SurveyTestable {
    /// t(ν, 0.975)/t(ν₀, 0.975) (≥ 1, dimensionless): how much wider a 95 % interval from a σ
    /// estimated with ν degrees of freedom is than one from ν₀ (the G − 1 of G equal blocks, what
    /// `surveyCheckableSDMeters` was set against). ν ≥ 1 (below, 1); t² is F(1, ν), its quantile found by
    /// bisection to 1e-9 relative.
    static func studentInflation(_ nu: Double, reference nu0: Double) -> Double {
        func t975(_ nu: Double) -> Double {
            let dof = max(1, nu.isFinite ? nu : 1)
            var low = 0.0, high = 1e6
            for _ in 0..<200 where high - low > 1e-9 * high {
                let mid = (low + high) / 2
                if FisherDistribution.upperTail(mid, d1: 1, d2: dof) > 0.05 { low = mid } else { high = mid }
            }
            return ((low + high) / 2).squareRoot()
        }
        return nu >= nu0 ? 1 : max(1, t975(nu) / t975(nu0))
    }

    /// C with its eigenvalues relative to F raised to 1 at least: F^{1/2}·max(I, F^{-1/2} C F^{-1/2})·F^{1/2}
    /// (`size` × `size`, symmetric). It is C wherever C ≥ F, F wherever C ≤ F; C itself when F is not
    /// positive definite.
    static func flooredCovariance(_ c: [Double], floor f: [Double], size n: Int) throws(LocusError) -> [Double] {
        let fe = try SymmetricEigen(f, size: n)
        guard let smallest = fe.values.min(), let largest = fe.values.max(), smallest > largest * 1e-12, smallest > 0 else { return c }
        // R = F^{1/2}, Ri = F^{-1/2} (U Λ^{±1/2} Uᵀ; eigenvector e is vectors[e·n ..< e·n + n]).
        var r = [Double](repeating: 0, count: n * n), ri = r
        for e in 0..<n {
            let root = fe.values[e].squareRoot()
            for a in 0..<n { for b in 0..<n {
                let u = fe.vectors[e * n + a] * fe.vectors[e * n + b]
                r[a * n + b] += u * root
                ri[a * n + b] += u / root
            } }
        }
        func product(_ x: [Double], _ y: [Double]) -> [Double] {
            var z = [Double](repeating: 0, count: n * n)
            for a in 0..<n { for b in 0..<n { for m in 0..<n { z[a * n + b] += x[a * n + m] * y[m * n + b] } } }
            return z
        }
        let w = try SymmetricEigen(product(product(ri, c), ri), size: n)
        var m = [Double](repeating: 0, count: n * n)
        for e in 0..<n {
            let value = max(1, w.values[e])
            for a in 0..<n { for b in 0..<n { m[a * n + b] += value * w.vectors[e * n + a] * w.vectors[e * n + b] } }
        }
        let out = product(product(r, m), r)
        // Exactly symmetric.
        return (0..<(n * n)).map { i in (out[i] + out[(i % n) * n + i / n]) / 2 }
    }
}

extension SelfCalibrationSolver: SurveyTestable {
    var surveyEpochCount: Int { data.epochCount }
    func surveyEpochTime(_ j: Int) -> Double { epochTimes[j] }
    func surveyEpochPlace(_ j: Int) -> (x: Double, y: Double) { (positions[3 * j], positions[3 * j + 1]) }
    func surveyEpoch(_ j: Int, hears k: Int) -> (count: Int, hears: Bool) {
        let range = data.epochStarts[j]..<data.epochStarts[j + 1]
        return (range.count, range.contains { data.slots[$0] == k })
    }
    var surveyEpochUnknowns: Int { dimensions }
    var surveyEpochWord: String { "epochs" }
    func surveySystem(locator k: Int, blockOf: [Int], blockCount: Int)
        -> (s: [Double], count: Int, offsetColumns: [Int], blockRHS: [[Double]], blockS: [[Double]]) {
        let (s, _, columns, blockRHS, blockS) = reducedSystem(blockOf: blockOf, blockCount: blockCount)
        return (s, columns.list.count, (0..<dimensions).map { columns.offset[3 * k + $0] }, blockRHS, blockS)
    }
}
