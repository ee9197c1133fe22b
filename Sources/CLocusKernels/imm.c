// Interacting multiple models for one tag: see include/locus_imm.h. No allocation, no library calls
// beyond sqrt and exp; every update is computed into a copy and committed only when it is finite
// with a positive diagonal.
#include "locus_imm.h"
#include <math.h>
#include <string.h>

enum { A00, A01, A11, B00, B01, B10, B11, C00, C01, C11 };

/// Pending likelihoods are folded into mu before their products could underflow.
#define LOCUS_IMM_MAX_PENDING 16
#define LOCUS_IMM_MU_FLOOR 1e-9

static void pack(const double *P, double *p) {
    p[A00] = P[0]; p[A01] = 0.5 * (P[1] + P[4]); p[A11] = P[5];
    p[B00] = 0.5 * (P[2] + P[8]); p[B01] = 0.5 * (P[3] + P[12]);
    p[B10] = 0.5 * (P[6] + P[9]); p[B11] = 0.5 * (P[7] + P[13]);
    p[C00] = P[10]; p[C01] = 0.5 * (P[11] + P[14]); p[C11] = P[15];
}

static void unpack(const double *p, double *P) {
    P[0] = p[A00]; P[1] = P[4] = p[A01]; P[5] = p[A11];
    P[2] = P[8] = p[B00]; P[3] = P[12] = p[B01];
    P[6] = P[9] = p[B10]; P[7] = P[13] = p[B11];
    P[10] = p[C00]; P[11] = P[14] = p[C01]; P[15] = p[C11];
}

/// Finite mean and covariance, positive diagonal.
static int usable(const locus_imm_model *m) {
    double s = 0;
    for (int i = 0; i < 4; i++) s += m->x[i] * 0.0;
    for (int i = 0; i < 10; i++) s += m->p[i] * 0.0;
    if (s != 0.0) return LOCUS_KALMAN_NOT_FINITE;
    if (!(m->p[A00] > 0 && m->p[A11] > 0 && m->p[C00] > 0 && m->p[C11] > 0)) return LOCUS_KALMAN_NOT_POSITIVE;
    return LOCUS_KALMAN_OK;
}

void locus_imm_reset(locus_imm *imm, const double *x, const double *P, double t) {
    for (int j = 0; j < 3; j++) {
        for (int i = 0; i < 4; i++) imm->model[j].x[i] = x[i];
        pack(P, imm->model[j].p);
        imm->mu[j] = 1.0 / 3.0;
        imm->nu2[j] = 0;
        imm->s_product[j] = 1;
    }
    imm->t = t;
    imm->t_interaction = t;
    imm->pending = 0;
}

/// mu_j <- mu_j L_j / sum_i mu_i L_i (floored, normalised), L_j = exp(-nu2_j / 2) / sqrt(s_product_j),
/// evaluated relative to the best model so that nothing under- or overflows.
static void settled_probabilities(const locus_imm *imm, double *mu) {
    if (imm->pending == 0) {
        for (int j = 0; j < 3; j++) mu[j] = imm->mu[j];
        return;
    }
    double nu_min = imm->nu2[0], s_ref = imm->s_product[0];
    for (int j = 1; j < 3; j++) if (imm->nu2[j] < nu_min) nu_min = imm->nu2[j];
    double w[3], total = 0;
    for (int j = 0; j < 3; j++) {
        w[j] = imm->mu[j] * exp(-0.5 * (imm->nu2[j] - nu_min)) * sqrt(s_ref / imm->s_product[j]);
        total += w[j];
    }
    if (!(total > 1e-300) || !isfinite(total)) {
        for (int j = 0; j < 3; j++) mu[j] = imm->mu[j];
        return;
    }
    double sum = 0;
    for (int j = 0; j < 3; j++) {
        mu[j] = w[j] / total;
        if (mu[j] < LOCUS_IMM_MU_FLOOR) mu[j] = LOCUS_IMM_MU_FLOOR;
        sum += mu[j];
    }
    for (int j = 0; j < 3; j++) mu[j] /= sum;
}

static void settle(locus_imm *imm) {
    settled_probabilities(imm, imm->mu);
    for (int j = 0; j < 3; j++) { imm->nu2[j] = 0; imm->s_product[j] = 1; }
    imm->pending = 0;
}

