// Interacting multiple models for one tag: see include/locus_imm.h. No allocation, no library calls
// beyond sqrt and exp. The four models are the lanes of four-lane vectors (clang vector extensions:
// SSE2 pairs on baseline x86-64, one AVX register where the target has it; IEEE arithmetic per lane,
// so every target gives the same bits).
#include "locus_imm.h"
#include <math.h>
#include <string.h>
#include "finite.h"

// No fused multiply-add, even where the target has it: the same bits on every machine.
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF // (gcc: build with -ffp-contract=off)
#endif
// (After the pragma: the measurement models' inline functions are compiled under it too.)
#include "locus_measurement_range.h"
#include "locus_measurement_difference.h"

typedef double v4 __attribute__((vector_size(32)));

// The per-measurement functions are compiled twice, for AVX (one register per four-lane vector) and for
// baseline x86-64 (SSE2 pairs); the loader picks one. Both round every lane the same (IEEE, no
// fused multiply-add), so the results are bit-identical.
// (LOCUS_IMM_NO_CLONES builds one version only: scripts/test-c builds the file with and without AVX
// that way and checks that a seeded run gives the same bits.)
#if defined(__x86_64__) && defined(__has_attribute) && !defined(LOCUS_IMM_NO_CLONES)
#if __has_attribute(target_clones)
#define LOCUS_IMM_CLONES __attribute__((target_clones("avx", "default")))
#endif
#endif
#ifndef LOCUS_IMM_CLONES
#define LOCUS_IMM_CLONES
#endif

enum { A00, A01, A11, B00, B01, B10, B11, C00, C01, C11 };

// Memory per tracked tag (docs/benchmarks.md measures it per tag).
_Static_assert(sizeof(locus_imm) == 600, "locus_imm is 600 bytes");

/// Pending likelihoods are folded into mu before their products could underflow.
#define LOCUS_IMM_MAX_PENDING 16
#define LOCUS_IMM_MU_FLOOR 1e-9

// Loads and stores through memcpy (no alignment or aliasing assumptions; they compile to plain
// vector moves). Macros, not functions: a 32-byte vector crossing a call would change the ABI
// without AVX.
#define load(a) ({ v4 v_; memcpy(&v_, (a), sizeof v_); v_; })
#define store(a, v) do { const v4 w_ = (v); memcpy((a), &w_, sizeof w_); } while (0)
#define vsqrt(a) ({ const v4 s_ = (a); (v4){ sqrt(s_[0]), sqrt(s_[1]), sqrt(s_[2]), sqrt(s_[3]) }; })

typedef long long v4i __attribute__((vector_size(32)));

/// The lane masks (all bits set: true) of v in [low, DBL_MAX] (finite, at least low; NaN fails) and of
/// v positive and finite; lanes_all says whether the four lanes of a mask are all true. Masks, so that
/// several checks fold into one branch. Macros: a four-lane vector argument would change the ABI
/// without AVX (see accumulate).
#define lanes_in_mask(v, low) ({ const v4 v_ = (v); const v4 lo_ = { low, low, low, low }, hi_ = { DBL_MAX, DBL_MAX, DBL_MAX, DBL_MAX }; \
    (v_ >= lo_) & (v_ <= hi_); })
#define lanes_positive_mask(v) ({ const v4 v_ = (v); const v4 z_ = { 0, 0, 0, 0 }, hi_ = { DBL_MAX, DBL_MAX, DBL_MAX, DBL_MAX }; \
    (v_ > z_) & (v_ <= hi_); })
#define lanes_all(m) ({ const v4i m_ = (m); (m_[0] & m_[1]) & (m_[2] & m_[3]); })

/// Every model finite with a positive covariance diagonal. Finite: the lane sum s of every entry has
/// s - s == 0 (NaN or infinity anywhere makes it NaN; so would a sum overflowing past 1e308, which no
/// usable state comes near). Vector compares, then the four lanes' masks: no per-entry branches.
static inline int usable(const locus_imm *imm) {
    // A tree of sums (depth 4, not a chain of 13 additions): the check sits on every range's
    // critical path, and nothing after it retires before it is known.
    const v4 sx = (load(imm->x[0]) + load(imm->x[1])) + (load(imm->x[2]) + load(imm->x[3]));
    const v4 sa = (load(imm->p[0]) + load(imm->p[1])) + (load(imm->p[2]) + load(imm->p[3]));
    const v4 sb = (load(imm->p[4]) + load(imm->p[5])) + (load(imm->p[6]) + load(imm->p[7]));
    const v4 s = (sx + sa) + (sb + (load(imm->p[8]) + load(imm->p[9])));
    const v4i finite = (s - s) == 0;
    if (!lanes_all(finite)) return LOCUS_KALMAN_NOT_FINITE;
    const v4 zero = { 0, 0, 0, 0 };
    const v4i positive = (load(imm->p[A00]) > zero) & (load(imm->p[A11]) > zero) & (load(imm->p[C00]) > zero)
                       & (load(imm->p[C11]) > zero);
    if (!lanes_all(positive)) return LOCUS_KALMAN_NOT_POSITIVE;
    return LOCUS_KALMAN_OK;
}

