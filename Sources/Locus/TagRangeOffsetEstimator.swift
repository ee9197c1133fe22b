#if canImport(Glibc)
import Glibc
#endif
import LocusCore

/// Settings of the online per-tag common range offset (`TagRangeOffsetEstimator`).
struct TagRangeOffsetConfiguration: Sendable, Hashable {
    /// Range noise σ assumed for one epoch's (x, y, b) solve, metres.
    var rangeSigmaMeters: Double
    /// Random-walk density q_b of the offset, m²/s (how fast the tag's delay may drift).
    var driftDensity: Double
    /// Prior σ of the offset before the first epoch, metres.
    var initialSigmaMeters: Double
    /// Epochs with fewer ranges are not used (3 unknowns need at least 4 ranges to be checked).
    var minimumRanges: Int
    /// An epoch whose offset estimate exceeds this in size is ignored, metres.
    var maximumOffsetMeters: Double
    /// A range whose residual exceeds this many σ is dropped from the epoch's solve (largest first).
    var rejectionSigmas: Double
    /// An epoch whose worst residual is beyond `rejectionSigmas`·σ with no range to spare (which range is
    /// off cannot be told) still measures b while that residual is at most this many σ — taken with R
    /// scaled by the variance factor σ̂²/σ², σ̂² = Σvᵢ²/(n − 3) (`softEpochVarianceFactor`) — and not
    /// beyond: the tracking filter's soft long gate in kind (2.5–4σ taken with R raised, refused
    /// beyond 4σ). 4: a blocked locator's metres are far beyond it; a 4-locator floor whose biases
    /// leave every epoch's one redundant range 0.29–0.30 m off (3σ) is no longer a coin at the 3σ edge
    /// (docs/calibration.md, "The epoch with no range to spare").
    var softRejectionSigmas: Double
    /// An epoch whose offset innovation exceeds this many √(P + R) is ignored.
    var gateSigmas: Double
    /// Seeded with a tracked position, an epoch is linearised once at the seed when its position step
    /// |Δx| + |Δy| stays under this, metres (one Gauss–Newton step from d away errs by O(d²/ρ): a few
    /// mm at most for d ≤ 15 cm and ranges of metres, typically d ≈ 4 cm — the scatter of one epoch's
    /// solution — and < 1 mm; the scalar filter on b then averages it over many epochs); otherwise its
    /// Gauss–Newton from the seed stops after a step (|Δx| + |Δy| + |Δb|) shorter than this
    /// (unseeded: 0.1 mm). 15 cm, not 5: one epoch's solution scatters by several cm around the
    /// tracked seed, so at 5 cm half the epochs needed a second linearisation.
    var seededStepToleranceMeters: Double
    /// The consistency window W: the estimator's own innovations are judged every W usable epochs
    /// (`TagRangeOffsetEstimator`, "Consistency").
    var consistencyEpochs: Int
    /// The bound on a window's sum of normalised innovations squared, each capped at `gateSigmas`²:
    /// above it the estimate disagrees with the ranges and the estimator restarts. 128 for W = 16: a
    /// mean of 8 an epoch, half the cap — about half the window beyond the gate. Not χ²₁₆'s 99.9 %
    /// quantile (39.25): with 3 % NLOS the capped sums of correct estimators have heavier tails
    /// (p99 ≈ 57 on the 40-tag hall) and that bound restarted 5 % of their windows; a wrong estimate
    /// beyond the gate sums to 16·W = 256.
    var consistencyBound: Double
    /// The estimate is applied to the tag's ranges only once its σ √P is at most this, metres, and
    /// the epochs judged so far in the window (at least `trustEpochs` since the (re)start) stay
    /// within their share of the bound: Σ ≤ `consistencyBound`·m/W after m epochs.
    var trustedSigmaMeters: Double
    /// The fewest epochs since the (re)start before the estimate is applied: 2, the epoch that set
    /// b̂ and one that checks it (a whole window cost the real runs 1–1.5 cm: 4 s of raw ranges).
    var trustEpochs: Int