void locus_imm_probabilities(const locus_imm *imm, double *mu) { settled_probabilities(imm, mu); }

/// x = sum w_i x_i, P = sum w_i (P_i + d_i d_i^T), d_i = x_i - x (packed).
static void mix(const locus_imm_model *models, const double *w, locus_imm_model *out) {
    for (int i = 0; i < 4; i++) out->x[i] = w[0] * models[0].x[i] + w[1] * models[1].x[i] + w[2] * models[2].x[i];
    for (int k = 0; k < 10; k++) out->p[k] = w[0] * models[0].p[k] + w[1] * models[1].p[k] + w[2] * models[2].p[k];
    for (int m = 0; m < 3; m++) {
        const double d0 = models[m].x[0] - out->x[0], d1 = models[m].x[1] - out->x[1];
        const double d2 = models[m].x[2] - out->x[2], d3 = models[m].x[3] - out->x[3];
        const double a = w[m];
        out->p[A00] += a * d0 * d0; out->p[A01] += a * d0 * d1; out->p[A11] += a * d1 * d1;
        out->p[B00] += a * d0 * d2; out->p[B01] += a * d0 * d3; out->p[B10] += a * d1 * d2; out->p[B11] += a * d1 * d3;
        out->p[C00] += a * d2 * d2; out->p[C01] += a * d2 * d3; out->p[C11] += a * d3 * d3;
    }
}

/// Constant velocity over dt with acceleration density q: x <- F x, P <- F P F^T + Q.
static void predict_cv(locus_imm_model *m, double dt, double q) {
    double *p = m->p;
    const double dt2 = dt * dt, q3 = q * dt2 * dt / 3.0, q2 = q * dt2 / 2.0, q1 = q * dt;
    const double a00 = p[A00] + 2 * dt * p[B00] + dt2 * p[C00] + q3;
    const double a01 = p[A01] + dt * (p[B01] + p[B10]) + dt2 * p[C01];
    const double a11 = p[A11] + 2 * dt * p[B11] + dt2 * p[C11] + q3;
    const double b00 = p[B00] + dt * p[C00] + q2, b01 = p[B01] + dt * p[C01];
    const double b10 = p[B10] + dt * p[C01], b11 = p[B11] + dt * p[C11] + q2;
    p[A00] = a00; p[A01] = a01; p[A11] = a11;
    p[B00] = b00; p[B01] = b01; p[B10] = b10; p[B11] = b11;
    p[C00] += q1; p[C11] += q1;
    m->x[0] += dt * m->x[2];
    m->x[1] += dt * m->x[3];
}

/// Standing still: x <- (px, py, 0, 0), A <- A + q_pos dt I, B <- 0, C <- sigma_v^2 I.
static void predict_still(locus_imm_model *m, double dt, double q_pos, double velocity_variance) {
    double *p = m->p;
    p[A00] += q_pos * dt; p[A11] += q_pos * dt;
    p[B00] = p[B01] = p[B10] = p[B11] = 0;
    p[C00] = p[C11] = velocity_variance; p[C01] = 0;
    m->x[2] = 0; m->x[3] = 0;
}

int locus_imm_predict(locus_imm *imm, const locus_imm_params *params, double t) {
    if (!isfinite(t)) return LOCUS_KALMAN_BAD_ARGUMENT;
    if (!(t > imm->t)) return LOCUS_KALMAN_OK;
    locus_imm next = *imm;
    if (t - imm->t_interaction >= params->interaction_interval_s) {
        settle(&next);
        const double dt = t - imm->t_interaction;
        const double p = 1.0 - exp(-params->switch_rate * dt), stay = 1.0 - p, move = 0.5 * p;
        double c[3];
        for (int j = 0; j < 3; j++) c[j] = stay * next.mu[j] + move * (next.mu[0] + next.mu[1] + next.mu[2] - next.mu[j]);
        locus_imm_model mixed[3];
        for (int j = 0; j < 3; j++) {
            const double cj = c[j] > 1e-300 ? c[j] : 1e-300;
            double w[3];
            for (int i = 0; i < 3; i++) w[i] = (i == j ? stay : move) * next.mu[i] / cj;
            mix(next.model, w, &mixed[j]);
        }
        const double total = c[0] + c[1] + c[2];
        for (int j = 0; j < 3; j++) { next.model[j] = mixed[j]; next.mu[j] = c[j] / total; }
        next.t_interaction = t;
    }
    const double dt = t - imm->t;
    predict_still(&next.model[0], dt, params->still_position_density, params->still_velocity_variance);
    predict_cv(&next.model[1], dt, params->steady_density);
    predict_cv(&next.model[2], dt, params->manoeuvre_density);
    for (int j = 0; j < 3; j++) {
        const int status = usable(&next.model[j]);
        if (status != LOCUS_KALMAN_OK) return status;
    }
    next.t = t;
    *imm = next;
    return LOCUS_KALMAN_OK;
}

