internal import CLocusKernels
import LocusCore

/// Fixed parameters of `InteractingModels` (see `locus_imm.h`), immutable and shared by reference:
/// an engine builds them once and every tag's filter uses them. The kernel's copy lives at an
/// address of its own (allocated once, freed with the object), which the per-range calls hand to the
/// kernel instead of copying the 48-byte struct to the stack for every range, twice. The address
/// never leaves this module.
final class InteractingModelsParameters: Sendable {
    /// Standing-still model: position random-walk density, m²/s.
    let stillPositionNoiseDensity: Double
    /// Standing-still model: velocity variance, m²/s².
    let stillVelocityVarianceSquareMetersPerSecondSquared: Double
    /// White-noise acceleration density of the steady model, m²/s³.
    let steadyProcessNoiseDensity: Double
    /// White-noise acceleration density of the manoeuvring model, m²/s³.
    let manoeuvreProcessNoiseDensity: Double
    /// White-noise acceleration density of the agile model (between steady and manoeuvring), m²/s³.
    let agileProcessNoiseDensity: Double
    /// Markov switching rate λ: P(switch within Δt) = 1 − e^(−λΔt), split evenly between the others, 1/s.
    let modeSwitchesPerSecond: Double
    /// The models interact (mix) at most once per this many seconds, at the first prediction past it.
    let interactionIntervalSeconds: Double
    /// The numbers as the kernel takes them (immutable after `init`).
    private nonisolated(unsafe) let kernel: UnsafeMutablePointer<locus_imm_params>

    /// Creates the parameters.
    init(stillPositionNoiseDensity: Double, stillVelocityVarianceSquareMetersPerSecondSquared: Double,
                 steadyProcessNoiseDensity: Double, manoeuvreProcessNoiseDensity: Double, agileProcessNoiseDensity: Double,
                 modeSwitchesPerSecond: Double, interactionIntervalSeconds: Double) {
        self.stillPositionNoiseDensity = stillPositionNoiseDensity
        self.stillVelocityVarianceSquareMetersPerSecondSquared = stillVelocityVarianceSquareMetersPerSecondSquared
        self.steadyProcessNoiseDensity = steadyProcessNoiseDensity
        self.manoeuvreProcessNoiseDensity = manoeuvreProcessNoiseDensity
        self.agileProcessNoiseDensity = agileProcessNoiseDensity
        self.modeSwitchesPerSecond = modeSwitchesPerSecond
        self.interactionIntervalSeconds = interactionIntervalSeconds
        kernel = .allocate(capacity: 1)
        kernel.initialize(to: locus_imm_params(
            still_position_density: stillPositionNoiseDensity,
            still_velocity_variance: stillVelocityVarianceSquareMetersPerSecondSquared,
            steady_density: steadyProcessNoiseDensity, manoeuvre_density: manoeuvreProcessNoiseDensity,
            agile_density: agileProcessNoiseDensity, switch_rate: modeSwitchesPerSecond, interaction_interval_s: interactionIntervalSeconds))
    }

    deinit { kernel.deallocate() }

    /// The kernel's parameters, for the calls in this file.
    fileprivate var pointer: UnsafePointer<locus_imm_params> { UnsafePointer(kernel) }
}

/// Interacting multiple models for one tag — standing still, steady walking, manoeuvring, agile — in
/// one fixed-size value (C kernel `locus_imm.h`; 600 bytes, no allocation).
///
/// Each model is a 2-D constant-velocity-family Kalman filter with x = (px, py, vx, vy) and a packed
/// symmetric covariance. The models interact (IMM mixing: μ_{i|j} = π_ij μ_i / c_j,
/// x₀ⱼ = Σ_i μ_{i|j} xᵢ, P₀ⱼ = Σ_i μ_{i|j}(Pᵢ + (xᵢ − x₀ⱼ)(xᵢ − x₀ⱼ)ᵀ), μ ← c) at most once per
/// `interactionIntervalSeconds` — once per ranging round —, in between each model is predicted and
/// updated on its own and its measurement likelihoods Π N(yₖ; 0, Sₖ) are accumulated, to be folded into
/// μ at the next interaction. Updates use P ← P − (PHᵀ)S⁻¹(PHᵀ)ᵀ on the ten unique entries, so P stays
/// exactly symmetric; a result that is not finite or loses its positive diagonal is not committed.
struct InteractingModels: Sendable {
    private var imm = locus_imm()