    /// Creates settings; every argument defaults to the value of `standard`.
    init(rangeSigmaMeters: Double = 0.1, driftDensity: Double = 1e-5, initialSigmaMeters: Double = 1,
                 minimumRanges: Int = 4, maximumOffsetMeters: Double = 1.5, rejectionSigmas: Double = 3,
                 softRejectionSigmas: Double = 4, gateSigmas: Double = 4, seededStepToleranceMeters: Double = 0.15, consistencyEpochs: Int = 16,
                 consistencyBound: Double = 128, trustedSigmaMeters: Double = 0.05, trustEpochs: Int = 2) {
        self.rangeSigmaMeters = rangeSigmaMeters
        self.driftDensity = driftDensity
        self.initialSigmaMeters = initialSigmaMeters
        self.minimumRanges = minimumRanges
        self.maximumOffsetMeters = maximumOffsetMeters
        self.rejectionSigmas = rejectionSigmas
        self.softRejectionSigmas = softRejectionSigmas
        self.gateSigmas = gateSigmas
        self.seededStepToleranceMeters = seededStepToleranceMeters
        self.consistencyEpochs = consistencyEpochs
        self.consistencyBound = consistencyBound
        self.trustedSigmaMeters = trustedSigmaMeters
        self.trustEpochs = trustEpochs
    }

    /// The ranges an epoch needs to be solved and checked: `minimumRanges`, and never fewer than 4
    /// (x, y and b, and one range to check them).
    var rangesNeeded: Int { max(4, minimumRanges) }

    /// The factor an epoch's offset variance R is scaled by when its worst residual (`worstResidual`, m)
    /// stays beyond `rejectionSigmas`·σ with no range to spare: the variance factor σ̂²/σ², σ̂² =
    /// Σvᵢ²/(n − 3) over its n ranges' residuals vᵢ (`residualSquares`, m²), at least 1; nil (the epoch
    /// not used) when the worst residual exceeds `softRejectionSigmas`·σ or n ≤ 3. With 4 ranges the
    /// residuals are one parity value spread over the ranges: the epoch says b with the locators'
    /// disagreement in it, and weighs in proportion (1/9 of a clean epoch's weight or less).
    func softEpochVarianceFactor(worstResidual: Double, residualSquares: Double, ranges n: Int) -> Double? {
        guard n > 3, worstResidual <= softRejectionSigmas * rangeSigmaMeters else { return nil }
        return max(1, residualSquares / (Double(n - 3) * rangeSigmaMeters * rangeSigmaMeters))
    }

    /// σ 0.1 m, q_b = 1e-5 m²/s (time constant of seconds to tens of seconds at 4 Hz), prior 1 m,
    /// at least 4 ranges, offsets beyond 1.5 m ignored, ranges beyond 3σ dropped (with none to spare: used
    /// down-weighted up to 4σ), 4σ innovation gate,
    /// judged every 16 usable epochs (4 s at 4 Hz) against a capped-ν² sum of 128, applied from σ ≤ 5 cm
    /// after 2 consistent epochs.
    static let standard = TagRangeOffsetConfiguration()
}

