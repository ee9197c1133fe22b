#if canImport(Glibc)
import Glibc
#endif
import LocusCore
import LocusNumerics

/// Settings of the online per-tag, per-locator range bias estimate (`TagLocatorBiasEstimator`).
struct TagLocatorBiasConfiguration: Sendable, Hashable {
    /// Range noise σ, metres.
    var rangeSigmaMeters: Double
    /// Epochs with fewer ranges kept by the epoch's (x, y, b) solve teach nothing: 3 unknowns, so at
    /// least 3 redundant ranges. With 4 locators (1 redundant) every bias trades with the position and
    /// the tag offset almost as well as the residuals tell them apart.
    var minimumRanges: Int
    /// Floors with more locators are left alone: the estimator keeps J packed per tag
    /// (L(L+1)/2 + 3L floats: 240 bytes for 8 locators, 736 for 16) and solves L×L on the stack.
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
    /// Floors solved in 3-D (`update(spatialLocators:…)`): an epoch teaches nothing when a range's residual,
    /// projected away from the position, exceeds this many σ (NLOS, which with one redundant range a
    /// round the clip `clipSigmas` does not keep out: on simulated 6-locator flights with 10 % NLOS the
    /// corrections learnt from every epoch raised the causal RMSE from 0.086–0.097 to 0.108–0.148 m).
    var epochOutlierSigmas: Double = 2.5
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
    static let standard = TagLocatorBiasConfiguration()

    /// These settings for floors solved in 3-D (`update(spatialLocators:…)`): epochs of 4 ranges or
    /// more (3 unknowns, x, y, z: one redundant range), and no gauge on the biases' mean (no tag offset
    /// carries it there: a common bias is each locator's own).
    var spatial: TagLocatorBiasConfiguration {
        var c = self
        c.minimumRanges = 4
        c.commonSigmaMeters = .infinity
        return c
    }

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
/// Floors solved in 3-D (`update(spatialLocators:…)`): no tag offset, rows hᵢ = the unit line of sight
/// (x, y, z), linearised at the tag's 3-D track after the epoch (not a least-squares fix), so the
/// residuals are first projected away from the position, v ← v − H N⁻¹Hᵀv; epochs of ≥ 4 ranges (one
/// redundant), no gauge (a common bias is the locators' own there), and an epoch with a projected
/// residual beyond `epochOutlierSigmas`·σ teaches nothing (NLOS).
///
/// Memory: one `Float` buffer per tag — J packed (its lower triangle, L(L+1)/2), g, β̂ and ĉ —, made
/// when the estimator is (8 locators: 60 floats, 240 bytes), and the settings shared by reference;
/// the Cholesky factor lives on the stack during a solve. Sums are formed in `Double` and stored
/// rounded to `Float` (7 significant digits: far below the centimetre the estimate is about).
/// `update` allocates nothing. O(n²) per epoch for n ranges, O(L³) per window for L locators.
struct TagLocatorBiasEstimator: Sendable {
    /// The settings, held by reference so that the estimators of many tags share one copy.
    private let shared: TagLocatorBiasConfiguration.Shared
    /// The settings.
    var configuration: TagLocatorBiasConfiguration { shared.value }
    /// L: the floor's locator slots (0 when it has too many: nothing estimated).
    private let slotCount: Int32
    /// [J (lower triangle, row by row) | g | β̂ | ĉ], metres and m² (see the type's documentation).
    private var storage: [Float]
    /// The consistency window: Σ‖u − M·ĉ‖² (the candidates) and Σ‖u‖² (raw), m².
    private var windowCandidate = 0.0, windowRaw = 0.0
    /// Teaching epochs in the window; windows in a row whose epochs the candidates fitted worse than
    /// raw; windows judged since the (re)start; restarts.
    private var windowEpochs: Int16 = 0
    private var strikes: Int16 = 0
    private var windows: Int32 = 0
    private var restartCount: Int32 = 0
    /// Whether any candidate ĉᵢ is non-zero.
    private var hasCandidates = false
    /// True while the candidates are applied (`correctionMeters`).
    private(set) var isTrusted = false