void locus_imm_reset(locus_imm *imm, const double *x, const double *P, double t) {
    double p[10];
    p[A00] = P[0]; p[A01] = 0.5 * (P[1] + P[4]); p[A11] = P[5];
    p[B00] = 0.5 * (P[2] + P[8]); p[B01] = 0.5 * (P[3] + P[12]);
    p[B10] = 0.5 * (P[6] + P[9]); p[B11] = 0.5 * (P[7] + P[13]);
    p[C00] = P[10]; p[C01] = 0.5 * (P[11] + P[14]); p[C11] = P[15];
    for (int j = 0; j < 4; j++) {
        for (int i = 0; i < 4; i++) imm->x[i][j] = x[i];
        for (int k = 0; k < 10; k++) imm->p[k][j] = p[k];
        imm->mu[j] = 0.25;
        imm->nu2[j] = 0;
        imm->d_product[j] = 1;
        imm->rho2_product[j] = 1;
    }
    imm->t = t;
    imm->t_interaction = t;
    imm->pending = 0;
}

/// mu_j <- mu_j L_j / sum_i mu_i L_i (floored, normalised), L_j = exp(-nu2_j / 2) / sqrt(S_j) with
/// S_j = d_product_j / rho2_product_j, evaluated relative to the best model so that nothing under- or
/// overflows.
static void settled_probabilities(const locus_imm *imm, double *mu) {
    if (imm->pending == 0) {
        for (int j = 0; j < 4; j++) mu[j] = imm->mu[j];
        return;
    }
    int best = 0;
    for (int j = 1; j < 4; j++) if (imm->nu2[j] < imm->nu2[best]) best = j;
    const double nu_min = imm->nu2[best];
    const double d_ref = imm->d_product[0], rho2_ref = imm->rho2_product[0];
    double w[4], total = 0;
    for (int j = 0; j < 4; j++) {
        // exp(0) = 1 exactly for the best model: three exponentials, not four.
        const double e = j == best ? 1.0 : exp(-0.5 * (imm->nu2[j] - nu_min));
        w[j] = imm->mu[j] * e * sqrt((d_ref * imm->rho2_product[j]) / (imm->d_product[j] * rho2_ref));
        total += w[j];
    }
    if (!(total > 1e-300) || !finite(total)) {
        for (int j = 0; j < 4; j++) mu[j] = imm->mu[j];
        return;
    }
    double sum = 0;
    for (int j = 0; j < 4; j++) {
        mu[j] = w[j] / total;
        if (mu[j] < LOCUS_IMM_MU_FLOOR) mu[j] = LOCUS_IMM_MU_FLOOR;
        sum += mu[j];
    }
    for (int j = 0; j < 4; j++) mu[j] /= sum;
}

/// mu <- settled_probabilities, then no pending likelihoods. (settled_probabilities reads all of
/// imm->mu before it writes its output, so writing into imm->mu gives the numbers it gives elsewhere.)
static void settle(locus_imm *imm) {
    settled_probabilities(imm, imm->mu);
    for (int j = 0; j < 4; j++) { imm->nu2[j] = 0; imm->d_product[j] = 1; imm->rho2_product[j] = 1; }
    imm->pending = 0;
}

void locus_imm_probabilities(const locus_imm *imm, double *mu) { settled_probabilities(imm, mu); }

void locus_imm_settle(locus_imm *imm) { settle(imm); }

/// Moment-matched mixture of the models with weights w (four), one target (the combined state):
/// x = sum w_i x_i,
/// P = sum w_i (P_i + d_i d_i^T), d_i = x_i - x; packed P into p[10].
static void mix(const locus_imm *imm, const double *w, double *x, double *p) {
    for (int i = 0; i < 4; i++) x[i] = (w[0] * imm->x[i][0] + w[1] * imm->x[i][1]) + (w[2] * imm->x[i][2] + w[3] * imm->x[i][3]);
    for (int k = 0; k < 10; k++) p[k] = (w[0] * imm->p[k][0] + w[1] * imm->p[k][1]) + (w[2] * imm->p[k][2] + w[3] * imm->p[k][3]);
    for (int m = 0; m < 4; m++) {
        const double d0 = imm->x[0][m] - x[0], d1 = imm->x[1][m] - x[1];
        const double d2 = imm->x[2][m] - x[2], d3 = imm->x[3][m] - x[3];
        const double a = w[m];
        p[A00] += a * d0 * d0; p[A01] += a * d0 * d1; p[A11] += a * d1 * d1;
        p[B00] += a * d0 * d2; p[B01] += a * d0 * d3; p[B10] += a * d1 * d2; p[B11] += a * d1 * d3;
        p[C00] += a * d2 * d2; p[C01] += a * d2 * d3; p[C11] += a * d3 * d3;
    }
}

