// Interacting multiple models (IMM) for one tag, allocation-free: four 2-D constant-velocity-family
// models — 0 standing still, 1 steady walking (q_steady), 2 manoeuvring (q_manoeuvre), 3 agile
// (q_agile, between the two: a robot or a walker that keeps turning) — in one fixed-size struct, with
// range (tightly coupled) and position (loosely coupled) updates.
//
// Storage: each model keeps x = (px, py, vx, vy) (m, m/s) and its covariance packed as the ten
// unique entries of the symmetric 4x4 P, p = (A00 A01 A11 | B00 B01 B10 B11 | C00 C01 C11) with
// A = cov(pos, pos), B[i][j] = cov(pos_i, vel_j), C = cov(vel, vel). A symmetric matrix stored once
// stays exactly symmetric through every update. The four models sit side by side in four-lane
// vectors (structure of arrays), so one vector operation predicts or updates all of them; the
// standing-still model is the constant-velocity arithmetic with dt = 0 in its lane and its own
// position noise (its velocity is pinned to zero with variance sigma_v^2 at each interaction, and a
// range update cannot move it since cov(pos, vel) = 0).
//
// Interaction (Markov mixing of the models) happens at most once per `interaction_interval_s`, at the
// first prediction past it — i.e. once per ranging round at 4 Hz —, not at every range; between
// interactions each model is predicted and updated on its own, and the measurement likelihoods of each
// model are accumulated (sum of squared normalised innovations, product of innovation variances) and
// folded into the model probabilities at the next interaction (or on demand, without changing the
// struct). A range update that is gated, given bad arguments, or whose result would not be finite or
// would lose a positive covariance diagonal (LOCUS_KALMAN_GATED, _BAD_ARGUMENT, _NOT_FINITE,
// _NOT_POSITIVE) leaves the struct untouched: the result is checked in registers before it is stored.
// After LOCUS_KALMAN_NOT_FINITE or LOCUS_KALMAN_NOT_POSITIVE from a prediction the struct is unusable
// until the next reset (the caller drops the track). locus_imm_predict_update_range checks its
// prediction once, with the update's result (or, on the paths that refuse the update, the predicted
// models themselves), and reports through *predicted whether the prediction was at fault.
#ifndef LOCUS_IMM_H
#define LOCUS_IMM_H

#include "locus_kalman.h"

/// The models (structure of arrays: entry [k][j] belongs to model j), their probabilities and the
/// pending likelihoods.
typedef struct locus_imm {
    /// x[i][j]: state component i (px, py, vx, vy) of model j.
    double x[4][4];
    /// p[k][j]: packed covariance entry k (A00 A01 A11 B00 B01 B10 B11 C00 C01 C11) of model j.
    double p[10][4];
    /// Model probabilities mu (sum 1) as of the last settlement.
    double mu[4];
    /// Pending likelihood per model since the last settlement: L = exp(-nu2 / 2) / sqrt(S product),
    /// the product of the innovation variances S kept as d_product / rho2_product (range updates:
    /// S = D / rho^2 with D = d^T A d + variance rho^2, multiplied up without a division per range;
    /// position updates contribute det S to d_product).
    double nu2[4];
    double d_product[4];
    double rho2_product[4];
    /// Time of the models (s) and of the last interaction (s).
    double t;
    double t_interaction;
    /// Measurements whose likelihoods are pending.
    int pending;
} locus_imm;

/// Fixed parameters of the models.
typedef struct locus_imm_params {
    /// Standing still: position random-walk density (m^2/s) and velocity variance (m^2/s^2).
    double still_position_density;
    double still_velocity_variance;
    /// White-noise acceleration densities of the steady, manoeuvring and agile models (m^2/s^3).
    double steady_density;
    double manoeuvre_density;
    double agile_density;
    /// Markov switching rate lambda (1/s): P(switch within dt) = 1 - exp(-lambda dt), split evenly
    /// over the three other models.
    double switch_rate;
    /// Interactions are at least this far apart (s); 0 interacts at every prediction.
    double interaction_interval_s;
} locus_imm_params;