    /// Windows that found the corrections inconsistent `restartStrikes` times in a row (restarts).
    var restarts: Int { Int(restartCount) }
    /// The slots estimated (the floor's locator count, or 0 beyond `maximumLocators`).
    var locatorCount: Int { Int(slotCount) }
    /// β̂ per slot, metres (a copy, for inspection and tests).
    var estimatesMeters: [Double] { (0..<locatorCount).map { Double(storage[estimateBase + $0]) } }

    /// An estimator for a floor with `locatorCount` locator slots, every estimate 0.
    init(locatorCount: Int, configuration: TagLocatorBiasConfiguration = .standard) {
        self.init(locatorCount: locatorCount, shared: TagLocatorBiasConfiguration.Shared(configuration))
    }

    /// An estimator on settings shared with other estimators (an engine keeps one copy).
    init(locatorCount: Int, shared: TagLocatorBiasConfiguration.Shared) {
        self.shared = shared
        let l = locatorCount <= shared.value.maximumLocators ? locatorCount : 0
        slotCount = Int32(l)
        storage = [Float](repeating: 0, count: l * (l + 1) / 2 + 3 * l)
    }

    // Offsets into `storage`: g, β̂ and ĉ follow J's L(L+1)/2 entries.
    private var rightHandSideBase: Int { locatorCount * (locatorCount + 1) / 2 }
    private var estimateBase: Int { rightHandSideBase + locatorCount }
    private var candidateBase: Int { rightHandSideBase + 2 * locatorCount }
    /// J's entry (i, j) in `storage` (either order). Slots are < L ≤ `maximumLocators`: wrapping
    /// arithmetic, no overflow checks.
    @inline(__always)
    private static func packed(_ i: Int, _ j: Int) -> Int {
        i >= j ? ((i &* (i &+ 1)) >> 1) &+ j : ((j &* (j &+ 1)) >> 1) &+ i
    }

    /// The correction for slot `slot` (metres): what the caller subtracts from the slot's ranges —
    /// ĉ while trusted, else 0.
    @inline(__always)
    func correctionMeters(slot: Int) -> Double {
        isTrusted && slot < locatorCount ? Double(storage[candidateBase + slot]) : 0
    }

    /// Learns from one epoch: `rangesMeters[k]` to `locators[k]` (floor slot `slots[k]`) as the caller
    /// corrected them (`correctionMeters` and the tag offset taken out), the epoch's (x, y, b) solution
    /// `position`, `offsetMeters` on those ranges (b relative to what was taken out), bit k of
    /// `droppedMask` set for a range the solve dropped as an outlier, tag at height h (metres).
    /// Returns true when the corrections changed (the caller refreshes its copy).
    mutating func update(locators: Span<Point3>, rangesMeters: Span<Double>,
                                 slots: Span<Int32>, position: Point2, offsetMeters b: Double,
                                 droppedMask: UInt64, tagHeightMeters h: Double) -> Bool {
        update(PlanarRows.self, locators: locators, rangesMeters: rangesMeters, slots: slots,
               position: Point3(x: position.x, y: position.y, z: h), offsetMeters: b, droppedMask: droppedMask)
    }

    /// Learns from one epoch of a floor solved in 3-D (no tag offset: its common part is each bias's
    /// own): `rangesMeters[k]` to `locators[k]` (floor slot `slots[k]`) as the caller corrected them,
    /// linearised at `position` (the tag's 3-D track after the epoch's ranges, not their least-squares
    /// fix). Rows hᵢ = the unit line of sight (x, y, z), N = Σ hᵢhᵢᵀ, and the residuals vᵢ = rᵢ − ρᵢ(p)
    /// projected away from the position, v ← v − H N⁻¹Hᵀv (what the epoch's least-squares fix would
    /// leave, to first order), then as `update`. Returns true when the corrections changed.
    mutating func update(spatialLocators locators: Span<Point3>, rangesMeters: Span<Double>, slots: Span<Int32>,
                         position p: Point3) -> Bool {
        update(SpatialRows.self, locators: locators, rangesMeters: rangesMeters, slots: slots, position: p, offsetMeters: 0,
               droppedMask: 0)
    }

