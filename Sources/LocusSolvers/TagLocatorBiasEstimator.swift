#if canImport(Glibc)
import Glibc
#endif
import LocusCore

/// Settings of the online per-tag, per-locator range bias estimate (`TagLocatorBiasEstimator`).
package struct TagLocatorBiasConfiguration: Sendable, Hashable {
    /// Range noise σ, metres.
    package var rangeSigmaMeters: Double
    /// Epochs with fewer ranges kept by the epoch's (x, y, b) solve teach nothing: 3 unknowns, so at
    /// least 3 redundant ranges. With 4 locators (1 redundant) every bias trades with the position and
    /// the tag offset almost as well as the residuals tell them apart.
    var minimumRanges: Int
    /// Floors with more locators are left alone: the estimator keeps two L×L matrices per tag (8
    /// locators: 1.6 KiB a tag in all; 16: 4.8 KiB).
    var maximumLocators: Int
    /// The prior σ of one locator's bias about the tag's common offset, metres (the ridge
    /// (σ/σ_β)²·I: what keeps an unobserved combination at 0).
    var priorSigmaMeters: Double
    /// The forgetting factor λ per teaching epoch (information and right-hand side scaled by λ):
    /// 1/(1 − λ) epochs of memory.
    var forgetting: Double
    /// Epochs are not independent (ranges at 4 Hz within centimetres of the same multipath): the
    /// information of one epoch is divided by this.
    var epochsPerIndependent: Double
    /// A locator's estimate is applied once its σ, σ·√((J/κ + ε·I)⁻¹)ᵢᵢ, is at most this, metres.
    var trustedSigmaMeters: Double
    /// The estimate is solved, judged and the corrections refreshed every this many teaching epochs.
    var consistencyEpochs: Int
    /// Estimates are bounded to ±this, metres.
    var maximumBiasMeters: Double
    /// The prior σ of the mean of the floor's biases, metres: small, the tag offset b̂ carries it.
    var commonSigmaMeters: Double
    /// Windows in a row whose candidate corrections fit worse than the raw ranges before the
    /// estimator restarts (forgets everything it learnt).
    var restartStrikes: Int

    /// A uᵢ teaches at most this many σ (NLOS the epoch's outlier test kept).
    var clipSigmas: Double
    /// A trusted estimate is applied only when |β̂ᵢ| is at least this many of its σ (a bias told
    /// from noise: on simulated ranges without biases, 10 % NLOS, 1σ kept the RMSE as without the
    /// estimator, 0σ cost 0.4–0.7 mm).
    var significanceSigmas: Double
    /// Nothing is applied before this many teaching epochs since the (re)start (128: 32 s at 4 Hz).
    /// A tag must have moved for its biases to separate from its position: on the simulated corridor
    /// (13 locators in a line, no biases, 10 % NLOS, 60 s) corrections applied from the first judged
    /// window cost 1 mm; from 128 epochs, nothing.
    var warmUpEpochs: Int

    /// Creates settings; every argument defaults to the value of `standard`.
    init(rangeSigmaMeters: Double = 0.1, minimumRanges: Int = 6, maximumLocators: Int = 16, priorSigmaMeters: Double = 0.15,
         forgetting: Double = 0.998, epochsPerIndependent: Double = 4, trustedSigmaMeters: Double = 0.05,
         consistencyEpochs: Int = 32, maximumBiasMeters: Double = 1, commonSigmaMeters: Double = 0.01,
         restartStrikes: Int = 8, clipSigmas: Double = 3, significanceSigmas: Double = 1, warmUpEpochs: Int = 128) {
        self.warmUpEpochs = warmUpEpochs
        self.clipSigmas = clipSigmas
        self.significanceSigmas = significanceSigmas
        self.rangeSigmaMeters = rangeSigmaMeters
        self.minimumRanges = minimumRanges
        self.maximumLocators = maximumLocators
        self.priorSigmaMeters = priorSigmaMeters
        self.forgetting = forgetting
        self.epochsPerIndependent = epochsPerIndependent
        self.trustedSigmaMeters = trustedSigmaMeters
        self.consistencyEpochs = consistencyEpochs
        self.maximumBiasMeters = maximumBiasMeters
        self.commonSigmaMeters = commonSigmaMeters
        self.restartStrikes = restartStrikes
    }

    /// σ 0.1 m, epochs of ≥ 6 ranges, ≤ 16 locators, prior σ_β 0.15 m, mean's σ 1 cm, λ = 0.998 (500
    /// epochs: 2 min at 4 Hz), 4 epochs per independent one, uᵢ clipped at 3σ, applied from σ ≤ 5 cm
    /// when |β̂ᵢ| ≥ its σ and not before 128 epochs, solved and judged
    /// every 32 epochs (8 s at 4 Hz), restarted after 8 disagreeing windows in a row, ±1 m. Tuned on the
    /// CUHK-SZ fast and mid runs (docs/calibration.md, "Online per-locator range biases").
    package static let standard = TagLocatorBiasConfiguration()

}