    /// Empty models (call `reset` before use).
    init() {}

    /// Every model at `state`, μ = (⅓, ⅓, ⅓), at time t (seconds).
    mutating func reset(to state: KalmanState, atSeconds t: Double) {
        var s = state
        s.withKernelPointers { x, p in locus_imm_reset(&imm, x, p, t) }
    }

    /// The models' time, seconds.
    var timeSeconds: Double { imm.t }

    /// Predicts every model to t (interaction first when due); no-op for t ≤ `timeSeconds`.
    mutating func predict(toSeconds t: Double, parameters: InteractingModelsParameters) -> KalmanOutcome {
        KalmanOutcome(status: locus_imm_predict(&imm, parameters.pointer, t))
    }

    /// Range update of every model, gated on the manoeuvring one (ν = y/√S > `gateLong` or
    /// < −`gateShort` → `.gated`, nothing changed). `innovation` is the manoeuvring model's; the
    /// returned mean is Σ μⱼ xⱼ of the updated models with μ as of the last interaction (meaningful
    /// when `.accepted`).
    mutating func updateRange(anchor: Point3, tagHeightMeters h: Double, rangeMeters r: Double,
                                      varianceSquareMeters v: Double, gateLong: Double, gateShort: Double,
                                      innovation: inout KalmanInnovation) -> (KalmanOutcome, SIMD4<Double>) {
        let (status, stats) = Self.rangeKernel(anchor: anchor) { a, out in
            locus_imm_update_range(&imm, a, h, r, v, gateLong, gateShort, out)
        }
        // S = D/ρ², ν = y/√S: the kernel hands over the raw numbers (see `RangeStatistics`).
        let s = stats.1 / stats.2
        innovation.statistic = stats.0 / s.squareRoot()
        innovation.innovationVariance = s
        innovation.residualMeters = stats.0
        return (KalmanOutcome(status: status), SIMD4(stats.3, stats.4, stats.5, stats.6))
    }

    /// `predict(toSeconds:parameters:)` then, when it succeeded, the range update of
    /// `updateRange`, in one call (the per-range path). `predicted` is false when the prediction
    /// failed (its outcome is returned). An accepted range is counted in `epoch` with the manoeuvring
    /// model's innovation y = r − ρ and its offset (dx, dy) = (px − aₓ, py − a_y) from the anchor
    /// before the update, ρ² = dx² + dy² + dz² (`TrackEpochQuality.accept`; the kernel hands over
    /// these raw numbers, and no division is spent on them here).
    mutating func predictAndUpdateRange(toSeconds t: Double, parameters: InteractingModelsParameters, anchor: Point3,
                                                tagHeightMeters h: Double, rangeMeters r: Double, varianceSquareMeters v: Double,
                                                gateLong: Double, gateShort: Double, epoch: inout TrackEpochQuality)
        -> (outcome: KalmanOutcome, mean: SIMD4<Double>, predicted: Bool) {
        var ok: Int32 = 0
        let (status, stats) = Self.rangeKernel(anchor: anchor) { a, out in
            locus_imm_predict_update_range(&imm, parameters.pointer, t, a, h, r, v, gateLong, gateShort, out, &ok)
        }
        let outcome = KalmanOutcome(status: status)
        if ok != 0, case .accepted = outcome {
            epoch.accept(residualMeters: stats.0, dx: stats.7, dy: stats.8, rho2: stats.2)
        }
        return (outcome, SIMD4(stats.3, stats.4, stats.5, stats.6), ok != 0)
    }