/// Online estimate of a tag's common range offset b (antenna delay of the tag: every range of the
/// tag long by the same b), for sites without calibrated locator biases.
///
/// Per epoch, planar Gauss–Newton on (x, y, b): rᵢ = ‖(x, y, h) − aᵢ‖ + b + εᵢ, with the ranges
/// already corrected by the offset the caller took out (b_c), so the epoch measures b_c + δ, δ the
/// epoch's own b, with variance R = σ²·(N⁻¹)_bb (N = HᵀH, rows Hᵢ = (∂ρᵢ/∂x, ∂ρᵢ/∂y, 1)). A scalar
/// Kalman filter on the random walk b then updates: P ← P + q_b·Δt, innovation ν = b_c + δ − b̂,
/// K = P/(P + R), b̂ ← b̂ + K·ν, P ← (1 − K)·P. Allocation-free; O(n) per epoch for n ranges. Seeded
/// with a tracked position the epoch is linearised once there (one pass of square roots; outliers
/// dropped by downdating N), see `solveLinearised`.
///
/// Consistency (issue #42 item 4). An innovation beyond the gate (|ν| > `gateSigmas`·√(P + R)) is
/// ignored, so an estimate that went wrong — set by an early epoch long from NLOS ranges the
/// outlier test could not drop, while P was still large, then P shrunk by a few epochs — rejected
/// every epoch that could correct it, and P grows back by q_b·Δt only (1e-5 m²/s: the 4σ gate of
/// ~0.16 m reaches 0.5 m after about 20 minutes): the tag's fixes then sat ~1 m from the truth for
/// the whole run. So the estimator judges itself: every `consistencyEpochs` (W) usable epochs, the
/// sum of their normalised innovations squared νₖ²/(Pₖ + Rₖ), each capped at `gateSigmas`² (one
/// NLOS epoch weighs no more than the gate), is held against `consistencyBound` (half the window
/// beyond the gate). Above it the estimate disagrees with the ranges: the estimator restarts — P back to
/// the prior, so that the epoch at hand (K ≈ 1) sets b̂ — and its estimate is no longer applied.
/// The caller applies `correctionMeters`: b̂ once trusted — √P ≤ `trustedSigmaMeters` (b observable
/// from the epochs so far) and at least `trustEpochs` epochs since the (re)start within their share
/// of the bound — and 0 (the raw ranges, as without the estimator) before.
struct TagRangeOffsetEstimator: Sendable {
    /// The settings.
    var configuration: TagRangeOffsetConfiguration { shared.value }
    /// The settings, held by reference so that the estimators of many tags share one copy.
    private let shared: TagRangeOffsetConfiguration.Shared
    /// The current offset estimate b̂, metres (applied once trusted: `correctionMeters`).
    private(set) var offsetMeters: Double = 0
    /// Variance P of b̂, m².
    private(set) var varianceSquareMeters: Double
    /// The time of the last update; NaN before the first (a time is finite: no optional's extra word).
    private var lastTimeSeconds = Double.nan
    /// Epochs that updated the estimate, and restarts (windows found inconsistent). 32 bits each:
    /// the estimator stays 64 bytes (2³¹ epochs at 4 Hz are 17 years).
    private var updateCount: Int32 = 0
    private var restartCount: Int32 = 0
    private(set) var lastPosition: Point2?
    /// Usable epochs in the current consistency window, and the sum of their capped νₖ²/(Pₖ + Rₖ).
    private var windowEpochs: UInt8 = 0
    /// True once the estimate is applied (`correctionMeters`), until a window finds it inconsistent.
    private(set) var isTrusted = false
    /// Ranges of round-robin epochs since the last cycle fed (`updatedCorrectionMeters(cycleOf:...)`;
    /// saturating). In the padding before `windowSum`: the estimator stays 64 bytes.
    var cycleRanges: UInt8 = 0
    private var windowSum: Float = 0

    /// Epochs that updated the estimate.
    var updates: Int { Int(updateCount) }
    /// Times a window found the estimate inconsistent with the ranges and the estimator restarted.
    var restarts: Int { Int(restartCount) }
    /// The offset the caller takes out of the tag's ranges, metres: b̂ when trusted, else 0.
    var correctionMeters: Double { isTrusted ? offsetMeters : 0 }

    /// An estimator at b̂ = 0 with variance P = `initialSigmaMeters`².
    init(configuration: TagRangeOffsetConfiguration = .standard) {
        self.init(shared: TagRangeOffsetConfiguration.Shared(configuration))
    }

    /// An estimator on settings shared with other estimators (an engine keeps one per floor).
    init(shared: TagRangeOffsetConfiguration.Shared) {
        self.shared = shared
        let configuration = shared.value
        varianceSquareMeters = configuration.initialSigmaMeters * configuration.initialSigmaMeters
    }

