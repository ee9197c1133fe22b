// Fixed-size, allocation-free Kalman kernels for the 3-D constant-velocity model (spatial floors).
//
// State x = (px, py, pz, vx, vy, vz) in metres and m/s; covariance P is 6x6, stored as 36 doubles
// (row-major; P is symmetric). Statuses as locus_kalman.h (LOCUS_KALMAN_*); every function leaves its
// outputs untouched unless it returns LOCUS_KALMAN_OK.
#ifndef LOCUS_KALMAN3_H
#define LOCUS_KALMAN3_H

#include "locus_kalman.h"

/// A 3-D constant-velocity state: mean x and covariance P (as above), 336 bytes, caller-owned.
typedef struct {
    double x[6];
    double p[36];
} locus_kalman3_state;

/// Prediction over dt seconds with white-noise acceleration, density q_h (m^2/s^3) on each horizontal
/// axis and q_v on the vertical one: x <- F x, P <- F P F^T + Q, F = [[I3, dt I3], [0, I3]],
/// Q = blockdiag over the axes a of q_a [[dt^3/3, dt^2/2], [dt^2/2, dt]] (position a, velocity a).
int locus_kalman_cv3_predict(locus_kalman3_state *s, double dt_s, double q_h, double q_v);

/// EKF update with one range (metres) to a locator at anchor = (ax, ay, az), the tag at its own
/// height pz (the range model of locus_measurement_range.h, spatial): d = p - a, h(x) = rho = |d|,
/// H = [d/rho, 0, 0, 0], y = range - rho, S = H P H^T + variance, nu = y / sqrt(S)
/// (stats[0] = nu, stats[1] = S, stats[2] = y), the planar IMM's gate with its soft long side
/// (locus_measurement_soft_excess): |nu| > gate_short refused (LOCUS_KALMAN_GATED, state unchanged);
/// gate_long < nu <= gate_short taken with the variance raised by e = y^2 / 1.5^2 - S (its normalised
/// innovation becomes 1.5, its correction K y = P H^T 1.5^2 / y); then the Joseph-form update
/// P <- (I - K H) P (I - K H)^T + K R K^T, K = P H^T / (S + e), R = variance + e (symmetrised).
/// Since issue #42 (a hard long gate at gate_long before): with 4 locators in 3-D a refused range
/// leaves the epoch without redundancy, and unknown per-locator biases of 0.1-0.2 m put ranges
/// 2.5-4 sigma long often enough to let the track drift in height (docs/tracking.md, "Spatial floors").
/// LOCUS_KALMAN_BAD_ARGUMENT when the predicted distance is below 1e-6 m or variance is not positive.
int locus_kalman_cv3_update_range(locus_kalman3_state *s, const double *anchor, double range_m, double variance,
                                  double gate_long, double gate_short, double *stats);

/// Linear update with a height pseudo-measurement: z = height_m (metres) observed with the given
/// variance (m^2) on the position's vertical axis, H = [0, 0, 1, 0, 0, 0], y = height_m - pz, no gate;
/// the Joseph form of locus_kalman_cv3_update_range. LOCUS_KALMAN_BAD_ARGUMENT when variance is not
/// positive or an argument is not finite.
int locus_kalman_cv3_update_height(locus_kalman3_state *s, double height_m, double variance);

/// One Rauch–Tung–Striebel step backwards (smoothing): from the filtered state f at t_k, the
/// predicted state pn at t_{k+1} (f predicted over dt) and the smoothed state sn at t_{k+1}:
/// G = Pf F^T Ppn^-1 (Cholesky of Ppn), xs = xf + G (xsn - xpn), Ps = Pf + G (Psn - Ppn) G^T
/// (symmetrised), written to out.
int locus_kalman_cv3_rts_step(const locus_kalman3_state *f, const locus_kalman3_state *pn, const locus_kalman3_state *sn,
                              double dt_s, locus_kalman3_state *out);

#endif
