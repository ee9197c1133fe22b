internal import CLocusKernels
import LocusCore

/// The state of a 2-D constant-velocity Kalman filter: mean x = (px, py, vx, vy) (metres, m/s) and
/// covariance P (4×4, m², m²/s, m²/s², stored as 16 doubles, symmetric).
package struct KalmanState: Sendable, Hashable {
    /// Mean x = (px, py, vx, vy).
    package var x: SIMD4<Double>
    /// Covariance P, 4×4 symmetric, index 4·i + j.
    var p: SIMD16<Double>

    /// Creates a state from its mean and covariance.
    init(x: SIMD4<Double>, p: SIMD16<Double>) {
        self.x = x
        self.p = p
    }

    /// A state at (px, py) with velocity (vx, vy) and diagonal covariance
    /// diag(σp², σp², σv², σv²) (σp in metres, σv in m/s).
    init(px: Double, py: Double, vx: Double = 0, vy: Double = 0,
                 positionSigmaMeters: Double, velocitySigmaMetersPerSecond: Double) {
        x = SIMD4(px, py, vx, vy)
        var p = SIMD16<Double>(repeating: 0)
        let sp = positionSigmaMeters * positionSigmaMeters, sv = velocitySigmaMetersPerSecond * velocitySigmaMetersPerSecond
        p[0] = sp; p[5] = sp; p[10] = sv; p[15] = sv
        self.p = p
    }

    /// P[i, j].
    subscript(row: Int, column: Int) -> Double { p[4 * row + column] }

    /// True when every entry of x and P is finite.
    var isFinite: Bool {
        var ok = true
        for i in 0..<4 { ok = ok && x[i].isFinite }
        for i in 0..<16 { ok = ok && p[i].isFinite }
        return ok
    }
}

/// What a kernel call did.
enum KalmanOutcome: Sendable, Hashable {
    /// The state was updated (or predicted).
    case accepted
    /// The innovation failed the gate; the state is unchanged.
    case gated
    /// An argument was out of domain (negative Δt, non-positive variance, tag on the locator).
    case invalidArgument
    /// The result would not have been finite; the state is unchanged.
    case notFinite
    /// A covariance lost positive definiteness; the state is unchanged.
    case notPositiveDefinite

    init(status: Int32) {
        switch status {
        case LOCUS_KALMAN_OK: self = .accepted
        case LOCUS_KALMAN_GATED: self = .gated
        case LOCUS_KALMAN_BAD_ARGUMENT: self = .invalidArgument
        case LOCUS_KALMAN_NOT_FINITE: self = .notFinite
        default: self = .notPositiveDefinite
        }
    }
}

/// Innovation statistics of a measurement update.
struct KalmanInnovation: Sendable, Hashable {
    /// Position update: squared Mahalanobis distance NIS = yᵀS⁻¹y; range update: ν = y/√S (signed).
    var statistic: Double = 0
    /// Position update: det S (m⁴); range update: S (m²).
    var innovationVariance: Double = 0
    /// Range update: the innovation y = r − h(x), metres (0 for position updates).
    var residualMeters: Double = 0

    /// A zero innovation record.
    init() {}
}

/// Swift front of the C kernels in `locus_kalman.h` (constant-velocity model, allocation-free).
enum KalmanKernels {
    /// Prediction over Δt seconds: x ← F x, P ← F P Fᵀ + Q, F = [[I, Δt·I], [0, I]],
    /// Q = q·[[Δt³/3·I, Δt²/2·I], [Δt²/2·I, Δt·I]] with q the acceleration noise density, m²/s³.
    @inline(__always)
    static func predict(_ state: inout KalmanState, overSeconds dt: Double,
                                processNoiseDensity q: Double) -> KalmanOutcome {
        let status = state.withKernelPointers { x, p in locus_kalman_cv_predict(x, p, dt, q) }
        return KalmanOutcome(status: status)
    }