    /// Feeds one epoch: `rangesMeters[i]` to `locators[i]` with locator biases and `lessOffsetMeters`
    /// (nil: the current estimate b̂) already removed, tag at height `tagHeightMeters`, at `timeSeconds`.
    ///
    /// Outliers (NLOS ranges are long) are taken out one at a time: while the largest residual
    /// exceeds `rejectionSigmas`·σ and more than `minimumRanges` ranges remain, it is dropped and the
    /// epoch solved again. One that remains with no range to spare makes the epoch count with R scaled
    /// by its variance factor, up to `softRejectionSigmas` (`softEpochVarianceFactor`), and beyond that
    /// not at all. An epoch whose normalised innovation |ν|/√(P + R) exceeds
    /// `gateSigmas` is ignored (but counted by the consistency window). Epochs with too few ranges,
    /// a singular geometry or a non-finite or implausible solution leave the estimate unchanged.
    /// `seed` (e.g. the tag's tracked position) linearises the epoch once (`solveLinearised`: one
    /// Gauss–Newton step, error O(d²/ρ) for a seed d away — ≤ ~1 mm from a tracked seed ≤ 5 cm
    /// away, a few mm at the 15 cm gate); a seed whose step reaches `seededStepToleranceMeters` falls back to the iterative
    /// solve from it. Without one the solve iterates from the last epoch's solution (or the
    /// locators' centroid).
    mutating func update(locators: UnsafeBufferPointer<Point3>, rangesMeters: UnsafeBufferPointer<Double>,
                         tagHeightMeters h: Double, timeSeconds: Double, seed start: Point2? = nil,
                         lessOffsetMeters applied: Double? = nil) {
        _ = feed(locators: locators, rangesMeters: rangesMeters, tagHeightMeters: h, timeSeconds: timeSeconds, seed: start,
                 applied: applied ?? offsetMeters)
    }

    /// `update` on ranges less `lessOffsetMeters` (the engine's current correction), returning the
    /// correction afterwards (`correctionMeters`, metres): the engine's per-row correction, taken
    /// without copying the estimator out of its array (reading a property through the array's
    /// optional element afterwards copied it).
    /// The spans are read in place.
    mutating func updatedCorrectionMeters(locators: Span<Point3>, rangesMeters: Span<Double>,
                                                  tagHeightMeters h: Double, timeSeconds: Double, seed start: Point2?,
                                                  lessOffsetMeters applied: Double) -> Double {
        var epoch: EpochSolution? = nil
        return updatedCorrectionMeters(locators: locators, rangesMeters: rangesMeters, tagHeightMeters: h,
                                       timeSeconds: timeSeconds, seed: start, lessOffsetMeters: applied, epoch: &epoch)
    }

    /// `updatedCorrectionMeters`, also handing back the epoch's (x, y, b) solution (nil when the epoch
    /// was not usable) — what the per-locator bias estimator learns from (`TagLocatorBiasEstimator`).
    mutating func updatedCorrectionMeters(locators: Span<Point3>, rangesMeters: Span<Double>,
                                                  tagHeightMeters h: Double, timeSeconds: Double, seed start: Point2?,
                                                  lessOffsetMeters applied: Double, epoch: inout EpochSolution?) -> Double {
        epoch = locators.withUnsafeBufferPointer { locators in
            rangesMeters.withUnsafeBufferPointer { rangesMeters in
                feed(locators: locators, rangesMeters: rangesMeters, tagHeightMeters: h, timeSeconds: timeSeconds, seed: start,
                     applied: applied)
            }
        }
        return correctionMeters
    }

    /// One epoch's (x, y, b) solution after outlier rejection: position (m), b on the ranges as given
    /// (metres, relative to the offset already taken out), bit k set for a range dropped as an outlier.
    struct EpochSolution: Sendable {
        var position: Point2
        var offsetMeters: Double
        var droppedMask: UInt64
    }