/// Online estimate of the range bias βᵢ of each locator i as one tag sees it (antenna delays, a
/// locator's own delay, a constant multipath excess), on top of the tag's common offset b
/// (`TagRangeOffsetEstimator`), for floors without calibrated locator biases.
///
/// Model: rᵢ = ‖p − aᵢ‖ + b + βᵢ + εᵢ (metres). Each epoch the offset estimator solves (x, y, b) on the
/// epoch's ranges (corrected by the engine's current corrections cᵢ and b̂); at its solution, with
/// rows hᵢ = (∂ρᵢ/∂x, ∂ρᵢ/∂y, 1) and N = Σ hᵢhᵢᵀ, the residuals are v = M(β − c + ε), with
/// M = I − H N⁻¹ Hᵀ the projection away from the epoch's position and offset. The residuals of the
/// uncorrected ranges are u = v + M·c = M(β + ε). Eliminating each epoch's (x, y, b) from the joint
/// least-squares problem over every epoch leaves, for β (the slots of the floor), the normal equations
///
///   (Σₖ Mₖ/κ + ε·I)·β = Σₖ uₖ/κ,   ε = (σ/σ_β)²,
///
/// (Mₖ scattered on the epoch's slots; MᵀM = M, Mᵀu = u), which is what the offline truth-free
/// calibration solves in one batch. The estimator accumulates J = Σ Mₖ and g = Σ uₖ as epochs come,
/// each scaled by λ per epoch (forgetting: biases drift slowly), and every `consistencyEpochs` epochs
/// solves (J/κ + ε·I)·β̂ = g/κ by Cholesky (n ≤ 16: no LAPACK, no allocation). The common part of β
/// is in no M's range (it is b): the ridge ε keeps it at 0 and b̂ carries it. Parts of β the tag's
/// geometry does not separate from its position (a tag standing still; 4 locators) keep the prior's
/// variance: the covariance σ²·(J/κ + ε·I)⁻¹ says so, and a locator's estimate is applied only once its
/// σ is at most `trustedSigmaMeters` (κ = `epochsPerIndependent`: consecutive epochs see the same
/// multipath, so J overstates the information).
///
/// Consistency. Every window the candidate corrections ĉ (β̂ of the slots trusted at the last solve:
/// σᵢ ≤ `trustedSigmaMeters` and |β̂ᵢ| ≥ `significanceSigmas`·σᵢ) are judged on the window's epochs,
/// which did not teach them: the sum of squares of the residuals with them, Σ‖u − M·ĉ‖², against the
/// raw residuals' Σ‖u‖². Only candidates that fitted better are followed by corrections: the new
/// solve's candidates are applied (`correctionsMeters`) until the next window. Candidates that fit
/// no better disagree with the ranges: no correction is taken out for the next window (a strike),
/// and `restartStrikes` disagreeing windows in a row restart the estimator (J, g, β̂ and the
/// corrections back to 0). Nothing is applied in the first `warmUpEpochs` epochs.
///
/// Allocation: the per-locator arrays are made once, when the estimator is; `update` allocates
/// nothing. O(n²) per epoch for n ranges, O(L³) per window for L locators of the floor.
package struct TagLocatorBiasEstimator: Sendable {
    /// The settings.
    let configuration: TagLocatorBiasConfiguration
    /// L: the floor's locator slots (0 when it has too many: nothing estimated).
    let locatorCount: Int
    /// β̂ per locator slot of the floor, metres.
    package private(set) var estimatesMeters: [Double]
    /// J (L×L, row-major) and g (L), the accumulated information and right-hand side.
    private var information: [Double]
    private var rightHandSide: [Double]
    /// Scratch for the Cholesky factor (L×L; the upper triangle holds columns of L⁻¹) and one solve (L;
    /// afterwards each slot's variance, m²).
    private var factor: [Double]
    private var column: [Double]
    /// What the caller takes out of each slot's ranges, metres: β̂ᵢ once trusted, else 0.
    package private(set) var correctionsMeters: [Double]
    /// The consistency window: teaching epochs, Σ‖u − M·ĉ‖² (the candidates) and Σ‖u‖² (raw), m².
    private var windowEpochs: Int32 = 0
    private var windowCandidate = 0.0, windowRaw = 0.0
    /// The candidate corrections ĉ (β̂ of the slots trusted at the last solve, else 0), metres, and
    /// whether any is non-zero; windows in a row whose epochs the candidates fitted worse than raw.
    private var candidatesMeters: [Double]
    private var hasCandidates = false
    private var strikes: Int32 = 0
    /// Windows judged since the (re)start.
    private var windows: Int32 = 0
    /// True while some correction is applied.
    package private(set) var isTrusted = false
    /// Windows that found the corrections inconsistent (restarts).
    package private(set) var restarts = 0

    /// An estimator for a floor with `locatorCount` locator slots, every estimate 0.
    package init(locatorCount: Int, configuration: TagLocatorBiasConfiguration = .standard) {
        self.configuration = configuration
        let l = locatorCount <= configuration.maximumLocators ? locatorCount : 0
        self.locatorCount = l
        estimatesMeters = [Double](repeating: 0, count: locatorCount)
        correctionsMeters = [Double](repeating: 0, count: locatorCount)
        candidatesMeters = [Double](repeating: 0, count: locatorCount)
        information = [Double](repeating: 0, count: l * l)
        factor = [Double](repeating: 0, count: l * l)
        rightHandSide = [Double](repeating: 0, count: l)
        column = [Double](repeating: 0, count: l)
    }

    /// The correction for slot `slot` (metres): what the caller subtracts from the slot's ranges.
    @inline(__always)
    package func correctionMeters(slot: Int) -> Double { correctionsMeters[slot] }

    /// Learns from one epoch: `rangesMeters[k]` to `locators[k]` (floor slot `slots[k]`) as the caller
    /// corrected them (slot corrections `correctionsMeters` and the tag offset taken out), the epoch's
    /// (x, y, b) solution `position`, `offsetMeters` on those ranges (b relative to what was taken
    /// out), bit k of `droppedMask` set for a range the solve dropped as an outlier, tag at height h.
    /// Returns true when the corrections changed (the caller refreshes its copy).
    package mutating func update(locators: UnsafeBufferPointer<Point3>, rangesMeters: UnsafeBufferPointer<Double>,
                                 slots: UnsafeBufferPointer<Int32>, position: Point2, offsetMeters b: Double,
                                 droppedMask: UInt64, tagHeightMeters h: Double) -> Bool {
        let c = configuration
        let n = min(locators.count, rangesMeters.count, slots.count, 64)
        guard locatorCount > 0, n - droppedMask.nonzeroBitCount >= c.minimumRanges else { return false }
        // Rows (hx, hy, u) and slots of the kept ranges, compacted; N.
        return withUnsafeTemporaryAllocation(of: SIMD4<Double>.self, capacity: n) { rows in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: n) { kept in
                var normal = TagRangeOffsetEstimator.NormalEquations()
                var m = 0
                for k in 0..<n where (droppedMask >> UInt64(k)) & 1 == 0 {
                    let a = locators[k], s = Int(slots[k])
                    let dx = position.x - a.x, dy = position.y - a.y, dz = h - a.z
                    let rho = (dx * dx + dy * dy + dz * dz).squareRoot()
                    guard rho > 1e-9, s >= 0, s < locatorCount else { continue }
                    rows[m] = SIMD4(dx / rho, dy / rho, rangesMeters[k] - rho - b, 0)
                    kept[m] = s
                    normal.add(hx: dx / rho, hy: dy / rho, v: 0)
                    m += 1
                }
                guard m >= c.minimumRanges, let inverse = normal.inverse() else { return false }
                // N⁻¹Hᵀc and N⁻¹Hᵀĉ, for u = v + M·c and u − M·ĉ.
                var gc = SIMD3<Double>(), gk = SIMD3<Double>()
                for i in 0..<m {
                    let hi = SIMD3(rows[i][0], rows[i][1], 1)
                    gc += hi * correctionsMeters[kept[i]]
                    gk += hi * candidatesMeters[kept[i]]
                }
                let xc = inverse.times(gc), xk = inverse.times(gk)
                var candidate = 0.0, raw = 0.0
                for i in 0..<m {
                    let hi = SIMD3(rows[i][0], rows[i][1], 1)
                    let u = rows[i][2] + correctionsMeters[kept[i]] - (hi * xc).sum()
                    let w = u - candidatesMeters[kept[i]] + (hi * xk).sum()
                    rows[i][3] = u
                    candidate += w * w
                    raw += u * u
                }
                // Forget, then J += M (on the epoch's slots), g += u (each uᵢ clipped at `clipSigmas`·σ).
                let clip = c.clipSigmas * c.rangeSigmaMeters
                let lambda = c.forgetting, l = locatorCount
                if lambda < 1 {
                    for e in 0..<(l * l) { information[e] *= lambda }
                    for e in 0..<l { rightHandSide[e] *= lambda }
                }
                for i in 0..<m {
                    let hi = SIMD3(rows[i][0], rows[i][1], 1), ni = inverse.times(hi), si = kept[i]
                    rightHandSide[si] += min(max(rows[i][3], -clip), clip)
                    for j in 0..<m {
                        let hj = SIMD3(rows[j][0], rows[j][1], 1)
                        information[si * l + kept[j]] += (i == j ? 1 : 0) - (ni * hj).sum()
                    }
                }
                return judge(candidate: candidate, raw: raw)
            }
        }
    }

    /// Adds one epoch to the consistency window (`candidate`: Σ‖u − M·ĉ‖², `raw`: Σ‖u‖², m²); at its end
    /// judges the candidates, solves for β̂, and sets the corrections: the new candidates when the old
    /// ones fitted the window better than the raw ranges, else none (a strike; `restartStrikes` in a row
    /// restart the estimator). Returns true when the corrections changed.
    private mutating func judge(candidate: Double, raw: Double) -> Bool {
        let c = configuration
        windowCandidate += candidate
        windowRaw += raw
        windowEpochs &+= 1
        guard Int(windowEpochs) >= c.consistencyEpochs else { return false }
        let hadCandidates = hasCandidates
        let agrees = windowCandidate < windowRaw
        windowEpochs = 0
        windowCandidate = 0
        windowRaw = 0
        if hadCandidates && !agrees {
            strikes += 1
            if strikes >= c.restartStrikes {
                // Restart: everything learnt so far is forgotten.
                restarts += 1
                strikes = 0
                for e in information.indices { information[e] = 0 }
                for s in 0..<locatorCount {
                    rightHandSide[s] = 0; estimatesMeters[s] = 0; candidatesMeters[s] = 0; correctionsMeters[s] = 0
                }
                hasCandidates = false
                isTrusted = false
                windows = 0
                return true
            }
        } else if hadCandidates {
            strikes = 0
        }
        guard solve() else { return false }
        hasCandidates = false
        for s in 0..<locatorCount {
            let e = estimatesMeters[s]
            let trusted = column[s] <= c.trustedSigmaMeters * c.trustedSigmaMeters
                && e * e >= c.significanceSigmas * c.significanceSigmas * column[s]
            candidatesMeters[s] = trusted ? estimatesMeters[s] : 0
            if trusted { hasCandidates = true }
        }
        // Applied only when the last candidates fitted this window better than the raw ranges, and
        // after the warm-up.
        windows &+= 1
        isTrusted = hasCandidates && hadCandidates && agrees && Int(windows) * c.consistencyEpochs >= c.warmUpEpochs
        for s in 0..<locatorCount { correctionsMeters[s] = isTrusted ? candidatesMeters[s] : 0 }
        return true
    }

    /// Solves (J/κ + ε·I)·β̂ = g/κ into `estimatesMeters` and leaves each slot's variance σ²·((J/κ + ε·I)⁻¹)ᵢᵢ
    /// (m²) in `column`. False when the factorisation fails (the estimate is kept).
    private mutating func solve() -> Bool {
        let c = configuration, l = locatorCount
        let kappa = c.epochsPerIndependent, sigma2 = c.rangeSigmaMeters * c.rangeSigmaMeters
        let ridge = sigma2 / (c.priorSigmaMeters * c.priorSigmaMeters)
        // The gauge: the mean of β over the floor's locators has prior σ `commonSigmaMeters` (b̂ carries
        // the common part), so a slot's variance is that of its bias against the others.
        let gauge = sigma2 / (Double(l * l) * c.commonSigmaMeters * c.commonSigmaMeters)
        // Cholesky A = L·Lᵀ of A = J/κ + ε·I (lower triangle in `factor`).
        for i in 0..<l {
            for j in 0...i {
                var sum = (information[i * l + j] + information[j * l + i]) / (2 * kappa) + (i == j ? ridge : 0) + gauge
                for k in 0..<j { sum -= factor[i * l + k] * factor[j * l + k] }
                if i == j {
                    guard sum > 0, sum.isFinite else { return false }
                    factor[i * l + i] = sum.squareRoot()
                } else {
                    factor[i * l + j] = sum / factor[j * l + j]
                }
            }
        }
        // β̂ = A⁻¹g/κ: forward then backward substitution (through `column`).
        for i in 0..<l {
            var sum = rightHandSide[i] / kappa
            for k in 0..<i { sum -= factor[i * l + k] * column[k] }
            column[i] = sum / factor[i * l + i]
        }
        for i in stride(from: l - 1, through: 0, by: -1) {
            var sum = column[i]
            for k in (i + 1)..<max(i + 1, l) { sum -= factor[k * l + i] * estimatesMeters[k] }
            estimatesMeters[i] = min(max(sum / factor[i * l + i], -c.maximumBiasMeters), c.maximumBiasMeters)
        }
        // (A⁻¹)ᵢᵢ = ‖L⁻¹eᵢ‖²: column i of L⁻¹ by forward substitution, for each i.
        for i in 0..<l {
            // y = L⁻¹eᵢ (zero above i): yᵢ = 1/Lᵢᵢ, y_r = −(Σ_{k=i}^{r−1} L_rk·y_k)/L_rr, y_k (k > i)
            // kept in row i of the upper triangle, which the lower-triangle factor leaves free.
            let yi = 1 / factor[i * l + i]
            var norm = yi * yi
            for r in (i + 1)..<max(i + 1, l) {
                var sum = -factor[r * l + i] * yi
                for k in (i + 1)..<r { sum -= factor[r * l + k] * factor[i * l + k] }
                let y = sum / factor[r * l + r]
                factor[i * l + r] = y
                norm += y * y
            }
            column[i] = sigma2 * norm
        }
        return true
    }
}