/// One model's range update into `out`; the innovation in nu_s_y = (nu, S, y).
static int range_update(const locus_imm_model *m, const double *anchor, double h, double r, double variance,
                        locus_imm_model *out, double *nu_s_y) {
    const double dx = m->x[0] - anchor[0], dy = m->x[1] - anchor[1], dz = h - anchor[2];
    const double rho = sqrt(dx * dx + dy * dy + dz * dz);
    if (!(rho >= 1e-6) || !isfinite(rho)) return LOCUS_KALMAN_BAD_ARGUMENT;
    const double hx = dx / rho, hy = dy / rho;
    const double *p = m->p;
    const double u0 = p[A00] * hx + p[A01] * hy, u1 = p[A01] * hx + p[A11] * hy;
    const double u2 = p[B00] * hx + p[B10] * hy, u3 = p[B01] * hx + p[B11] * hy;
    const double s = hx * u0 + hy * u1 + variance;
    if (!(s > 0) || !isfinite(s)) return LOCUS_KALMAN_NOT_POSITIVE;
    const double y = r - rho, inv = 1.0 / s, g = y * inv;
    nu_s_y[0] = y / sqrt(s); nu_s_y[1] = s; nu_s_y[2] = y;
    out->x[0] = m->x[0] + u0 * g; out->x[1] = m->x[1] + u1 * g;
    out->x[2] = m->x[2] + u2 * g; out->x[3] = m->x[3] + u3 * g;
    const double v0 = u0 * inv, v1 = u1 * inv, v2 = u2 * inv, v3 = u3 * inv;
    double *q = out->p;
    q[A00] = p[A00] - v0 * u0; q[A01] = p[A01] - v0 * u1; q[A11] = p[A11] - v1 * u1;
    q[B00] = p[B00] - v0 * u2; q[B01] = p[B01] - v0 * u3; q[B10] = p[B10] - v1 * u2; q[B11] = p[B11] - v1 * u3;
    q[C00] = p[C00] - v2 * u2; q[C01] = p[C01] - v2 * u3; q[C11] = p[C11] - v3 * u3;
    return usable(out);
}

/// sum_j mu_j x_j with the settled mu (no exp: the per-measurement summary of the mixture mean).
static void settled_mean(const locus_imm *imm, double *x) {
    for (int i = 0; i < 4; i++)
        x[i] = imm->mu[0] * imm->model[0].x[i] + imm->mu[1] * imm->model[1].x[i] + imm->mu[2] * imm->model[2].x[i];
}

static void accumulate(locus_imm *imm, const double *nu2, const double *s) {
    if (imm->pending >= LOCUS_IMM_MAX_PENDING) settle(imm);
    for (int j = 0; j < 3; j++) { imm->nu2[j] += nu2[j]; imm->s_product[j] *= s[j]; }
    imm->pending += 1;
}

int locus_imm_update_range(locus_imm *imm, const double *anchor, double tag_height_m, double range_m,
                           double variance, double gate_long, double gate_short, double *stats) {
    if (!(variance > 0) || !isfinite(range_m) || !isfinite(variance)) return LOCUS_KALMAN_BAD_ARGUMENT;
    locus_imm_model out[3];
    double inn[3][3] = { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } };
    int status = range_update(&imm->model[2], anchor, tag_height_m, range_m, variance, &out[2], inn[2]);
    if (!(inn[2][1] > 0)) return status; // no innovation: bad geometry or S not positive
    if (stats) { stats[0] = inn[2][0]; stats[1] = inn[2][1]; stats[2] = inn[2][2]; }
    if (inn[2][0] > gate_long || inn[2][0] < -gate_short) return LOCUS_KALMAN_GATED;
    if (status != LOCUS_KALMAN_OK) return status;
    for (int j = 0; j < 2; j++) {
        status = range_update(&imm->model[j], anchor, tag_height_m, range_m, variance, &out[j], inn[j]);
        if (status != LOCUS_KALMAN_OK) return status;
    }
    double nu2[3], s[3];
    for (int j = 0; j < 3; j++) { nu2[j] = inn[j][0] * inn[j][0]; s[j] = inn[j][1]; imm->model[j] = out[j]; }
    accumulate(imm, nu2, s);
    if (stats) settled_mean(imm, stats + 3);
    return LOCUS_KALMAN_OK;
}