    /// The body of `update`: `applied` is the offset already taken out of the ranges (metres).
    /// Returns the epoch's solution (nil: not usable).
    @discardableResult
    private mutating func feed(locators: UnsafeBufferPointer<Point3>, rangesMeters: UnsafeBufferPointer<Double>,
                               tagHeightMeters h: Double, timeSeconds: Double, seed start: Point2?, applied: Double) -> EpochSolution? {
        let c = configuration
        guard let epoch = Self.solveEpoch(locators: locators, rangesMeters: rangesMeters, tagHeightMeters: h,
                                          seed: start, lastPosition: lastPosition, configuration: c) else { return nil }
        let s = epoch.solution
        // The tag's offset this epoch measures, and the innovation against the estimate (metres).
        let measured = applied + s.offsetMeters
        guard abs(measured) <= c.maximumOffsetMeters else { return nil }
        // An epoch with an outlier it could not drop teaches b (down-weighted) but not the per-locator
        // biases, which read each range's residual.
        let solved = epoch.isSoft ? nil : EpochSolution(position: s.position, offsetMeters: s.offsetMeters, droppedMask: epoch.droppedMask)
        let innovation = measured - offsetMeters
        let r = c.rangeSigmaMeters * c.rangeSigmaMeters * s.offsetCofactor
        var p = varianceSquareMeters
        if !lastTimeSeconds.isNaN, timeSeconds > lastTimeSeconds { p += c.driftDensity * (timeSeconds - lastTimeSeconds) }
        if judge(normalisedInnovationSquared: innovation * innovation / (p + r), variance: p, configuration: c) {
            // Restarted: the prior's P, so that this epoch (K ≈ 1) sets the estimate afresh.
            p = c.initialSigmaMeters * c.initialSigmaMeters
        }
        guard abs(innovation) <= c.gateSigmas * (p + r).squareRoot() else { return solved }
        lastTimeSeconds = timeSeconds
        lastPosition = s.position
        let gain = p / (p + r)
        offsetMeters += gain * innovation
        varianceSquareMeters = (1 - gain) * p
        updateCount &+= 1
        return solved
    }

    /// Adds one usable epoch's ν²/(P + R) (capped at `gateSigmas`²) to the consistency window; at
    /// the window's end judges it (`variance`: P before this epoch, m²). Returns true when the window
    /// was inconsistent and the estimator restarted (untrusted; the caller resets P).
    private mutating func judge(normalisedInnovationSquared nis: Double, variance p: Double,
                                configuration c: TagRangeOffsetConfiguration) -> Bool {
        windowSum += Float(min(nis, c.gateSigmas * c.gateSigmas))
        windowEpochs &+= 1
        let m = Int(windowEpochs)
        if !isTrusted, m >= c.trustEpochs, p <= c.trustedSigmaMeters * c.trustedSigmaMeters,
           Double(windowSum) * Double(c.consistencyEpochs) <= c.consistencyBound * Double(m) {
            isTrusted = true
        }
        guard m >= c.consistencyEpochs else { return false }
        let consistent = Double(windowSum) <= c.consistencyBound
        windowSum = 0
        windowEpochs = 0
        if consistent { return false }
        isTrusted = false
        restartCount &+= 1
        lastTimeSeconds = .nan
        return true
    }

    /// One epoch's solution after outlier rejection, with how it was reached (for `update` and tests).
    struct Epoch {
        /// The (x, y, b) solution on the ranges kept.
        var solution: Solution
        /// The worst range (largest |residual|) of the first solve, on all ranges, and its |residual| (m).
        var firstWorstIndex: Int
        var firstWorstResidualMeters: Double
        /// Bit i set: range i was dropped as an outlier.
        var droppedMask: UInt64
        /// Linearisations made before the solution (`solveLinearised` passes: 0 unseeded, 1 or 2 seeded).
        var linearisations: Int
        /// True when a linearisation (`solveLinearised`) gave the solution; false: iterative Gauss–Newton.
        var linearised: Bool
        /// True when the worst residual stayed beyond `rejectionSigmas` with no range to spare: the
        /// solution's cofactor carries the variance factor (`softEpochVarianceFactor`).
        var isSoft = false
    }

    /// A seeded epoch is linearised at most this often (the seed, then the point one step reached)
    /// before it falls back to iterating.
    static let maximumLinearisations = 2

