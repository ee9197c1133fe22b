// Fixed-size, allocation-free Kalman kernels for the 2-D constant-velocity model.
//
// State x = (px, py, vx, vy) in metres and m/s; covariance P is 4x4, stored as 16 doubles (row- and
// column-major agree: P is symmetric). Every function returns an int status (LOCUS_KALMAN_*) and
// leaves its outputs untouched unless it returns LOCUS_KALMAN_OK.
#ifndef LOCUS_KALMAN_H
#define LOCUS_KALMAN_H

#define LOCUS_KALMAN_OK 0
#define LOCUS_KALMAN_GATED 1
#define LOCUS_KALMAN_BAD_ARGUMENT (-1)
#define LOCUS_KALMAN_NOT_FINITE (-2)
#define LOCUS_KALMAN_NOT_POSITIVE (-3)

/// Prediction over dt seconds with white-noise acceleration of density q (m^2/s^3):
/// x <- F x, P <- F P F^T + Q, F = [[I, dt I], [0, I]], Q = q [[dt^3/3 I, dt^2/2 I], [dt^2/2 I, dt I]].
int locus_kalman_cv_predict(double *x, double *P, double dt_s, double q);

/// Prediction of the "standing still" model over dt seconds: position a random walk of density q_pos
/// (m^2/s), velocity exactly zero with variance velocity_variance (m^2/s^2):
/// x <- (px, py, 0, 0), P <- [[P_pp + q_pos dt I, 0], [0, velocity_variance I]].
int locus_kalman_still_predict(double *x, double *P, double dt_s, double q_pos, double velocity_variance);

/// Update with a 2-D position z (metres) of covariance R = [[r[0], r[1]], [r[1], r[2]]] (m^2):
/// y = z - H x, S = H P H^T + R, NIS = y^T S^-1 y, K = P H^T S^-1 (stats[0] = NIS, stats[1] = det S),
/// x <- x + K y, P <- (I - K H) P (I - K H)^T + K R K^T (Joseph form, symmetrised).
/// Returns LOCUS_KALMAN_GATED, state unchanged, when NIS > gate.
int locus_kalman_cv_update_position(double *x, double *P, const double *z, const double *r, double gate,
                                    double *stats);

/// EKF update with one range (metres) to a locator at anchor = (ax, ay, az), the tag at known height
/// h (the range model of locus_measurement_range.h, then the filter's one scalar update): h(x) = sqrt((px-ax)^2 + (py-ay)^2 + (h-az)^2), H = [(px-ax)/h(x), (py-ay)/h(x), 0, 0],
/// y = range - h(x), S = H P H^T + variance, nu = y / sqrt(S) (stats[0] = nu, stats[1] = S, stats[2] = y),
/// Joseph-form update.
/// Returns LOCUS_KALMAN_GATED, state unchanged, when nu > gate_long or nu < -gate_short, and
/// LOCUS_KALMAN_BAD_ARGUMENT when the predicted distance is below 1e-6 m.
int locus_kalman_cv_update_range(double *x, double *P, const double *anchor, double tag_height_m,
                                 double range_m, double variance, double gate_long, double gate_short,
                                 double *stats);

/// A range-difference group's rows as the difference updates take them (locus_kalman_cv_update_differences,
/// locus_imm_predict_update_differences): LOCUS_DIFFERENCE_ROW doubles per difference, caller-owned
///   [0..2] in   B, the other locator's position (m; the group's reference A is passed on its own)
///   [3]    in   z = d(tag, B) − d(tag, A), metres, biases removed
///   [4]    out  1 applied, 0 gated, −1 unusable (a prediction or Jacobian not finite)
///   [5]    out  ν = y / √S of the raw difference, S = H P Hᵀ + 2σ² (the gate's statistic; NaN if unusable)
///   [6..17] scratch: h, ∂h/∂x, ∂h/∂y at the state the group is linearised at (one per IMM lane).
#define LOCUS_DIFFERENCE_ROW 18

/// Tightly coupled update with m ≥ 1 range differences sharing one arrival at the reference locator
/// (locus_measurement_difference.h), the tag at known height h: each raw difference is gated on its own,
/// ν = (z − h(x)) / √(H P Hᵀ + 2σ²) against [−gate_short, gate_long] (infinite gates: none gated), and
/// the n survivors, whose noise is Σ = σ²(I + 11ᵀ), are whitened by W = I + c 11ᵀ
/// (c = locus_difference_whitening(n)): z' = W z, h' = W h, H' = W H, noise σ² I. They are applied as
/// n sequential scalar Joseph-form updates of the linearisation at the entering state x₀,
/// y'_j = z'_j − h'_j(x₀) − H'_j (x − x₀) — together exactly the vector EKF update with (z, h, H, Σ).
/// variance = σ² (m², per arrival). stats (4) = (Σ y'_j², Σ H'ᵀH' as xx, xy, yy) over the applied
/// rows. All or nothing: (x, P) change only when every whitened update succeeded. Returns
/// LOCUS_KALMAN_OK (some applied), _GATED (every usable one gated; nothing changed),
/// _BAD_ARGUMENT (variance not positive, m < 1, or none usable), or the failed update's status.
int locus_kalman_cv_update_differences(double *x, double *P, const double *reference, int m, double *rows,
                                       double tag_height_m, double variance, double gate_long, double gate_short,
                                       double *stats);

/// One backward Rauch-Tung-Striebel step: G = Pf F^T Pp^-1 (Pp = predicted covariance of the next
/// step), xs = xf + G (xs_next - xp_next), Ps = Pf + G (Ps_next - Pp) G^T (symmetrised).
int locus_kalman_cv_rts_step(const double *xf, const double *Pf, const double *xp_next, const double *Pp_next,
                             const double *xs_next, const double *Ps_next, double dt_s, double *xs, double *Ps);

#endif
