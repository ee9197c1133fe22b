internal import CLocusKernels
import LocusCore

/// A 3-D constant-velocity Kalman state in one fixed-size value (C kernels `locus_kalman3.h`; 336
/// bytes, no allocation): mean x = (px, py, pz, vx, vy, vz) (m, m/s) and covariance P (6×6,
/// m², m²/s, m²/s², symmetric, row-major).
///
/// - prediction over Δt: x ← F x, P ← F P Fᵀ + Q, F = [[I₃, Δt·I₃], [0, I₃]],
///   Q = q_a·[[Δt³/3, Δt²/2], [Δt²/2, Δt]] per axis a (q_h on x and y, q_v on z; m²/s³);
/// - range update: the range model of `locus_measurement_range.h` with the state's own z
///   (h = ρ = ‖p − a‖, H = [(p − a)/ρ, 0]), y = r − ρ, S = H P Hᵀ + σ², gated on ν = y/√S outside
///   [−γ_short, γ_long] (`locus_measurement.h`), Joseph-form update;
/// - height update: z = h₀ observed with variance σ_h² (H = [0, 0, 1, 0, 0, 0]), the same update, no gate.
///
/// A step whose result is not finite (or loses its positive diagonal) is not committed.
struct SpatialKalmanState: Sendable {
    private var s = locus_kalman3_state()

    /// A zero state (mean 0, covariance 0): set it with `init(position:…)` before use.
    init() {}

    /// A state at `position` (m) at rest, with position covariance `c` (m²; its xz and yz terms
    /// included) and velocity variance σ_v² on each axis (m²/s²), no position–velocity correlation.
    init(position: Point3, covariance c: SymmetricMatrix3, velocityVarianceSquareMetersPerSecondSquared v: Double) {
        withUnsafeMutablePointer(to: &s.x) { $0.withMemoryRebound(to: Double.self, capacity: 6) { x in
            x[0] = position.x; x[1] = position.y; x[2] = position.z; x[3] = 0; x[4] = 0; x[5] = 0
        } }
        withUnsafeMutablePointer(to: &s.p) { $0.withMemoryRebound(to: Double.self, capacity: 36) { p in
            for i in 0..<36 { p[i] = 0 }
            p[0] = c.xx; p[1] = c.xy; p[2] = c.xz
            p[6] = c.xy; p[7] = c.yy; p[8] = c.yz
            p[12] = c.xz; p[13] = c.yz; p[14] = c.zz
            p[21] = v; p[28] = v; p[35] = v
        } }
    }

    /// The mean's position (m).
    var position: Point3 { Point3(x: s.x.0, y: s.x.1, z: s.x.2) }
    /// The mean's velocity (m/s).
    var velocity: Vector3 { Vector3(x: s.x.3, y: s.x.4, z: s.x.5) }
    /// The position block of P (m²).
    var positionCovariance: SymmetricMatrix3 {
        SymmetricMatrix3(xx: s.p.0, xy: s.p.1, xz: s.p.2, yy: s.p.7, yz: s.p.8, zz: s.p.14)
    }

    /// Prediction over Δt ≥ 0 seconds with densities q_h (horizontal) and q_v (vertical), m²/s³.
    @inline(__always)
    mutating func predict(overSeconds dt: Double, horizontalDensity qh: Double, verticalDensity qv: Double) -> KalmanOutcome {
        KalmanOutcome(status: locus_kalman_cv3_predict(&s, dt, qh, qv))
    }

    /// EKF range update with range r (m) to the locator at `anchor`, variance σ² (m²): refused when
    /// |ν| = |y|/√S > `gateShort`, taken with the variance raised so that ν = 1.5 when `gateLong` < ν ≤
    /// `gateShort` (the soft long side, `locus_kalman_cv3_update_range`); `innovation` gets ν, S and y
    /// (before any raise).
    @inline(__always)
    mutating func updateRange(anchor: Point3, rangeMeters r: Double, varianceSquareMeters v: Double,
                                      gateLong: Double, gateShort: Double, innovation: inout KalmanInnovation) -> KalmanOutcome {
        var a = (anchor.x, anchor.y, anchor.z)
        var stats = (0.0, 0.0, 0.0)
        let status = withUnsafePointer(to: &a) { ap in
            ap.withMemoryRebound(to: Double.self, capacity: 3) { ap in
                withUnsafeMutablePointer(to: &stats) { sp in
                    sp.withMemoryRebound(to: Double.self, capacity: 3) { sp in
                        locus_kalman_cv3_update_range(&s, ap, r, v, gateLong, gateShort, sp)
                    }
                }
            }
        }
        innovation.statistic = stats.0
        innovation.innovationVariance = stats.1
        innovation.residualMeters = stats.2
        return KalmanOutcome(status: status)
    }

    /// Height pseudo-measurement: z = `heightMeters` (m) with variance σ² (m²), H = [0, 0, 1, 0, 0, 0],
    /// the linear Joseph-form update, no gate.
    @inline(__always)
    mutating func updateHeight(heightMeters h: Double, varianceSquareMeters v: Double) -> KalmanOutcome {
        KalmanOutcome(status: locus_kalman_cv3_update_height(&s, h, v))
    }

    /// One Rauch–Tung–Striebel step: the smoothed state at t_k from this filtered state at t_k, its
    /// prediction `predicted` to t_{k+1} (over Δt seconds) and the smoothed state `next` there:
    /// G = P_f Fᵀ P_p⁻¹, x_s = x_f + G (x_s' − x_p), P_s = P_f + G (P_s' − P_p) Gᵀ. Nil when P_p is not
    /// positive definite or the result is not finite.
    func smoothed(predicted: SpatialKalmanState, next: SpatialKalmanState, overSeconds dt: Double) -> SpatialKalmanState? {
        var f = s, pn = predicted.s, sn = next.s
        var out = SpatialKalmanState()
        let status = locus_kalman_cv3_rts_step(&f, &pn, &sn, dt, &out.s)
        return status == LOCUS_KALMAN_OK ? out : nil
    }
}