    /// Prediction of the standing-still model over Δt: x ← (px, py, 0, 0),
    /// P ← [[P_pp + q_pos·Δt·I, 0], [0, σ_v²·I]] (q_pos in m²/s, σ_v² in m²/s²).
    @inline(__always)
    static func predictStill(_ state: inout KalmanState, overSeconds dt: Double,
                                     positionNoiseDensity qPosition: Double,
                                     velocityVarianceSquareMetersPerSecondSquared v: Double) -> KalmanOutcome {
        let status = state.withKernelPointers { x, p in locus_kalman_still_predict(x, p, dt, qPosition, v) }
        return KalmanOutcome(status: status)
    }

    /// Update with a position z = (zx, zy) metres, covariance R = [[rxx, rxy], [rxy, ryy]] m²:
    /// y = z − Hx, S = HPHᵀ + R, K = PHᵀS⁻¹, x ← x + Ky, P ← (I−KH)P(I−KH)ᵀ + KRKᵀ (Joseph).
    /// Gated (state unchanged) when NIS = yᵀS⁻¹y > `gate`.
    @inline(__always)
    static func updatePosition(_ state: inout KalmanState, zx: Double, zy: Double,
                                       rxx: Double, rxy: Double, ryy: Double, gate: Double,
                                       innovation: inout KalmanInnovation) -> KalmanOutcome {
        var zr = SIMD8<Double>(zx, zy, rxx, rxy, ryy, 0, 0, 0)
        var stats = SIMD4<Double>(repeating: 0)
        let status = state.withKernelPointers { x, p in
            withDoubles(&zr) { z in withDoubles(&stats) { s in locus_kalman_cv_update_position(x, p, z, z + 2, gate, s) } }
        }
        innovation.statistic = stats[0]
        innovation.innovationVariance = stats[1]
        innovation.residualMeters = 0
        return KalmanOutcome(status: status)
    }

    /// EKF update with one range r (metres, bias removed) of variance σ² (m²) to a locator at `anchor`,
    /// the tag at height h: h(x) = √((px−ax)² + (py−ay)² + (h−az)²), y = r − h(x), S = HPHᵀ + σ²,
    /// Joseph-form update. Gated (state unchanged) when ν = y/√S > `gateLong` or ν < −`gateShort`.
    @inline(__always)
    static func updateRange(_ state: inout KalmanState, anchor: Point3, tagHeightMeters: Double,
                                    rangeMeters: Double, varianceSquareMeters: Double,
                                    gateLong: Double, gateShort: Double,
                                    innovation: inout KalmanInnovation) -> KalmanOutcome {
        var a = SIMD4<Double>(anchor.x, anchor.y, anchor.z, 0)
        var stats = SIMD4<Double>(repeating: 0)
        let status = state.withKernelPointers { x, p in
            withDoubles(&a) { anchorPointer in
                withDoubles(&stats) { s in
                    locus_kalman_cv_update_range(x, p, anchorPointer, tagHeightMeters, rangeMeters, varianceSquareMeters,
                                                 gateLong, gateShort, s)
                }
            }
        }
        innovation.statistic = stats[0]
        innovation.innovationVariance = stats[1]
        innovation.residualMeters = stats[2]
        return KalmanOutcome(status: status)
    }

    /// The extra variance (m²) the IMM's soft long gate gives a range with innovation y (m) of variance S
    /// (m²): `locus_measurement_soft_excess` with c² = 1, D = S — y²/ν_s² − S (ν_s = 1.5) when
    /// γ_long < ν = y/√S ≤ γ_short, 0 inside the gate, −1 beyond γ_short. The one rule, for the smoother,
    /// which weighs the ranges the causal filter accepted as that filter did.
    static func softGateExtraVariance(residualMeters y: Double, innovationVarianceSquareMeters s: Double,
                                              gateLong: Double, gateShort: Double) -> Double {
        locus_measurement_soft_excess(y, 1, s, gateLong, gateShort)
    }