extension TagRangeOffsetEstimator.NormalEquations {
    /// N⁻¹ (symmetric 3×3) by the adjugate; nil when |det N| ≤ 1e-9 or not finite.
    func inverse() -> SymmetricInverse3? {
        let c00 = n11 * n22 - n12 * n12, c01 = n02 * n12 - n01 * n22, c02 = n01 * n12 - n02 * n11
        let det = n00 * c00 + n01 * c01 + n02 * c02
        guard abs(det) > 1e-9, abs(det) <= .greatestFiniteMagnitude else { return nil }
        let c11 = n00 * n22 - n02 * n02, c12 = n01 * n02 - n00 * n12, c22 = n00 * n11 - n01 * n01
        return SymmetricInverse3(r0: SIMD3(c00, c01, c02) / det, r1: SIMD3(c01, c11, c12) / det,
                                 r2: SIMD3(c02, c12, c22) / det)
    }
}

/// A symmetric 3×3 matrix by rows (N⁻¹ of an (x, y, b) solve).
struct SymmetricInverse3 {
    var r0: SIMD3<Double>, r1: SIMD3<Double>, r2: SIMD3<Double>
    /// The product with `v`.
    @inline(__always)
    func times(_ v: SIMD3<Double>) -> SIMD3<Double> { SIMD3((r0 * v).sum(), (r1 * v).sum(), (r2 * v).sum()) }
}