    /// Both `update`s: rows (h₀, h₁, h₂, v) of the kept ranges at p (h₂ = `Rows.third`), compacted, and N;
    /// for rows without the tag offset the residuals projected away from the position first (an epoch
    /// with one beyond `epochOutlierSigmas`·σ teaches nothing); then `learn`.
    private mutating func update<Rows: EpochRows>(_: Rows.Type, locators: Span<Point3>, rangesMeters: Span<Double>,
                                                  slots: Span<Int32>, position p: Point3, offsetMeters b: Double,
                                                  droppedMask: UInt64) -> Bool {
        let c = configuration
        let n = min(locators.count, rangesMeters.count, slots.count, 64)
        guard locatorCount > 0, n - droppedMask.nonzeroBitCount >= c.minimumRanges else { return false }
        return withUnsafeTemporaryAllocation(of: SIMD4<Double>.self, capacity: n) { rows in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: n) { kept in
                var normal = TagRangeOffsetEstimator.NormalEquations()
                var m = 0
                for k in 0..<n where (droppedMask >> UInt64(k)) & 1 == 0 {
                    let a = locators[k], s = Int(slots[k])
                    let dx = p.x - a.x, dy = p.y - a.y, dz = p.z - a.z
                    let rho = RangeModel.predicted(dx: dx, dy: dy, dz: dz)
                    guard rho > 1e-9, s >= 0, s < locatorCount else { continue }
                    let sight = RangeModel.unit(dx: dx, dy: dy, dz: dz, rho: rho)
                    let h2 = Rows.third(sightZ: sight.z)
                    rows[m] = SIMD4(sight.x, sight.y, h2, rangesMeters[k] - rho - b)
                    kept[m] = s
                    normal.add(row: sight.x, sight.y, h2)
                    m += 1
                }
                guard m >= c.minimumRanges, let inverse = normal.inverse() else { return false }
                if !Rows.hasTagOffset {
                    var gv = SIMD3<Double>()
                    for i in 0..<m { gv += SIMD3(rows[i][0], rows[i][1], rows[i][2]) * rows[i][3] }
                    let xv = inverse.times(gv)
                    let outlier = c.epochOutlierSigmas * c.rangeSigmaMeters
                    for i in 0..<m {
                        rows[i][3] -= (SIMD3(rows[i][0], rows[i][1], rows[i][2]) * xv).sum()
                        if abs(rows[i][3]) > outlier { return false }
                    }
                }
                return learn(Rows.self, rows: rows, slots: kept, count: m, inverse: inverse)
            }
        }
    }