    /// Solves one epoch with outlier rejection. Seeded (finite `start`): one linearisation at the
    /// seed (`solveLinearised`); when its position step reaches `seededStepToleranceMeters` (the seed
    /// was far) once more at the point that step reached — Gauss–Newton converges quadratically, so
    /// the second step is usually millimetres and the O(d²/ρ) bound holds for the step accepted —
    /// and when still far, the iterative path from the last point (stopping after a step under
    /// `seededStepToleranceMeters`). Unseeded: Gauss–Newton from `lastPosition` (or the locators'
    /// centroid) to a 0.1 mm step. Nil when the epoch is not usable.
    static func solveEpoch(locators: UnsafeBufferPointer<Point3>, rangesMeters: UnsafeBufferPointer<Double>,
                           tagHeightMeters h: Double, seed start: Point2?, lastPosition: Point2?,
                           configuration c: TagRangeOffsetConfiguration) -> Epoch? {
        let n = min(locators.count, rangesMeters.count, 64)
        guard n >= c.rangesNeeded else { return nil }
        var seed: Point2
        // Gauss–Newton's error after a step of length d is O(d²/ρ): from a tracked seed (centimetres
        // away) one step of a few cm leaves about a millimetre, far below an epoch's σ of the offset.
        var stepTolerance = 1e-4
        var startOffset = 0.0, linearisations = 0
        if let p = start, p.x.isFinite, p.y.isFinite {
            seed = p
            while linearisations < maximumLinearisations {
                linearisations += 1
                switch solveLinearised(locators: locators, rangesMeters: rangesMeters, count: n, tagHeightMeters: h,
                                       seed: seed, configuration: c) {
                case .solved(var epoch):
                    epoch.linearisations = linearisations
                    return epoch
                case .unusable: return nil
                case .far(let position, let offset): seed = position; startOffset = offset
                }
            }
            stepTolerance = c.seededStepToleranceMeters
        } else if let p = lastPosition {
            seed = p
        } else {
            var x = 0.0, y = 0.0
            for i in 0..<n { x += locators[i].x; y += locators[i].y }
            seed = Point2(x: x / Double(n), y: y / Double(n))
        }
        var used: UInt64 = n == 64 ? ~0 : (UInt64(1) << UInt64(n)) - 1
        var usedCount = n
        var dropped: UInt64 = 0
        var first: Solution? = nil
        while true {
            guard let s = solve(locators: locators, rangesMeters: rangesMeters, used: used, count: n, tagHeightMeters: h,
                                seed: seed, offsetMeters: startOffset, stepToleranceMeters: stepTolerance) else { return nil }
            startOffset = 0
            let head = first ?? s
            first = head
            seed = s.position
            guard usedCount > c.rangesNeeded, s.worstResidualMeters > c.rejectionSigmas * c.rangeSigmaMeters else {
                // An outlier found with no range to spare (`rangesNeeded` left): which range it is cannot be
                // told; the epoch's offset is used, down-weighted, only while the outlier is moderate.
                var s = s, soft = false
                if s.worstResidualMeters > c.rejectionSigmas * c.rangeSigmaMeters {
                    guard let factor = c.softEpochVarianceFactor(worstResidual: s.worstResidualMeters, residualSquares: s.residualSquares, ranges: usedCount) else { return nil }
                    s.offsetCofactor *= factor
                    soft = true
                }
                return Epoch(solution: s, firstWorstIndex: head.worstIndex, firstWorstResidualMeters: head.worstResidualMeters,
                             droppedMask: dropped, linearisations: linearisations, linearised: false, isSoft: soft)
            }
            let bit = UInt64(1) << UInt64(s.worstIndex)
            used &= ~bit
            dropped |= bit
            usedCount -= 1
        }
    }

    /// One epoch's planar (x, y, b) least-squares solution.
    struct Solution {
        var position: Point2
        var offsetMeters: Double
        /// (N⁻¹)_bb: the variance of b̂ per unit range variance.
        var offsetCofactor: Double
        var worstIndex: Int
        var worstResidualMeters: Double
        /// Σvᵢ² over the ranges used, m².
        var residualSquares: Double
    }