/// All four models at (x, P) (P full 4x4, row-major, symmetric), mu = 1/4 each, time t.
void locus_imm_reset(locus_imm *imm, const double *x, const double *P, double t);

/// Predicts every model to time t (no-op for t <= imm->t). When t - t_interaction >= the interval,
/// first settles the pending likelihoods and mixes the models (IMM interaction with the transition
/// probabilities over t - t_interaction): mu_{i|j} = pi_ij mu_i / c_j, c_j = sum_i pi_ij mu_i,
/// x0_j = sum_i mu_{i|j} x_i, P0_j = sum_i mu_{i|j} (P_i + (x_i - x0_j)(x_i - x0_j)^T), mu <- c.
int locus_imm_predict(locus_imm *imm, const locus_imm_params *params, double t);

/// EKF range update of every model (anchor = (ax, ay, az), tag at height h, range and variance in m,
/// m^2): y = r - |(px, py, h) - anchor|, S = H P H^T + variance, P <- P - (P H^T)(P H^T)^T / S.
/// Gated on the manoeuvring model: LOCUS_KALMAN_GATED (nothing changed) when its nu = y / sqrt(S) >
/// gate_long or < -gate_short; the other models are updated ungated. stats (9 doubles) = (y, D, rho^2 of
/// the manoeuvring model before the update, with S = D / rho^2 and nu = y / sqrt(S); sum_j mu_j x_j of
/// the updated models with the settled mu; the manoeuvring model's (px - ax, py - ay) before the update,
/// so that its direction cosines are those over rho). Raw numbers: the caller divides only for what it
/// uses (the divider is the kernel's bottleneck).
int locus_imm_update_range(locus_imm *imm, const double *anchor, double tag_height_m, double range_m,
                           double variance, double gate_long, double gate_short, double *stats);

/// locus_imm_predict to t, then (when it succeeded: *predicted = 1) locus_imm_update_range: one call
/// per range on the hot path. Returns the prediction's status when it failed (*predicted = 0).
int locus_imm_predict_update_range(locus_imm *imm, const locus_imm_params *params, double t, const double *anchor,
                                   double tag_height_m, double range_m, double variance, double gate_long,
                                   double gate_short, double *stats, int *predicted);

/// What locus_imm_update_ranges carries between a tracking filter and the kernel: the filter's per-range
/// bookkeeping (TrackFilter.update), kept by the kernel while it applies a round's ranges.
typedef struct locus_imm_run {
    /// In and out: the track's time (s; the latest range's, never decreasing) and the time of its latest
    /// accepted range (s).
    double state_s;
    double last_update_s;
    /// In: a range more than this after last_update_s (s), or before state_s, is not applied here (the
    /// filter re-initialises first).
    double reinitialize_after_s;
    /// Out: sum_j mu_j x_j after the latest range accepted by this call (when it accepted any).
    double mean[4];
    /// In and out: the epoch's quality sums over its accepted ranges: sum of H^T H with H = (dx, dy) / rho
    /// (a00, a01, a11) and sum of y^2 (m^2), and their count.
    double a00, a01, a11;
    double residual_squares;
    int used;
    /// In and out: the gate's rejection score, less one per accepted range (not below 0).
    int rejection_score;
    /// Out: the status of the range the call stopped at when its prediction and update ran
    /// (LOCUS_KALMAN_GATED, ...; *predicted of locus_imm_predict_update_range in stop_predicted), or
    /// LOCUS_IMM_RUN_NOT_STARTED when the call stopped before it.
    int stop_status;
    int stop_predicted;
} locus_imm_run;

/// stop_status of a locus_imm_run that stopped before the range's prediction.
#define LOCUS_IMM_RUN_NOT_STARTED 99