    /// One Rauch–Tung–Striebel step backwards: G = P_f Fᵀ P_p⁻¹, x_s = x_f + G(x_s' − x_p'),
    /// P_s = P_f + G(P_s' − P_p')Gᵀ, where primes are the next step and F spans Δt seconds.
    @inline(__always)
    static func smoothStep(filtered: KalmanState, predictedNext: KalmanState, smoothedNext: KalmanState,
                                   overSeconds dt: Double, into smoothed: inout KalmanState) -> KalmanOutcome {
        var f = filtered, pn = predictedNext, sn = smoothedNext
        let status = f.withKernelPointers { fx, fp in
            pn.withKernelPointers { px, pp in
                sn.withKernelPointers { sx, sp in
                    smoothed.withKernelPointers { ox, op in locus_kalman_cv_rts_step(fx, fp, px, pp, sx, sp, dt, ox, op) }
                }
            }
        }
        return KalmanOutcome(status: status)
    }

    /// The whole backward Rauch–Tung–Striebel pass, in place: for k = n−2 … 0,
    ///   Gₖ = Pᶠₖ Fₖᵀ (P̂ₖ₊₁)⁻¹,  xˢₖ = xᶠₖ + Gₖ(xˢₖ₊₁ − x̂ₖ₊₁),  Pˢₖ = Pᶠₖ + Gₖ(Pˢₖ₊₁ − P̂ₖ₊₁)Gₖᵀ,
    /// with Fₖ spanning Δtₖ = `stepSeconds(k)`; where that is nil, state k + 1 starts a new segment and
    /// state k stays as filtered. `states` holds the filtered states xᶠ, Pᶠ on entry and the smoothed
    /// ones on return; `predicted[k]` is the prediction x̂ₖ, P̂ₖ of step k (`inout` only to hand the
    /// kernel its storage: not changed). The kernel reads and writes the states where they are — no
    /// 160-byte state is copied per step (as `smoothStep` does) — and commits step k only after it has
    /// read state k, so the result is `smoothStep`'s. O(n).
    /// - Returns: nil, or the k of the first step that failed (its state is left as it was).
    static func smoothBackward(_ states: inout [KalmanState], predicted: inout [KalmanState],
                                       stepSeconds: (Int) -> Double?) -> Int? {
        precondition(predicted.count == states.count, "KalmanKernels.smoothBackward: one prediction per state")
        guard states.count >= 2 else { return nil }
        return states.withUnsafeMutableBufferPointer { s in
            predicted.withUnsafeMutableBufferPointer { p in
                for k in stride(from: s.count - 2, through: 0, by: -1) {
                    guard let dt = stepSeconds(k) else { continue }
                    let status = s[k].withKernelPointers { x, pk in
                        p[k + 1].withKernelPointers { px, pp in
                            s[k + 1].withKernelPointers { sx, sp in locus_kalman_cv_rts_step(x, pk, px, pp, sx, sp, dt, x, pk) }
                        }
                    }
                    if KalmanOutcome(status: status) != .accepted { return k }
                }
                return nil
            }
        }
    }
}

extension KalmanState {
    /// x and P as the C kernels take them: 4 and 16 contiguous doubles (P row-major). The only place,
    /// with `withDoubles`, where a state's storage is seen as raw memory.
    @inline(__always)
    mutating func withKernelPointers<R>(_ body: (UnsafeMutablePointer<Double>, UnsafeMutablePointer<Double>) -> R) -> R {
        withDoubles(&x) { xp in withDoubles(&p) { pp in body(xp, pp) } }
    }
}

/// A vector of doubles as a C kernel takes it: a pointer to its `scalarCount` contiguous elements.
@inline(__always)
func withDoubles<V: SIMD, R>(_ vector: inout V, _ body: (UnsafeMutablePointer<Double>) -> R) -> R where V.Scalar == Double {
    withUnsafeMutablePointer(to: &vector) { $0.withMemoryRebound(to: Double.self, capacity: V.scalarCount, body) }
}