/// IMM interaction over dt: settles the pending likelihoods, mixes the models with the Markov
/// transition probabilities (stay 1 - p, move p/3 to each other model, p = 1 - exp(-lambda dt)) and
/// pins the still model's velocity (v = 0, cov(pos, vel) = 0, cov(vel) = sigma_v^2 I). All targets j at
/// once, as vectors over j: with W_i = (mu_{i|0}, mu_{i|1}, mu_{i|2}, mu_{i|3}) and D_i[a] = x_i[a] - x0[a],
/// x0[a] = sum_i W_i x_i[a] and P0[ab] = sum_i W_i (P_i[ab] + D_i[a] D_i[b]).
static inline __attribute__((always_inline)) void interact(locus_imm *imm, const locus_imm_params *params, double dt) {
    settle(imm);
    const double p = 1.0 - exp(-params->switch_rate * dt), stay = 1.0 - p, move = p / 3.0;
    const double all = (imm->mu[0] + imm->mu[1]) + (imm->mu[2] + imm->mu[3]);
    double c[4];
    for (int j = 0; j < 4; j++) c[j] = stay * imm->mu[j] + move * (all - imm->mu[j]);
    double w[4][4];
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) w[i][j] = (i == j ? stay : move) * imm->mu[i] / (c[j] > 1e-300 ? c[j] : 1e-300);
    }
    const v4 w0 = load(w[0]), w1 = load(w[1]), w2 = load(w[2]), w3 = load(w[3]);
    v4 x0[4], d[4][4];
    for (int a = 0; a < 4; a++) {
        const double *xa = imm->x[a];
        x0[a] = (w0 * xa[0] + w1 * xa[1]) + (w2 * xa[2] + w3 * xa[3]);
        d[0][a] = xa[0] - x0[a]; d[1][a] = xa[1] - x0[a]; d[2][a] = xa[2] - x0[a]; d[3][a] = xa[3] - x0[a];
    }
    static const int row[10] = { 0, 0, 1, 0, 0, 1, 1, 2, 2, 3 }, col[10] = { 0, 1, 1, 2, 3, 2, 3, 2, 3, 3 };
    for (int k = 0; k < 10; k++) {
        const double *pk = imm->p[k];
        const int a = row[k], b = col[k];
        store(imm->p[k], (w0 * (pk[0] + d[0][a] * d[0][b]) + w1 * (pk[1] + d[1][a] * d[1][b]))
                         + (w2 * (pk[2] + d[2][a] * d[2][b]) + w3 * (pk[3] + d[3][a] * d[3][b])));
    }
    for (int a = 0; a < 4; a++) store(imm->x[a], x0[a]);
    const double total = (c[0] + c[1]) + (c[2] + c[3]);
    for (int j = 0; j < 4; j++) imm->mu[j] = c[j] / total;
    imm->x[2][0] = imm->x[3][0] = 0;
    imm->p[B00][0] = imm->p[B01][0] = imm->p[B10][0] = imm->p[B11][0] = 0;
    imm->p[C00][0] = imm->p[C11][0] = params->still_velocity_variance;
    imm->p[C01][0] = 0;
}