    /// The body of `update` on the epoch's m kept rows (h₀, h₁, h₂, v) and slots, N⁻¹ = `inverse`; each
    /// row's v is replaced by its u (below) once read.
    private mutating func learn<Rows: EpochRows>(_: Rows.Type, rows: UnsafeMutableBufferPointer<SIMD4<Double>>,
                                                 slots kept: UnsafeMutableBufferPointer<Int>, count m: Int,
                                                 inverse: SymmetricInverse3) -> Bool {
        let c = configuration
        let cb = candidateBase, gb = rightHandSideBase, l = locatorCount
        let trusted = isTrusted
        let clip = c.clipSigmas * c.rangeSigmaMeters
        // One pass over the buffer, through its pointer (the per-entry bounds and uniqueness checks of
        // the array accessor cost about as much as the arithmetic here; the same operations in the same order).
        let (candidate, raw) = storage.withUnsafeMutableBufferPointer { st -> (Double, Double) in
            // N⁻¹Hᵀc (the applied corrections, `correctionMeters`) and N⁻¹Hᵀĉ (the candidates), for
            // u = v + M·c and u − M·ĉ.
            var gc = SIMD3<Double>(), gk = SIMD3<Double>()
            for i in 0..<m {
                let hi = SIMD3(rows[i][0], rows[i][1], Rows.third(rows[i])), ck = Double(st[cb + kept[i]])
                gc += hi * (trusted ? ck : 0)
                gk += hi * ck
            }
            let xc = inverse.times(gc), xk = inverse.times(gk)
            var candidate = 0.0, raw = 0.0
            for i in 0..<m {
                let hi = SIMD3(rows[i][0], rows[i][1], Rows.third(rows[i])), ck = Double(st[cb + kept[i]])
                let u = rows[i][3] + (trusted ? ck : 0) - (hi * xc).sum()
                let w = u - ck + (hi * xk).sum()
                rows[i][3] = u
                candidate += w * w
                raw += u * u
            }
            // Forget, then J += M (on the epoch's slots), g += u (each uᵢ clipped at `clipSigmas`·σ).
            if c.forgetting < 1 {
                let lambda = Float(c.forgetting)
                for e in 0..<(gb + l) { st[e] *= lambda }
            }
            for i in 0..<m {
                let hi = SIMD3(rows[i][0], rows[i][1], Rows.third(rows[i])), ni = inverse.times(hi), si = kept[i]
                st[gb + si] = Float(Double(st[gb + si]) + min(max(rows[i][3], -clip), clip))
                // Mᵢⱼ = δᵢⱼ − hᵢᵀN⁻¹hⱼ, added once to the packed (si, sj) entry (twice on the diagonal of J
                // when two rows share a slot — they cannot: one range per slot an epoch); δᵢⱼ is added as
                // the literal 0 or 1 in both loops, so the entries keep their bits (even a zero's sign).
                for j in 0..<i {
                    let hj = SIMD3(rows[j][0], rows[j][1], Rows.third(rows[j])), sj = kept[j]
                    let e = Self.packed(si, sj)
                    st[e] = Float(Double(st[e]) + 0 - (ni * hj).sum())
                }
                let d = Self.packed(si, si)
                st[d] = Float(Double(st[d]) + 1 - (ni * hi).sum())
            }
            return (candidate, raw)
        }
        return judge(candidate: candidate, raw: raw)
    }