    /// A filter's per-range bookkeeping carried through `updateRanges` (as `locus_imm_run`, with the
    /// epoch's quality sums, which the call keeps in the filter's `TrackEpochQuality`): its time and
    /// its latest accepted range's (s) and the gate's rejection score, kept by the kernel while it
    /// applies a round's ranges; then where and why it stopped. Plain stored values, read and written
    /// in place by the filter.
    struct RangeRun: Sendable {
        var stateSeconds: Double
        var lastUpdateSeconds: Double
        var reinitializeAfterSeconds: Double
        var rejectionScore: Int
        /// Σ μⱼ xⱼ after the latest range accepted (when the call accepted any).
        var mean = SIMD4<Double>()
        /// The range the call stopped at: nil when it was not started (the caller applies it the
        /// per-range way), else its outcome and whether its prediction succeeded.
        var stop: (outcome: KalmanOutcome, predicted: Bool)?

        /// The filter's bookkeeping before the round.
        init(stateSeconds: Double, lastUpdateSeconds: Double, reinitializeAfterSeconds: Double, rejectionScore: Int) {
            self.stateSeconds = stateSeconds
            self.lastUpdateSeconds = lastUpdateSeconds
            self.reinitializeAfterSeconds = reinitializeAfterSeconds
            self.rejectionScore = rejectionScore
        }
    }

    /// A round's ranges (`times[k]` s, `anchors[k]`, `ranges[k]` m) applied in order as one
    /// `predictAndUpdateRange` each would, with the filter's bookkeeping in `run` and `epoch`, while each is
    /// accepted (`locus_imm_update_ranges`): returns the index of the first range not accepted
    /// (`ranges.count`: all were), `run.stop` saying why. One kernel call for the round, which reads
    /// the spans in place.
    mutating func updateRanges(times: Span<Double>, anchors: Span<Point3>, ranges: Span<Double>,
                                       parameters: InteractingModelsParameters, tagHeightMeters h: Double,
                                       varianceSquareMeters v: Double, gateLong: Double, gateShort: Double,
                                       run: inout RangeRun, epoch: inout TrackEpochQuality) -> Int {
        times.withUnsafeBufferPointer { times in
            anchors.withUnsafeBufferPointer { anchors in
                ranges.withUnsafeBufferPointer { ranges in
                    updateRanges(times: times, anchors: anchors, ranges: ranges, parameters: parameters, tagHeightMeters: h,
                                 varianceSquareMeters: v, gateLong: gateLong, gateShort: gateShort, run: &run, epoch: &epoch)
                }
            }
        }
    }

    /// `updateRanges(times:anchors:ranges:parameters:tagHeightMeters:varianceSquareMeters:gateLong:gateShort:run:epoch:)`
    /// over the spans' buffers.
    @inline(__always)
    private mutating func updateRanges(times: UnsafeBufferPointer<Double>, anchors: UnsafeBufferPointer<Point3>,
                                       ranges: UnsafeBufferPointer<Double>, parameters: InteractingModelsParameters,
                                       tagHeightMeters h: Double, varianceSquareMeters v: Double, gateLong: Double,
                                       gateShort: Double, run: inout RangeRun, epoch: inout TrackEpochQuality) -> Int {
        let n = min(times.count, anchors.count, ranges.count)
        guard n > 0, let t = times.baseAddress, let a = anchors.baseAddress, let r = ranges.baseAddress else { return 0 }
        var raw = locus_imm_run(state_s: run.stateSeconds, last_update_s: run.lastUpdateSeconds,
                                reinitialize_after_s: run.reinitializeAfterSeconds, mean: (0, 0, 0, 0),
                                a00: epoch.a00, a01: epoch.a01, a11: epoch.a11, residual_squares: epoch.residualSquares,
                                used: epoch.used, rejection_score: Int32(truncatingIfNeeded: run.rejectionScore),
                                stop_status: LOCUS_IMM_RUN_NOT_STARTED, stop_predicted: 0)
        // Point3 is three packed doubles (stride 24: see README), the kernel's anchor layout.
        let stop = a.withMemoryRebound(to: Double.self, capacity: 3 * n) { xyz in
            Int(locus_imm_update_ranges(&imm, parameters.pointer, Int32(n), t, xyz, r, h, v, gateLong, gateShort, &raw))
        }
        run.stateSeconds = raw.state_s
        run.lastUpdateSeconds = raw.last_update_s
        run.rejectionScore = Int(raw.rejection_score)
        epoch.used = raw.used
        epoch.a00 = raw.a00; epoch.a01 = raw.a01; epoch.a11 = raw.a11
        epoch.residualSquares = raw.residual_squares
        run.mean = SIMD4(raw.mean.0, raw.mean.1, raw.mean.2, raw.mean.3)
        run.stop = raw.stop_status == LOCUS_IMM_RUN_NOT_STARTED ? nil : (KalmanOutcome(status: raw.stop_status), raw.stop_predicted != 0)
        return stop
    }