/// The prediction without its closing check (locus_imm_predict_update_range checks once, after the
/// update, or on its refusal paths). LOCUS_KALMAN_BAD_ARGUMENT for a non-finite t, else OK.
static inline __attribute__((always_inline)) int predict_unchecked(locus_imm *imm, const locus_imm_params *params, double t) {
    if (!finite(t)) return LOCUS_KALMAN_BAD_ARGUMENT;
    if (!(t > imm->t)) return LOCUS_KALMAN_OK;
    if (t - imm->t_interaction >= params->interaction_interval_s) {
        interact(imm, params, t - imm->t_interaction);
        imm->t_interaction = t;
    }
    // Constant velocity per lane: x <- F x, P <- F P F^T + Q, with dt = 0 and Q = q_pos dt I on the
    // position in the still lane: A <- A + d(B + B^T) + d^2 C + q3 I, B <- B + d C + q2 I, C <- C + q1 I.
    // The noise terms as vectors over the lanes, q = (0, qs, qm, qa): q1 = q dt, q2 = q dt^2 / 2,
    // q3 = q dt^2 dt / 3 (the still lane: q_pos dt) — each lane rounded exactly as the scalar
    // expressions q*dt, (q*dt^2)/2 and ((q*dt^2)*dt)/3 (halving is exact, 0 lanes stay 0).
    const double dt = t - imm->t;
    const double qs = params->steady_density, qm = params->manoeuvre_density, qa = params->agile_density;
    const v4 d = { 0, dt, dt, dt }, d2 = d * d;
    const v4 q = { 0, qs, qm, qa }, qd2 = d2 * q;
    v4 q3 = (qd2 * d) / 3.0;
    q3[0] = params->still_position_density * dt;
    const v4 q2 = qd2 * 0.5;
    const v4 q1 = d * q;
    const v4 b00 = load(imm->p[B00]), b01 = load(imm->p[B01]), b10 = load(imm->p[B10]), b11 = load(imm->p[B11]);
    const v4 c00 = load(imm->p[C00]), c01 = load(imm->p[C01]), c11 = load(imm->p[C11]);
    store(imm->p[A00], load(imm->p[A00]) + 2 * d * b00 + d2 * c00 + q3);
    store(imm->p[A01], load(imm->p[A01]) + d * (b01 + b10) + d2 * c01);
    store(imm->p[A11], load(imm->p[A11]) + 2 * d * b11 + d2 * c11 + q3);
    store(imm->p[B00], b00 + d * c00 + q2);
    store(imm->p[B01], b01 + d * c01);
    store(imm->p[B10], b10 + d * c01);
    store(imm->p[B11], b11 + d * c11 + q2);
    store(imm->p[C00], c00 + q1);
    store(imm->p[C11], c11 + q1);
    store(imm->x[0], load(imm->x[0]) + d * load(imm->x[2]));
    store(imm->x[1], load(imm->x[1]) + d * load(imm->x[3]));
    imm->t = t;
    return LOCUS_KALMAN_OK;
}

static inline __attribute__((always_inline)) int predict(locus_imm *imm, const locus_imm_params *params, double t) {
    const int status = predict_unchecked(imm, params, t);
    return status == LOCUS_KALMAN_OK ? usable(imm) : status;
}

/// sum_j mu_j x_j with the settled mu (no exp: the per-measurement summary of the mixture mean).
/// Written with one 32-byte store: the caller reads it back with wide loads, and a load spanning
/// several narrower stores cannot be forwarded from them (it waits for them to reach the cache).
static inline __attribute__((always_inline)) void settled_mean(const locus_imm *imm, double *x) {
    double m[4];
    for (int i = 0; i < 4; i++) m[i] = (imm->mu[0] * imm->x[i][0] + imm->mu[1] * imm->x[i][1]) + (imm->mu[2] * imm->x[i][2] + imm->mu[3] * imm->x[i][3]);
    store(x, load(m));
}

/// Adds one measurement's per-model squared normalised innovation and innovation variance S = d / rho2
/// (range: D and rho^2; position: det S and 1).
/// (Vectors by pointer: a 32-byte vector argument would change the ABI without AVX.)
static inline __attribute__((always_inline)) void accumulate(locus_imm *imm, const v4 *nu2, const v4 *d, const v4 *rho2) {
    if (imm->pending >= LOCUS_IMM_MAX_PENDING) settle(imm);
    store(imm->nu2, load(imm->nu2) + *nu2);
    store(imm->d_product, load(imm->d_product) * *d);
    store(imm->rho2_product, load(imm->rho2_product) * *rho2);
    imm->pending += 1;
}

