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
    /// Epoch j's measurements (ranges, arrivals) and whether locator k is among them.
    func surveyEpoch(_ j: Int, hears k: Int) -> (count: Int, hears: Bool)
    /// An epoch's own unknowns: the tag's D coordinates (ranges), and the blink's offset τ (differences).
    var surveyEpochUnknowns: Int { get }
    /// "epochs" or "blinks", for the reasons in words.
    var surveyEpochWord: String { get }
    /// The reduced normal matrix S (count × count), δₖ's D columns in it, and per time block b (of
    /// `blockCount`, epoch j in `blockOf[j]`) the reduced score r_b (count values).
    func surveySystem(locator k: Int, blockOf: [Int], blockCount: Int) -> (s: [Double], count: Int, offsetColumns: [Int], blockRHS: [[Double]])
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
/// **Honest covariance.** The formal (JᵀWJ)⁻¹ treats every range as independent, but real rows at
/// 100 Hz are correlated over seconds and the model misses range scales and lever arms: it is far
/// too small (≈ 1 mm for a bias whose run-to-run spread is 2 cm). C is instead the block sandwich
/// (cluster-robust, a linearised block jackknife) over G time blocks b of the recording:
///
///   C = A·M·Aᵀ,  A = the δₖ rows of S⁺,  M = G/(G − 1)·Σ_b (r_b − r̄)(r_b − r̄)ᵀ,
///
/// S the reduced normal matrix (epochs eliminated), r_b block b's reduced score
/// Σⱼ∈b (g_θⱼ − H_θpⱼ H_pⱼpⱼ⁻¹ g_pⱼ) (from differences with τⱼ centred out first), r̄ their mean: the
/// spread of what each block says about δ, whatever ties the rows inside a block together.
///
/// **Test.** Hotelling's T² of δ on the p checkable directions, T² = Σ (vₖ·δ)²/λₖ; with C estimated
/// from G blocks, F = T²·(G − p)/(p·(G − 1)) ~ F(p, G − p) when the locator is where it was surveyed
/// (the bias-only model holds). Flagged when P(F) < `surveyAlpha` (the false-alarm rate per locator
/// checked; ≤ n·α per site) **and** the projected offset is at least `surveyMinimumEffectMeters`
/// (a real model error the blocks share — a lever arm, a range scale — makes δ consistent across
/// blocks; an offset smaller than the minimum is not worth a move).
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
        let config = configuration, dims = dimensions, word = surveyEpochWord
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
        var blockOf = [Int](repeating: 0, count: surveyEpochCount)
        var nonEmpty = Set<Int>()
        for j in 0..<surveyEpochCount {
            blockOf[j] = min(blockCount - 1, max(0, Int((surveyEpochTime(j) - t0) / (t1 - t0) * Double(blockCount))))
            if isUsable(j) { nonEmpty.insert(blockOf[j]) }
        }
        let g = nonEmpty.count
        let (s, count, offsetColumns, blockRHS) = surveySystem(locator: k, blockOf: blockOf, blockCount: blockCount)
        guard g >= 8, count > 0, offsetColumns.count == dims, offsetColumns.allSatisfy({ $0 >= 0 }) else {
            check.notCheckableReason = "the recording holds \(g) time blocks with \(word) (8 needed to estimate the spread)"
            return check
        }
        let inverse = try SymmetricEigen(s, size: count).pseudoInverse(relativeThreshold: config.rankThreshold)
        // y_b = A (r_b − r̄), C = G/(G − 1) Σ y_b y_bᵀ.
        var mean = [Double](repeating: 0, count: count)
        for b in nonEmpty.sorted() { for c in 0..<count { mean[c] += blockRHS[b][c] / Double(g) } }
        var cov = [Double](repeating: 0, count: dims * dims)
        for b in nonEmpty.sorted() {
            var y = [Double](repeating: 0, count: dims)
            for a in 0..<dims {
                var sum = 0.0
                for c in 0..<count { sum += inverse[c * count + offsetColumns[a]] * (blockRHS[b][c] - mean[c]) }
                y[a] = sum
            }
            for a in 0..<dims { for b2 in 0..<dims { cov[a * dims + b2] += y[a] * y[b2] * Double(g) / Double(g - 1) } }
        }
        let eigen = try SymmetricEigen(cov, size: dims)
        let order = (0..<dims).sorted { eigen.values[$0] < eigen.values[$1] }
        let delta = (0..<3).map { parameters.offset[3 * k + $0] }
        var t2 = 0.0, length2 = 0.0, p = 0
        for e in order {
            let v = (0..<3).map { $0 < dims ? eigen.vectors[e * dims + $0] : 0 }
            let sign = (abs(v[0]) >= abs(v[1]) ? v[0] : v[1]) < 0 ? -1.0 : 1.0
            check.directions.append(Vector3(x: sign * v[0], y: sign * v[1], z: sign * v[2]))
            let variance = max(0, eigen.values[e])
            check.sdMeters.append(variance.squareRoot())
            guard variance.squareRoot() <= config.surveyCheckableSDMeters, variance > 0 else { continue }
            let along = v[0] * delta[0] + v[1] * delta[1] + v[2] * delta[2]
            t2 += along * along / variance
            length2 += along * along
            p += 1
        }
        guard p > 0 else { return check }
        let f = t2 * Double(g - p) / (Double(p) * Double(g - 1))
        let pValue = FisherDistribution.upperTail(f, d1: Double(p), d2: Double(g - p))
        let length = length2.squareRoot()
        check.test = .init(statistic: t2, degreesOfFreedom: (p, g - p), pValue: pValue, alpha: config.surveyAlpha,
                           minimumEffectMeters: config.surveyMinimumEffectMeters, offsetAlongMeters: length, blocks: g,
                           flagged: pValue < config.surveyAlpha && length >= config.surveyMinimumEffectMeters)
        return check
    }
}

extension SelfCalibrationSolver: SurveyTestable {
    var surveyEpochCount: Int { data.epochCount }
    func surveyEpochTime(_ j: Int) -> Double { epochTimes[j] }
    func surveyEpoch(_ j: Int, hears k: Int) -> (count: Int, hears: Bool) {
        let range = data.epochStarts[j]..<data.epochStarts[j + 1]
        return (range.count, range.contains { data.slots[$0] == k })
    }
    var surveyEpochUnknowns: Int { dimensions }
    var surveyEpochWord: String { "epochs" }
    func surveySystem(locator k: Int, blockOf: [Int], blockCount: Int) -> (s: [Double], count: Int, offsetColumns: [Int], blockRHS: [[Double]]) {
        let (s, _, columns, blockRHS) = reducedSystem(blockOf: blockOf, blockCount: blockCount)
        return (s, columns.list.count, (0..<dimensions).map { columns.offset[3 * k + $0] }, blockRHS)
    }
}