/// One model's position update into `out`; (NIS, det S) in nis_det.
static int position_update(const locus_imm_model *m, const double *z, const double *r, locus_imm_model *out,
                           double *nis_det) {
    const double *p = m->p;
    const double s00 = p[A00] + r[0], s01 = p[A01] + r[1], s11 = p[A11] + r[2];
    const double det = s00 * s11 - s01 * s01;
    if (!(det > 0) || !(s00 > 0) || !isfinite(det)) return LOCUS_KALMAN_NOT_POSITIVE;
    const double i00 = s11 / det, i01 = -s01 / det, i11 = s00 / det;
    const double y0 = z[0] - m->x[0], y1 = z[1] - m->x[1];
    const double d = y0 * (i00 * y0 + i01 * y1) + y1 * (i01 * y0 + i11 * y1);
    if (!isfinite(d)) return LOCUS_KALMAN_NOT_FINITE;
    nis_det[0] = d; nis_det[1] = det;
    // U = P H^T (rows: px, py, vx, vy), K = U S^-1.
    const double u[4][2] = { { p[A00], p[A01] }, { p[A01], p[A11] }, { p[B00], p[B10] }, { p[B01], p[B11] } };
    double k[4][2];
    for (int i = 0; i < 4; i++) {
        k[i][0] = u[i][0] * i00 + u[i][1] * i01;
        k[i][1] = u[i][0] * i01 + u[i][1] * i11;
        out->x[i] = m->x[i] + k[i][0] * y0 + k[i][1] * y1;
    }
    // P <- P - K U^T, one entry per unique (i, j).
#define DOWN(idx, i, j) out->p[idx] = p[idx] - (k[i][0] * u[j][0] + k[i][1] * u[j][1])
    DOWN(A00, 0, 0); DOWN(A01, 0, 1); DOWN(A11, 1, 1);
    DOWN(B00, 0, 2); DOWN(B01, 0, 3); DOWN(B10, 1, 2); DOWN(B11, 1, 3);
    DOWN(C00, 2, 2); DOWN(C01, 2, 3); DOWN(C11, 3, 3);
#undef DOWN
    return usable(out);
}

int locus_imm_update_position(locus_imm *imm, const double *z, const double *r, double gate, double *stats) {
    locus_imm_model out[3];
    double inn[3][2] = { { 0, 0 }, { 0, 0 }, { 0, 0 } };
    int status = position_update(&imm->model[2], z, r, &out[2], inn[2]);
    if (!(inn[2][1] > 0)) return status; // no innovation: S not positive or not finite
    if (stats) { stats[0] = inn[2][0]; stats[1] = inn[2][1]; }
    if (inn[2][0] > gate) return LOCUS_KALMAN_GATED;
    if (status != LOCUS_KALMAN_OK) return status;
    for (int j = 0; j < 2; j++) {
        status = position_update(&imm->model[j], z, r, &out[j], inn[j]);
        if (status != LOCUS_KALMAN_OK) return status;
    }
    double nu2[3], s[3];
    for (int j = 0; j < 3; j++) { nu2[j] = inn[j][0]; s[j] = inn[j][1]; imm->model[j] = out[j]; }
    accumulate(imm, nu2, s);
    if (stats) settled_mean(imm, stats + 2);
    return LOCUS_KALMAN_OK;
}

void locus_imm_combined(const locus_imm *imm, double *x, double *P) {
    double mu[3];
    settled_probabilities(imm, mu);
    locus_imm_model out;
    mix(imm->model, mu, &out);
    for (int i = 0; i < 4; i++) x[i] = out.x[i];
    unpack(out.p, P);
}