    /// Gauss–Newton on (x, y, b) from (`seed`, `offsetMeters`) over the ranges in `used` (bit i:
    /// range i), ≤ 10 iterations, N·Δ = Hᵀv solved by the adjugate of the 3×3 N. Nil for a singular
    /// or non-finite result.
    ///
    /// The ranges go through in pairs (`rangePair`): the square roots and divisions of two ranges
    /// in one SIMD instruction each, lane by lane the same IEEE operations as one at a time; the
    /// sums still take the ranges in index order, so the result is bit for bit the scalar one.
    static func solve(locators: UnsafeBufferPointer<Point3>, rangesMeters: UnsafeBufferPointer<Double>,
                      used: UInt64, count n: Int, tagHeightMeters h: Double, seed: Point2, offsetMeters b0: Double = 0,
                      stepToleranceMeters: Double) -> Solution? {
        var x = seed.x, y = seed.y, b = b0
        var cofactor = 0.0
        for _ in 0..<10 {
            var normal = NormalEquations()
            let usable = forEachRangePair(used: used, locators: locators, rangesMeters: rangesMeters, x: x, y: y, h: h, b: b) {
                _, _, pair, both in
                guard pair.rho[0] > 1e-9, pair.rho[1] > 1e-9 else { return false }
                normal.add(hx: pair.hx[0], hy: pair.hy[0], v: pair.v[0])
                if both { normal.add(hx: pair.hx[1], hy: pair.hy[1], v: pair.v[1]) }
                return true
            }
            guard usable, let step = normal.solved() else { return nil }
            cofactor = step.cofactor
            x += step.d0; y += step.d1; b += step.d2
            if abs(step.d0) + abs(step.d1) + abs(step.d2) < stepToleranceMeters { break }
        }
        guard x.isFinite, y.isFinite, b.isFinite, cofactor.isFinite, cofactor > 0 else { return nil }
        var worst = 0, worstResidual = -1.0, squares = 0.0
        _ = forEachRangePair(used: used, locators: locators, rangesMeters: rangesMeters, x: x, y: y, h: h, b: b) {
            i, j, pair, both in
            let v0 = abs(pair.v[0])
            squares += v0 * v0
            if v0 > worstResidual { worstResidual = v0; worst = i }
            if both {
                let v1 = abs(pair.v[1])
                squares += v1 * v1
                if v1 > worstResidual { worstResidual = v1; worst = j }
            }
            return true
        }
        return Solution(position: Point2(x: x, y: y), offsetMeters: b, offsetCofactor: cofactor, worstIndex: worst,
                        worstResidualMeters: worstResidual, residualSquares: squares)
    }

    /// One range pair of `rangePair`: distances, direction cosines and residuals of lanes 0 and 1.
    typealias RangePair = (rho: SIMD2<Double>, hx: SIMD2<Double>, hy: SIMD2<Double>, v: SIMD2<Double>)

    /// Walks the ranges in `used` (bit i: range i) in index order, two at a time through `rangePair`
    /// at (x, y, h) with offset b: `body(i, j, pair, both)` gets range i in lane 0 and, when `both`,
    /// range j in lane 1 (a lone last range is paired with itself and `both` is false). Stops and
    /// returns false as soon as `body` does; true when every pair went through.
    @inline(__always)
    static func forEachRangePair(used: UInt64, locators: UnsafeBufferPointer<Point3>, rangesMeters: UnsafeBufferPointer<Double>,
                                 x: Double, y: Double, h: Double, b: Double,
                                 _ body: (_ i: Int, _ j: Int, _ pair: RangePair, _ both: Bool) -> Bool) -> Bool {
        var rest = used
        while rest != 0 {
            let i = rest.trailingZeroBitCount
            rest &= rest &- 1
            let both = rest != 0
            let j = both ? rest.trailingZeroBitCount : i
            if both { rest &= rest &- 1 }
            guard body(i, j, rangePair(i, j, locators: locators, rangesMeters: rangesMeters, x: x, y: y, h: h, b: b), both) else {
                return false
            }
        }
        return true
    }

    /// The normal equations N·Δ = g of one epoch's planar (x, y, b) solve: N = Σ hᵢhᵢᵀ, g = Σ hᵢvᵢ with
    /// rows hᵢ = (∂ρᵢ/∂x, ∂ρᵢ/∂y, 1) and residuals vᵢ (m), summed range by range in index order.
    struct NormalEquations {
        var n00 = 0.0, n01 = 0.0, n02 = 0.0, n11 = 0.0, n12 = 0.0, n22 = 0.0
        var g0 = 0.0, g1 = 0.0, g2 = 0.0