/// A round's n ranges (times[k] s, anchors[3k..3k+2] m, ranges[k] m, in arrival order) applied one after
/// the other exactly as n calls of locus_imm_predict_update_range would apply them, with the caller's
/// per-range bookkeeping (see locus_imm_run) done here — while each range is accepted. Returns the index
/// k of the first range it did not accept (n: all accepted):
/// - stop_status LOCUS_IMM_RUN_NOT_STARTED: range k is not a usable range (negative or non-finite range,
///   non-finite time) or is due a re-initialisation (t - last_update_s > reinitialize_after_s, or
///   t < state_s); nothing of it was applied;
/// - otherwise its prediction and update ran and gave stop_status (not LOCUS_KALMAN_OK) or a failed
///   prediction (stop_predicted 0), as the per-range call would have; the caller does what follows.
/// Everything before k is applied and accounted for in run. Same bits as the per-range calls.
int locus_imm_update_ranges(locus_imm *imm, const locus_imm_params *params, int n, const double *times,
                                const double *anchors, const double *ranges, double tag_height_m, double variance,
                                double gate_long, double gate_short, locus_imm_run *run);
/// locus_imm_predict to t (checked: *predicted = 0 and its status when it failed), then the update of
/// every model with m ≥ 1 range differences sharing one arrival at the reference locator (rows: see
/// LOCUS_DIFFERENCE_ROW), the tag at height h: each raw difference is gated on its own on the
/// manoeuvring model, ν = (z − h) / √(H A Hᵀ + 2σ²) against [−gate_short, gate_long]; the n survivors
/// are whitened (W = I + c 11ᵀ, c = locus_difference_whitening(n): noise σ² I) and applied to every
/// model as n sequential scalar updates of the models' linearisation at the predicted state x₀,
/// y'_j = z'_j − h'_j(x₀) − H'_j (x − x₀) (exactly the vector EKF update), each adding its likelihood
/// N(y'_j; 0, S'_j) to the pending ones (their product is the group's joint likelihood, up to the
/// whitening's determinant, common to all models). variance = σ² (m², per arrival). stats (8) =
/// (Σ y'_j², Σ H'ᵀH' as xx, xy, yy — of the manoeuvring model, over the applied rows; then Σ_j mu_j x_j
/// with the settled mu after the update). All or nothing after the prediction: a failed whitened update
/// restores the predicted models. Returns LOCUS_KALMAN_OK (some applied), _GATED (every usable one
/// gated), _BAD_ARGUMENT (variance not positive, m < 1, or none usable), or the failed status.
int locus_imm_predict_update_differences(locus_imm *imm, const locus_imm_params *params, double t, const double *reference,
                                         int m, double *rows, double tag_height_m, double variance, double gate_long,
                                         double gate_short, double *stats, int *predicted);

/// Position update of every model with z (m) of covariance R = [[r0, r1], [r1, r2]] (m^2):
/// S = A + R, K = P H^T S^-1, P <- P - K H P. Gated on the manoeuvring model's NIS = y^T S^-1 y >
/// gate. stats (6 doubles) = (NIS, det S of the manoeuvring model, then sum_j mu_j x_j of the
/// updated models with the settled mu).
int locus_imm_update_position(locus_imm *imm, const double *z, const double *r, double gate, double *stats);

/// Folds the pending likelihoods into mu now (floored, normalised) instead of at the next interaction
/// (e.g. when a fix is taken, so that the combination and the next interaction need no exp).
void locus_imm_settle(locus_imm *imm);

/// The model probabilities with the pending likelihoods folded in (floored at 1e-9, normalised): the
/// numbers the next settlement gives. Nothing is changed. (Until the fourth model took the spare lane,
/// the result was kept there for that settlement; a per-tag field for it would cost 32 bytes a tag
/// for the offline smoother's sake, which reads μ after every range: it pays the exponentials twice.)
void locus_imm_probabilities(const locus_imm *imm, double *mu);

/// The moment-matched combination of the models under `locus_imm_probabilities`:
/// x = sum mu_j x_j, P = sum mu_j (P_j + (x_j - x)(x_j - x)^T) (full 4x4, row-major).
void locus_imm_combined(const locus_imm *imm, double *x, double *P);

/// locus_imm_combined's mean x (4) and its position block a = (P00, P01, P11) only, the same numbers
/// (the per-fix output needs no velocity covariance).
void locus_imm_combined_position(const locus_imm *imm, double *x, double *a);

#endif