/// The models' one scalar update (the measurement models' common part, locus_measurement.h), every lane
/// at once, setting *refused_before_change when it returns before changing the struct. The
/// measurement depends on the position only, with Jacobian H = (gx, gy) / c (per lane; c > 0 scales
/// an unnormalised direction g, c² given as well), innovation y and variance R = variance. With
/// w = P (gx, gy, 0, 0)ᵀ (so P Hᵀ = w / c):
///   c² S = gᵀ A g + variance c² =: D,   x <- x + w (y c / D),   P <- P - w wᵀ / D,
/// the same update as with H itself, but the gain waits for one division (1/D) instead of a square
/// root, a division and then another division in a row. model_ok: the lanes where the model itself is
/// defined (else BAD_ARGUMENT); D must be positive and finite (else NOT_POSITIVE): one branch for both.
/// The gate (locus_measurement_soft_excess: soft long side) is tested on the manoeuvring model (lane 2). stats: y, D,
/// c² of lane 2, then (after an accepted update) the settled mean (four) and lane 2's (gx, gy).
/// (Vectors by pointer: a 32-byte vector argument would change the ABI without AVX.)
static inline __attribute__((always_inline)) int scalar_update_tracked(locus_imm *imm, const v4 *gx_, const v4 *gy_,
                                                                       const v4 *c2_, const v4 *c_, const v4 *y_,
                                                                       const v4i *model_ok, double variance,
                                                                       double gate_long, double gate_short,
                                                                       double *stats, int *refused_before_change) {
    const v4 gx = *gx_, gy = *gy_, c2 = *c2_, c = *c_, y = *y_;
    const v4 a00 = load(imm->p[A00]), a01 = load(imm->p[A01]), a11 = load(imm->p[A11]);
    const v4 b00 = load(imm->p[B00]), b01 = load(imm->p[B01]), b10 = load(imm->p[B10]), b11 = load(imm->p[B11]);
    const v4 w0 = a00 * gx + a01 * gy, w1 = a01 * gx + a11 * gy;
    const v4 w2 = b00 * gx + b10 * gy, w3 = b01 * gx + b11 * gy;
    const v4 d0 = gx * w0 + gy * w1 + variance * c2;
    if (!lanes_all(*model_ok & lanes_positive_mask(d0))) {
        return lanes_all(*model_ok) ? LOCUS_KALMAN_NOT_POSITIVE : LOCUS_KALMAN_BAD_ARGUMENT;
    }
    const double y2 = y[2], r2 = c2[2], d2 = d0[2];
    if (stats) { stats[0] = y2; stats[1] = d2; stats[2] = r2; }
    // The soft long gate (locus_measurement_soft_excess): refused beyond gate_short either side; a range
    // gate_long..gate_short sigmas long is taken with its variance raised by `extra` in every lane.
    const double extra = locus_measurement_soft_excess(y2, r2, d2, gate_long, gate_short);
    if (extra < 0) return LOCUS_KALMAN_GATED;
    const v4 d = extra > 0 ? d0 + extra * c2 : d0;
    const v4 inv = 1.0 / d, g = (y * c) * inv;
    const v4 v0 = w0 * inv, v1 = w1 * inv, v2 = w2 * inv, v3 = w3 * inv;
    const v4 x0 = load(imm->x[0]) + w0 * g, x1 = load(imm->x[1]) + w1 * g;
    const v4 x2 = load(imm->x[2]) + w2 * g, x3 = load(imm->x[3]) + w3 * g;
    const v4 n00 = a00 - v0 * w0, n01 = a01 - v0 * w1, n11 = a11 - v1 * w1;
    const v4 m00 = b00 - v0 * w2, m01 = b01 - v0 * w3, m10 = b10 - v1 * w2, m11 = b11 - v1 * w3;
    const v4 k00 = load(imm->p[C00]) - v2 * w2, k01 = load(imm->p[C01]) - v2 * w3, k11 = load(imm->p[C11]) - v3 * w3;
    // The result is checked before it is committed (in registers: finite, positive diagonal, every
    // lane); a refused result leaves the models as they were before this update.
    const v4 sum = ((x0 + x1) + (x2 + x3)) + ((n00 + n01) + (n11 + m00)) + ((m01 + m10) + (m11 + k00)) + (k01 + k11);
    const v4i finite = (sum - sum) == 0;
    const v4 zero = { 0, 0, 0, 0 };
    const v4i positive = (n00 > zero) & (n11 > zero) & (k00 > zero) & (k11 > zero);
    if (!lanes_all(finite & positive)) return lanes_all(finite) ? LOCUS_KALMAN_NOT_POSITIVE : LOCUS_KALMAN_NOT_FINITE;
    // The struct changes from here on.
    *refused_before_change = 0;
    store(imm->x[0], x0); store(imm->x[1], x1); store(imm->x[2], x2); store(imm->x[3], x3);
    store(imm->p[A00], n00); store(imm->p[A01], n01); store(imm->p[A11], n11);
    store(imm->p[B00], m00); store(imm->p[B01], m01); store(imm->p[B10], m10); store(imm->p[B11], m11);
    store(imm->p[C00], k00); store(imm->p[C01], k01); store(imm->p[C11], k11);
    // Likelihood terms: nu^2 = y^2 / S = y^2 c^2 / D, and S = D / c^2 (as its two factors).
    const v4 nu2 = (y * y) * c2 * inv;
    accumulate(imm, &nu2, &d, &c2);
    if (stats) {
        settled_mean(imm, stats + 3);
        // One 16-byte store for the pair (read back as one: see settled_mean).
        const double pair[2] = { gx[2], gy[2] };
        memcpy(stats + 7, pair, sizeof pair);
    }
    return LOCUS_KALMAN_OK;
}