    /// Adds one epoch to the consistency window (`candidate`: Σ‖u − M·ĉ‖², `raw`: Σ‖u‖², m²); at its end
    /// judges the candidates, solves for β̂ and sets the next candidates, applied only when the last
    /// ones fitted the window better than the raw ranges, after the warm-up. Returns true when the
    /// corrections changed.
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
            strikes &+= 1
            if Int(strikes) >= c.restartStrikes {
                // Restart: everything learnt so far is forgotten.
                restartCount &+= 1
                strikes = 0
                windows = 0
                for e in storage.indices { storage[e] = 0 }
                hasCandidates = false
                isTrusted = false
                return true
            }
        } else if hadCandidates {
            strikes = 0
        }
        guard solve() else { return false }
        windows &+= 1
        hasCandidates = (0..<locatorCount).contains { storage[candidateBase + $0] != 0 }
        // Applied only when the last candidates fitted this window better than the raw ranges, and
        // after the warm-up.
        isTrusted = hasCandidates && hadCandidates && agrees && Int(windows) * c.consistencyEpochs >= c.warmUpEpochs
        return true
    }

    /// Solves (J/κ + ε·I + γ·11ᵀ)·β̂ = g/κ into β̂ and sets the candidates ĉ: β̂ᵢ where σᵢ² =
    /// σ²·(A⁻¹)ᵢᵢ ≤ `trustedSigmaMeters`² and β̂ᵢ² ≥ `significanceSigmas`²·σᵢ², else 0. False when the
    /// factorisation fails (estimates and candidates kept).
    private mutating func solve() -> Bool {
        let l = locatorCount
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: l * l + 2 * l) { scratch in
            solve(factor: UnsafeMutableBufferPointer(rebasing: scratch[0..<(l * l)]),
                  column: UnsafeMutableBufferPointer(rebasing: scratch[(l * l)..<(l * l + l)]),
                  beta: UnsafeMutableBufferPointer(rebasing: scratch[(l * l + l)..<(l * l + 2 * l)]))
        }
    }

    /// `solve` on stack scratch: `factor` L×L (lower: the Cholesky factor; upper: columns of L⁻¹),
    /// `column` and `beta` L each.
    private mutating func solve(factor: UnsafeMutableBufferPointer<Double>, column: UnsafeMutableBufferPointer<Double>,
                                beta: UnsafeMutableBufferPointer<Double>) -> Bool {
        let c = configuration, l = locatorCount
        let kappa = c.epochsPerIndependent, sigma2 = c.rangeSigmaMeters * c.rangeSigmaMeters
        let ridge = sigma2 / (c.priorSigmaMeters * c.priorSigmaMeters)
        // The gauge: the mean of β over the floor's locators has prior σ `commonSigmaMeters` (b̂ carries
        // the common part), so a slot's variance is that of its bias against the others.
        let gauge = sigma2 / (Double(l * l) * c.commonSigmaMeters * c.commonSigmaMeters)
        // Cholesky A = L·Lᵀ of A = J/κ + ε·I + γ·11ᵀ (lower triangle of `factor`).
        for i in 0..<l {
            for j in 0...i {
                var sum = Double(storage[Self.packed(i, j)]) / kappa + (i == j ? ridge : 0) + gauge
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
        let gb = rightHandSideBase
        for i in 0..<l {
            var sum = Double(storage[gb + i]) / kappa
            for k in 0..<i { sum -= factor[i * l + k] * column[k] }
            column[i] = sum / factor[i * l + i]
        }
        for i in stride(from: l - 1, through: 0, by: -1) {
            var sum = column[i]
            for k in (i + 1)..<max(i + 1, l) { sum -= factor[k * l + i] * beta[k] }
            beta[i] = min(max(sum / factor[i * l + i], -c.maximumBiasMeters), c.maximumBiasMeters)
        }
        // (A⁻¹)ᵢᵢ = ‖L⁻¹eᵢ‖²: y = L⁻¹eᵢ (zero above i), yᵢ = 1/Lᵢᵢ, y_r = −(Σ_{k=i}^{r−1} L_rk·y_k)/L_rr,
        // y_k (k > i) kept in row i of the upper triangle, which the lower-triangle factor leaves free.
        for i in 0..<l {
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
        let eb = estimateBase, cb = candidateBase
        for s in 0..<l {
            let e = beta[s], variance = column[s]
            storage[eb + s] = Float(e)
            let trusted = variance <= c.trustedSigmaMeters * c.trustedSigmaMeters
                && e * e >= c.significanceSigmas * c.significanceSigmas * variance
            storage[cb + s] = trusted ? Float(e) : 0
        }
        return true
    }
}

/// The two kinds of epoch `TagLocatorBiasEstimator` learns from, as a type parameter (so that the planar
/// loops keep their arithmetic): planar epochs solve (x, y, b), rows hᵢ = (∂ρᵢ/∂x, ∂ρᵢ/∂y, 1) at the
/// epoch's solution; epochs of floors solved in 3-D solve (x, y, z), rows the unit line of sight.
private protocol EpochRows {
    /// Whether the epoch's unknowns include the tag offset b (the row's third component 1).
    static var hasTagOffset: Bool { get }
}

extension EpochRows {
    /// The third component of a row hᵢ: 1 with the tag offset, else the line of sight's z.
    @inline(__always) static func third(sightZ z: Double) -> Double { hasTagOffset ? 1 : z }
    /// The third component of a stored row (h₀, h₁, h₂, v).
    @inline(__always) static func third(_ row: SIMD4<Double>) -> Double { hasTagOffset ? 1 : row[2] }
}

private enum PlanarRows: EpochRows { static var hasTagOffset: Bool { true } }

private enum SpatialRows: EpochRows { static var hasTagOffset: Bool { false } }

extension TagLocatorBiasConfiguration {
    /// Immutable settings held by reference (memory per tracked tag).
    final class Shared: Sendable {
        let value: TagLocatorBiasConfiguration
        init(_ value: TagLocatorBiasConfiguration) { self.value = value }
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