    /// `predict(toSeconds:parameters:)` then (when it succeeded: `predicted`) the update of every model
    /// with the first `count` rows of `rows` (`DifferenceRows`): range differences sharing one arrival at
    /// `reference`, the tag at height h (`locus_imm_predict_update_differences`). Each raw difference is
    /// gated on its own on the manoeuvring model, ν = (z − h)/√(HAHᵀ + 2σ²) outside [−`gateShort`,
    /// `gateLong`] refused; the n survivors are whitened (W = I + c11ᵀ, noise σ²I) and applied to every
    /// model as n sequential scalar updates of the linearisation at the predicted state, each adding its
    /// likelihood to the pending ones (their product is the group's joint likelihood, up to the
    /// whitening's determinant common to all models). σ² = `varianceSquareMeters` per arrival. The
    /// statistics are the manoeuvring model's; their mean is Σ μⱼ xⱼ after the update.
    mutating func predictAndUpdateDifferences(toSeconds t: Double, parameters: InteractingModelsParameters, reference: Point3,
                                                      rows: inout MutableSpan<Double>, count m: Int, tagHeightMeters h: Double,
                                                      varianceSquareMeters v: Double, gateLong: Double, gateShort: Double)
        -> (outcome: KalmanOutcome, predicted: Bool, statistics: DifferenceGroupStatistics) {
        precondition(m >= 0 && rows.count >= m * DifferenceRows.stride && DifferenceRows.matchesKernelLayout,
                     "InteractingModels.predictAndUpdateDifferences: rows too short")
        var ok: Int32 = 0
        var stats = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        var a = (reference.x, reference.y, reference.z)
        let status = rows.withUnsafeMutableBufferPointer { rowBuffer in
            withUnsafeMutablePointer(to: &a) { ap in
                withUnsafeMutablePointer(to: &stats) { sp in
                    ap.withMemoryRebound(to: Double.self, capacity: 3) { a3 in
                        sp.withMemoryRebound(to: Double.self, capacity: 8) { out in
                            locus_imm_predict_update_differences(&imm, parameters.pointer, t, a3, Int32(clamping: m), rowBuffer.baseAddress,
                                                                 h, v, gateLong, gateShort, out, &ok)
                        }
                    }
                }
            }
        }
        var out = DifferenceGroupStatistics()
        out.residualSquares = stats.0; out.xx = stats.1; out.xy = stats.2; out.yy = stats.3
        out.mean = SIMD4(stats.4, stats.5, stats.6, stats.7)
        return (KalmanOutcome(status: status), ok != 0, out)
    }

    /// The nine numbers a range-update kernel reports (`locus_imm.h`): y, D, ρ² of the manoeuvring
    /// model (S = D/ρ²), the mean Σ μⱼ xⱼ (four), and (px − aₓ, py − a_y).
    private typealias RangeStatistics = (Double, Double, Double, Double, Double, Double, Double, Double, Double)

    /// Calls a range-update kernel with the anchor as three doubles (Point3 is three packed doubles,
    /// stride 24: see README) and room for its statistics.
    @inline(__always)
    private static func rangeKernel(anchor: Point3, _ call: (UnsafePointer<Double>, UnsafeMutablePointer<Double>) -> Int32)
        -> (Int32, RangeStatistics) {
        var stats: RangeStatistics = (0, 0, 0, 0, 0, 0, 0, 0, 0)
        let status = withUnsafePointer(to: anchor) { ap in
            withUnsafeMutablePointer(to: &stats) { sp in
                ap.withMemoryRebound(to: Double.self, capacity: 3) { a in
                    sp.withMemoryRebound(to: Double.self, capacity: 9) { out in call(a, out) }
                }
            }
        }
        return (status, stats)
    }