/// The range model (locus_measurement_range.h), lane-wise: d = (px - ax, py - ay, tag height - az),
/// rho^2 = |d|^2 (LOCUS_RANGE_SQUARED), rho = sqrt(rho^2), y = r - rho, H = (dx, dy) / rho (g = (dx, dy),
/// c = rho), defined where rho^2 is in [1e-12, DBL_MAX]; then the scalar update. The square root of rho^2
/// is only needed for y = r - rho, off the gain's chain. stats: y, D, rho^2, mean, (dx, dy).
static inline __attribute__((always_inline)) int update_range_tracked(locus_imm *imm, const double *anchor, double tag_height_m,
                                                                      double range_m, double variance, double gate_long,
                                                                      double gate_short, double *stats,
                                                                      int *refused_before_change) {
    *refused_before_change = 1;
    if (!(variance > 0 && variance <= DBL_MAX && finite(range_m))) return LOCUS_KALMAN_BAD_ARGUMENT;
    const v4 dx = load(imm->x[0]) - anchor[0], dy = load(imm->x[1]) - anchor[1];
    const double dz = tag_height_m - anchor[2];
    const v4 rho2 = LOCUS_RANGE_SQUARED(dx, dy, dz);
    const v4 rho = vsqrt(rho2);
    const v4i rho2_ok = lanes_in_mask(rho2, 1e-12);
    const v4 y = range_m - rho;
    return scalar_update_tracked(imm, &dx, &dy, &rho2, &rho, &y, &rho2_ok, variance, gate_long, gate_short, stats,
                                 refused_before_change);
}

static inline __attribute__((always_inline)) int update_range(locus_imm *imm, const double *anchor, double tag_height_m,
                                                              double range_m, double variance, double gate_long,
                                                              double gate_short, double *stats) {
    int refused_before_change = 0;
    return update_range_tracked(imm, anchor, tag_height_m, range_m, variance, gate_long, gate_short, stats,
                                &refused_before_change);
}

LOCUS_IMM_CLONES int locus_imm_predict(locus_imm *imm, const locus_imm_params *params, double t) {
    return predict(imm, params, t);
}

LOCUS_IMM_CLONES int locus_imm_update_range(locus_imm *imm, const double *anchor, double tag_height_m, double range_m,
                                            double variance, double gate_long, double gate_short, double *stats) {
    return update_range(imm, anchor, tag_height_m, range_m, variance, gate_long, gate_short, stats);
}

/// locus_imm_predict_update_range's body (inlined there and in locus_imm_update_ranges).
static inline __attribute__((always_inline)) int predict_update_range(locus_imm *imm, const locus_imm_params *params,
                                                                      double t, const double *anchor, double tag_height_m,
                                                                      double range_m, double variance, double gate_long,
                                                                      double gate_short, double *stats, int *predicted) {
    // The prediction's own check is left to the end: an accepted update ends with the same check of the
    // updated models, which a non-finite or non-positive prediction cannot pass (NaN and infinity
    // survive the update's additions and subtractions). Only the paths that refuse the update before
    // changing the struct check the predicted models themselves — and so say whether the prediction
    // failed, exactly as a checked prediction first would.
    const int status = predict_unchecked(imm, params, t);
    if (status != LOCUS_KALMAN_OK) { *predicted = 0; return status; }
    int refused_before_change = 0;
    const int updated = update_range_tracked(imm, anchor, tag_height_m, range_m, variance, gate_long, gate_short, stats,
                                             &refused_before_change);
    if (refused_before_change) {
        const int prediction = usable(imm);
        *predicted = prediction == LOCUS_KALMAN_OK;
        return prediction == LOCUS_KALMAN_OK ? updated : prediction;
    }
    *predicted = 1;
    return updated;
}

LOCUS_IMM_CLONES int locus_imm_predict_update_range(locus_imm *imm, const locus_imm_params *params, double t,
                                                    const double *anchor, double tag_height_m, double range_m,
                                                    double variance, double gate_long, double gate_short,
                                                    double *stats, int *predicted) {
    return predict_update_range(imm, params, t, anchor, tag_height_m, range_m, variance, gate_long, gate_short, stats,
                                predicted);
}

LOCUS_IMM_CLONES int locus_imm_update_ranges(locus_imm *imm, const locus_imm_params *params, int n,
                                                 const double *times, const double *anchors, const double *ranges,
                                                 double tag_height_m, double variance, double gate_long,
                                                 double gate_short, locus_imm_run *run) {
    run->stop_status = LOCUS_IMM_RUN_NOT_STARTED;
    run->stop_predicted = 0;
    for (int k = 0; k < n; k++) {
        const double t = times[k], r = ranges[k];
        // TrackFilter.update's checks before its kernel call: a usable range and time (|t| <= DBL_MAX),
        // and no re-initialisation due. Such a range is left to the caller, untouched.
        if (!(r >= 0 && r <= DBL_MAX && t >= -DBL_MAX && t <= DBL_MAX)) return k;
        if (t - run->last_update_s > run->reinitialize_after_s || t < run->state_s) return k;
        double stats[9];
        int predicted = 0;
        const int status = predict_update_range(imm, params, t, anchors + 3 * k, tag_height_m, r, variance, gate_long,
                                                gate_short, stats, &predicted);
        if (status != LOCUS_KALMAN_OK || !predicted) {
            run->stop_status = status;
            run->stop_predicted = predicted;
            return k;
        }
        // Accepted: TrackFilter.update's bookkeeping, in its order and with its rounding. Swift's
        // max(x, y) is y >= x ? y : x, written out so that the same operand wins on ties.
        run->state_s = t >= run->state_s ? t : run->state_s;
        run->last_update_s = t;
        memcpy(run->mean, stats + 3, sizeof run->mean);
        run->rejection_score = run->rejection_score - 1 >= 0 ? run->rejection_score - 1 : 0;
        // TrackEpochQuality.accept: y = stats[0], (dx, dy) = stats[7..8], rho^2 = stats[2].
        const double y = stats[0];
        double a[3] = { run->a00, run->a01, run->a11 };
        run->used += 1;
        locus_range_gram_add(a, stats[7], stats[8], stats[2]);
        run->a00 = a[0]; run->a01 = a[1]; run->a11 = a[2];
        run->residual_squares += y * y;
    }
    return n;
}