        /// Adds row h = (hx, hy, 1) with residual v.
        @inline(__always)
        mutating func add(hx: Double, hy: Double, v: Double) {
            n00 += hx * hx; n01 += hx * hy; n02 += hx; n11 += hy * hy; n12 += hy; n22 += 1
            g0 += hx * v; g1 += hy * v; g2 += v
        }

        /// Adds row h = (h0, h1, h2) to N only (the per-locator bias estimator's rows: h2 = 1, or the line
        /// of sight's z on floors solved in 3-D).
        @inline(__always)
        mutating func add(row h0: Double, _ h1: Double, _ h2: Double) {
            n00 += h0 * h0; n01 += h0 * h1; n02 += h0 * h2; n11 += h1 * h1; n12 += h1 * h2; n22 += h2 * h2
        }

        /// Takes row h = (hx, hy, 1) with residual v out again (a downdate).
        @inline(__always)
        mutating func remove(hx: Double, hy: Double, v: Double) {
            n00 -= hx * hx; n01 -= hx * hy; n02 -= hx; n11 -= hy * hy; n12 -= hy; n22 -= 1
            g0 -= hx * v; g1 -= hy * v; g2 -= v
        }

        /// Δ = N⁻¹g by the adjugate of N, and (N⁻¹)_bb (the variance of b̂ per unit range variance);
        /// nil when det N is not finite or |det N| ≤ 1e-9.
        @inline(__always)
        func solved() -> (d0: Double, d1: Double, d2: Double, cofactor: Double)? {
            let c00 = n11 * n22 - n12 * n12, c01 = n02 * n12 - n01 * n22, c02 = n01 * n12 - n02 * n11
            let det = n00 * c00 + n01 * c01 + n02 * c02
            guard abs(det) > 1e-9, abs(det) <= .greatestFiniteMagnitude else { return nil }
            let c11 = n00 * n22 - n02 * n02, c12 = n01 * n02 - n00 * n12, c22 = n00 * n11 - n01 * n01
            return ((c00 * g0 + c01 * g1 + c02 * g2) / det, (c01 * g0 + c11 * g1 + c12 * g2) / det,
                    (c02 * g0 + c12 * g1 + c22 * g2) / det, c22 / det)
        }
    }

    /// Ranges i and j (lanes 0 and 1) at (x, y, h) with offset b: distance ρ = ‖(x, y, h) − a‖ (m),
    /// direction cosines hx = (x − aₓ)/ρ, hy = (y − a_y)/ρ, and residual v = r − ρ − b (m).
    @inline(__always)
    static func rangePair(_ i: Int, _ j: Int, locators: UnsafeBufferPointer<Point3>,
                          rangesMeters: UnsafeBufferPointer<Double>, x: Double, y: Double, h: Double, b: Double) -> RangePair {
        let a = locators[i], c = locators[j]
        let dx = SIMD2(repeating: x) - SIMD2(a.x, c.x)
        let dy = SIMD2(repeating: y) - SIMD2(a.y, c.y)
        let dz = SIMD2(repeating: h) - SIMD2(a.z, c.z)
        let rho = (dx * dx + dy * dy + dz * dz).squareRoot()
        let v = SIMD2(rangesMeters[i], rangesMeters[j]) - rho - SIMD2(repeating: b)
        return (rho, dx / rho, dy / rho, v)
    }
}

extension TagRangeOffsetConfiguration {
    /// Immutable settings held by reference (memory per tracked tag).
    final class Shared: Sendable {
        let value: TagRangeOffsetConfiguration
        /// `value.rangesNeeded`, read by the engine once per epoch (to send a smaller epoch to the
        /// round-robin path without a call per epoch).
        let rangesNeeded: Int
        init(_ value: TagRangeOffsetConfiguration) {
            self.value = value
            rangesNeeded = value.rangesNeeded
        }
    }
}