    /// Folds the likelihoods of the measurements since the last interaction into μ now.
    mutating func settle() { locus_imm_settle(&imm) }

    /// Position update of every model with z = (zx, zy), R = [[rxx, rxy], [rxy, ryy]] (m²), gated on the
    /// manoeuvring model's NIS > `gate`. `innovation` is the manoeuvring model's (NIS, det S); the
    /// returned mean as in `updateRange`.
    mutating func updatePosition(zx: Double, zy: Double, rxx: Double, rxy: Double, ryy: Double, gate: Double,
                                         innovation: inout KalmanInnovation) -> (KalmanOutcome, SIMD4<Double>) {
        var z = (zx, zy), r = (rxx, rxy, ryy)
        var stats = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        let status = withUnsafeMutablePointer(to: &z) { zp in
            withUnsafeMutablePointer(to: &r) { rp in
                withUnsafeMutablePointer(to: &stats) { sp in
                    zp.withMemoryRebound(to: Double.self, capacity: 2) { zz in
                        rp.withMemoryRebound(to: Double.self, capacity: 3) { rr in
                            sp.withMemoryRebound(to: Double.self, capacity: 6) { s in
                                locus_imm_update_position(&imm, zz, rr, gate, s)
                            }
                        }
                    }
                }
            }
        }
        innovation.statistic = stats.0
        innovation.innovationVariance = stats.1
        innovation.residualMeters = 0
        return (KalmanOutcome(status: status), SIMD4(stats.2, stats.3, stats.4, stats.5))
    }

    /// Model probabilities μ = (still, steady, manoeuvring, agile) with the pending likelihoods folded in:
    /// μⱼ ∝ μⱼ Lⱼ, Lⱼ = exp(−ν²ⱼ/2)/√Sⱼ (floored, normalised): the numbers the next settlement gives.
    /// Reading changes nothing; it is `mutating` only so that the models are read in place (no 600-byte
    /// copy to hand the kernel a pointer).
    var probabilities: SIMD4<Double> {
        mutating get {
            var mu = SIMD4<Double>.zero
            withUnsafeMutablePointer(to: &imm) { ip in
                withUnsafeMutablePointer(to: &mu) { mp in
                    mp.withMemoryRebound(to: Double.self, capacity: 4) { m in locus_imm_probabilities(UnsafePointer(ip), m) }
                }
            }
            return mu
        }
    }

    /// The moment-matched single Gaussian x = Σ μⱼ xⱼ, P = Σ μⱼ (Pⱼ + (xⱼ − x)(xⱼ − x)ᵀ), of a copy
    /// settled (`settledCombination`; the tests' reading).
    var combined: KalmanState {
        var copy = self
        return copy.settledCombination()
    }

    /// `settle()` then the combination's mean x and position covariance block (P₀₀, P₀₁, P₁₁, m²), in
    /// place: what a fix at the models' own time needs (it must not be predicted further), without
    /// building a 160-byte state.
    mutating func settledPosition() -> (x: SIMD4<Double>, position: (xx: Double, xy: Double, yy: Double)) {
        var x = SIMD4<Double>.zero
        var a = (0.0, 0.0, 0.0)
        withUnsafeMutablePointer(to: &imm) { ip in
            locus_imm_settle(ip)
            withUnsafeMutablePointer(to: &x) { xp in
                withUnsafeMutablePointer(to: &a) { ap in
                    xp.withMemoryRebound(to: Double.self, capacity: 4) { xx in
                        ap.withMemoryRebound(to: Double.self, capacity: 3) { aa in locus_imm_combined_position(ip, xx, aa) }
                    }
                }
            }
        }
        return (x, (a.0, a.1, a.2))
    }

    /// `settle()` then `combined`, in place: the per-fix path (the models are read where they are,
    /// not copied out first — a 600-byte copy per fix through a non-mutating pointer).
    mutating func settledCombination() -> KalmanState {
        var s = KalmanState(x: .zero, p: .zero)
        withUnsafeMutablePointer(to: &imm) { ip in
            locus_imm_settle(ip)
            s.withKernelPointers { x, p in locus_imm_combined(ip, x, p) }
        }
        return s
    }
}