LOCUS_IMM_CLONES int locus_imm_predict_update_differences(locus_imm *imm, const locus_imm_params *params, double t,
                                                          const double *reference, int m, double *rows,
                                                          double tag_height_m, double variance, double gate_long,
                                                          double gate_short, double *stats, int *predicted) {
    for (int k = 0; k < 8; k++) stats[k] = 0;
    *predicted = 0;
    if (!(variance > 0 && variance <= DBL_MAX) || m < 1) return LOCUS_KALMAN_BAD_ARGUMENT;
    const int prediction = predict(imm, params, t);
    if (prediction != LOCUS_KALMAN_OK) return prediction;
    *predicted = 1;
    // Every difference linearised at the predicted models (h and H per lane, kept in the row's scratch),
    // gated on the manoeuvring model (lane 2) with S = H A Hᵀ + 2σ²; the survivors' sums for the whitening.
    const v4 px0 = load(imm->x[0]), py0 = load(imm->x[1]);
    const double a00 = imm->p[A00][2], a01 = imm->p[A01][2], a11 = imm->p[A11][2];
    v4 sh = { 0, 0, 0, 0 }, sgx = { 0, 0, 0, 0 }, sgy = { 0, 0, 0, 0 };
    double sz = 0;
    int n = 0, gated = 0;
    for (int k = 0; k < m; k++) {
        double *row = rows + LOCUS_DIFFERENCE_ROW * k;
        const double z = row[3];
        v4 h, gx, gy;
        for (int j = 0; j < 4; j++) {
            double g[3];
            h[j] = locus_difference_jacobian(px0[j], py0[j], tag_height_m, reference, row, g);
            gx[j] = g[0];
            gy[j] = g[1];
        }
        store(row + 6, h); store(row + 10, gx); store(row + 14, gy);
        const double g0 = gx[2], g1 = gy[2];
        const double s = g0 * (a00 * g0 + a01 * g1) + g1 * (a01 * g0 + a11 * g1) + 2.0 * variance;
        const double nu = (z - h[2]) / sqrt(s);
        row[5] = nu;
        const v4 sum = (h + gx) + (gy + z);
        if (!lanes_all((sum - sum) == 0) || !(s > 0) || !finite(nu)) { row[4] = -1; continue; }
        if (locus_measurement_gated(nu, gate_long, gate_short)) { row[4] = 0; gated++; continue; }
        row[4] = 1;
        sh += h; sgx += gx; sgy += gy; sz += z;
        n++;
    }
    if (n == 0) return gated > 0 ? LOCUS_KALMAN_GATED : LOCUS_KALMAN_BAD_ARGUMENT;
    // The survivors whitened ((W v)_j = v_j + c Σ_k v_k) and applied one by one to every model, each
    // innovation taken from the linearisation at the predicted state x₀: y'_j = z'_j − h'_j − H'_j (x − x₀).
    locus_imm saved;
    memcpy(&saved, imm, sizeof saved);
    const double c = locus_difference_whitening(n);
    const v4 one = { 1, 1, 1, 1 };
    const v4i defined = { -1, -1, -1, -1 };
    double r2 = 0, f00 = 0, f01 = 0, f11 = 0;
    for (int k = 0; k < m; k++) {
        const double *row = rows + LOCUS_DIFFERENCE_ROW * k;
        if (row[4] != 1) continue;
        const v4 gx = load(row + 10) + c * sgx, gy = load(row + 14) + c * sgy;
        const v4 h = load(row + 6) + c * sh;
        const double z = row[3] + c * sz;
        const v4 y = (z - h) - (gx * (load(imm->x[0]) - px0) + gy * (load(imm->x[1]) - py0));
        int refused_before_change = 1;
        const int status = scalar_update_tracked(imm, &gx, &gy, &one, &one, &y, &defined, variance, INFINITY, INFINITY, 0,
                                                 &refused_before_change);
        if (status != LOCUS_KALMAN_OK) {
            memcpy(imm, &saved, sizeof saved);
            return status;
        }
        r2 += y[2] * y[2]; f00 += gx[2] * gx[2]; f01 += gx[2] * gy[2]; f11 += gy[2] * gy[2];
    }
    stats[0] = r2; stats[1] = f00; stats[2] = f01; stats[3] = f11;
    settled_mean(imm, stats + 4);
    return LOCUS_KALMAN_OK;
}

LOCUS_IMM_CLONES int locus_imm_update_position(locus_imm *imm, const double *z, const double *r, double gate, double *stats) {
    const v4 a00 = load(imm->p[A00]), a01 = load(imm->p[A01]), a11 = load(imm->p[A11]);
    const v4 b00 = load(imm->p[B00]), b01 = load(imm->p[B01]), b10 = load(imm->p[B10]), b11 = load(imm->p[B11]);
    const v4 s00 = a00 + r[0], s01 = a01 + r[1], s11 = a11 + r[2];
    const v4 det = s00 * s11 - s01 * s01;
    for (int j = 0; j < 4; j++) if (!(det[j] > 0) || !(s00[j] > 0) || !finite(det[j])) return LOCUS_KALMAN_NOT_POSITIVE;
    const v4 i00 = s11 / det, i01 = -s01 / det, i11 = s00 / det;
    const v4 y0 = z[0] - load(imm->x[0]), y1 = z[1] - load(imm->x[1]);
    const v4 nis = y0 * (i00 * y0 + i01 * y1) + y1 * (i01 * y0 + i11 * y1);
    for (int j = 0; j < 4; j++) if (!finite(nis[j])) return LOCUS_KALMAN_NOT_FINITE;
    if (stats) { stats[0] = nis[2]; stats[1] = det[2]; }
    if (nis[2] > gate) return LOCUS_KALMAN_GATED;
    // U = P H^T (rows px, py, vx, vy; columns x, y), K = U S^-1, x <- x + K y, P <- P - K U^T.
    const v4 u[4][2] = { { a00, a01 }, { a01, a11 }, { b00, b10 }, { b01, b11 } };
    v4 k[4][2];
    for (int i = 0; i < 4; i++) {
        k[i][0] = u[i][0] * i00 + u[i][1] * i01;
        k[i][1] = u[i][0] * i01 + u[i][1] * i11;
        store(imm->x[i], load(imm->x[i]) + k[i][0] * y0 + k[i][1] * y1);
    }
#define DOWN(idx, i, j) store(imm->p[idx], load(imm->p[idx]) - (k[i][0] * u[j][0] + k[i][1] * u[j][1]))
    DOWN(A00, 0, 0); DOWN(A01, 0, 1); DOWN(A11, 1, 1);
    DOWN(B00, 0, 2); DOWN(B01, 0, 3); DOWN(B10, 1, 2); DOWN(B11, 1, 3);
    DOWN(C00, 2, 2); DOWN(C01, 2, 3); DOWN(C11, 3, 3);
#undef DOWN
    const int status = usable(imm);
    if (status != LOCUS_KALMAN_OK) return status;
    const v4 one = { 1, 1, 1, 1 };
    accumulate(imm, &nis, &det, &one);
    if (stats) settled_mean(imm, stats + 2);
    return LOCUS_KALMAN_OK;
}

void locus_imm_combined(const locus_imm *imm, double *x, double *P) {
    double mu[4], p[10];
    settled_probabilities(imm, mu);
    mix(imm, mu, x, p);
    P[0] = p[A00]; P[1] = P[4] = p[A01]; P[5] = p[A11];
    P[2] = P[8] = p[B00]; P[3] = P[12] = p[B01];
    P[6] = P[9] = p[B10]; P[7] = P[13] = p[B11];
    P[10] = p[C00]; P[11] = P[14] = p[C01]; P[15] = p[C11];
}

void locus_imm_combined_position(const locus_imm *imm, double *x, double *a) {
    double mu[4];
    settled_probabilities(imm, mu);
    for (int i = 0; i < 4; i++) x[i] = (mu[0] * imm->x[i][0] + mu[1] * imm->x[i][1]) + (mu[2] * imm->x[i][2] + mu[3] * imm->x[i][3]);
    for (int k = 0; k < 3; k++) a[k] = (mu[0] * imm->p[k][0] + mu[1] * imm->p[k][1]) + (mu[2] * imm->p[k][2] + mu[3] * imm->p[k][3]);
    for (int m = 0; m < 4; m++) {
        const double d0 = imm->x[0][m] - x[0], d1 = imm->x[1][m] - x[1];
        a[A00] += mu[m] * d0 * d0; a[A01] += mu[m] * d0 * d1; a[A11] += mu[m] * d1 * d1;
    }
}
