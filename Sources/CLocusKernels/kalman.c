// Constant-velocity Kalman kernels: see include/locus_kalman.h. No allocation, no library calls
// beyond sqrt; fixed sizes so that the compiler unrolls everything.
#include "locus_kalman.h"
#include <math.h>
#include "finite.h"
#include "locus_measurement_range.h"
#include "locus_measurement_difference.h"

static int finite_state(const double *x, const double *P) {
    double s = 0;
    for (int i = 0; i < 4; i++) s += x[i] * 0.0;
    for (int i = 0; i < 16; i++) s += P[i] * 0.0;
    return s == 0.0; // NaN or inf anywhere makes the sum NaN
}

static int positive_diagonal(const double *P) {
    return P[0] > 0 && P[5] > 0 && P[10] > 0 && P[15] > 0;
}

// Symmetrises the updated covariance n into P' = (n + nᵀ)/2, checks the new state (finite, positive
// diagonal) and only then writes it to (x, P): a failed update leaves the caller's state untouched.
static int commit_update(double *x, double *P, const double nx[4], const double n[16]) {
    double out[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            out[i * 4 + j] = 0.5 * (n[i * 4 + j] + n[j * 4 + i]);
    if (!finite_state(nx, out)) return LOCUS_KALMAN_NOT_FINITE;
    if (!positive_diagonal(out)) return LOCUS_KALMAN_NOT_POSITIVE;
    for (int i = 0; i < 4; i++) x[i] = nx[i];
    for (int i = 0; i < 16; i++) P[i] = out[i];
    return LOCUS_KALMAN_OK;
}

int locus_kalman_cv_predict(double *x, double *P, double dt_s, double q) {
    if (!(dt_s >= 0) || !(q >= 0) || !finite(dt_s) || !finite(q)) return LOCUS_KALMAN_BAD_ARGUMENT;
    const double dt = dt_s, dt2 = dt * dt, dt3 = dt2 * dt;
    double n[16];
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            const double a = P[i * 4 + j], b = P[i * 4 + 2 + j], bt = P[j * 4 + 2 + i], c = P[(2 + i) * 4 + 2 + j];
            const double diag = (i == j) ? 1.0 : 0.0;
            n[i * 4 + j] = a + dt * (b + bt) + dt2 * c + diag * q * dt3 / 3.0;
            n[i * 4 + 2 + j] = b + dt * c + diag * q * dt2 / 2.0;
            n[(2 + i) * 4 + 2 + j] = c + diag * q * dt;
        }
    }
    // Lower-left block is the transpose of the upper-right; symmetrise the diagonal blocks.
    double out[16];
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            out[i * 4 + j] = 0.5 * (n[i * 4 + j] + n[j * 4 + i]);
            out[(2 + i) * 4 + 2 + j] = 0.5 * (n[(2 + i) * 4 + 2 + j] + n[(2 + j) * 4 + 2 + i]);
            out[i * 4 + 2 + j] = n[i * 4 + 2 + j];
            out[(2 + j) * 4 + i] = n[i * 4 + 2 + j];
        }
    }
    double nx[4] = { x[0] + dt * x[2], x[1] + dt * x[3], x[2], x[3] };
    if (!finite_state(nx, out)) return LOCUS_KALMAN_NOT_FINITE;
    if (!positive_diagonal(out)) return LOCUS_KALMAN_NOT_POSITIVE;
    for (int i = 0; i < 4; i++) x[i] = nx[i];
    for (int i = 0; i < 16; i++) P[i] = out[i];
    return LOCUS_KALMAN_OK;
}

int locus_kalman_still_predict(double *x, double *P, double dt_s, double q_pos, double velocity_variance) {
    if (!(dt_s >= 0) || !(q_pos >= 0) || !(velocity_variance > 0) || !finite(dt_s) || !finite(q_pos)
        || !finite(velocity_variance)) return LOCUS_KALMAN_BAD_ARGUMENT;
    double out[16];
    for (int i = 0; i < 16; i++) out[i] = 0;
    out[0] = P[0] + q_pos * dt_s;
    out[1] = out[4] = 0.5 * (P[1] + P[4]);
    out[5] = P[5] + q_pos * dt_s;
    out[10] = out[15] = velocity_variance;
    double nx[4] = { x[0], x[1], 0, 0 };
    if (!finite_state(nx, out)) return LOCUS_KALMAN_NOT_FINITE;
    if (!positive_diagonal(out)) return LOCUS_KALMAN_NOT_POSITIVE;
    for (int i = 0; i < 4; i++) x[i] = nx[i];
    for (int i = 0; i < 16; i++) P[i] = out[i];
    return LOCUS_KALMAN_OK;
}

int locus_kalman_cv_update_position(double *x, double *P, const double *z, const double *r, double gate,
                                    double *stats) {
    const double s00 = P[0] + r[0], s01 = P[1] + r[1], s11 = P[5] + r[2];
    const double det = s00 * s11 - s01 * s01;
    if (!(det > 0) || !(s00 > 0) || !finite(det)) return LOCUS_KALMAN_NOT_POSITIVE;
    const double i00 = s11 / det, i01 = -s01 / det, i11 = s00 / det;
    const double y0 = z[0] - x[0], y1 = z[1] - x[1];
    const double d = y0 * (i00 * y0 + i01 * y1) + y1 * (i01 * y0 + i11 * y1);
    if (!finite(d)) return LOCUS_KALMAN_NOT_FINITE;
    if (stats) { stats[0] = d; stats[1] = det; }
    if (d > gate) return LOCUS_KALMAN_GATED;
    // K = P[:, 0:2] S^-1 (4x2)
    double k[4][2];
    for (int i = 0; i < 4; i++) {
        const double p0 = P[i * 4 + 0], p1 = P[i * 4 + 1];
        k[i][0] = p0 * i00 + p1 * i01;
        k[i][1] = p0 * i01 + p1 * i11;
    }
    double nx[4];
    for (int i = 0; i < 4; i++) nx[i] = x[i] + k[i][0] * y0 + k[i][1] * y1;
    // M = (I - K H) P = P - K P[0:2, :]
    double m[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            m[i * 4 + j] = P[i * 4 + j] - k[i][0] * P[j] - k[i][1] * P[4 + j];
    // P' = M (I - K H)^T + K R K^T = M - M[:, 0:2] K^T + K R K^T
    double kr[4][2];
    for (int i = 0; i < 4; i++) {
        kr[i][0] = k[i][0] * r[0] + k[i][1] * r[1];
        kr[i][1] = k[i][0] * r[1] + k[i][1] * r[2];
    }
    double n[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            n[i * 4 + j] = m[i * 4 + j] - m[i * 4 + 0] * k[j][0] - m[i * 4 + 1] * k[j][1]
                         + kr[i][0] * k[j][0] + kr[i][1] * k[j][1];
    return commit_update(x, P, nx, n);
}

// The filter's one scalar update (the measurement models' common part, locus_measurement.h): innovation
// y with Jacobian H = (hx, hy, 0, 0) (the measurement depends on the position only) and variance R =
// variance: u = P Hᵀ, S = H u + R, ν = y / √S (stats[0] = ν, stats[1] = S, stats[2] = y), the gate,
// then the Joseph-form update x ← x + K y, P ← (I − K H) P (I − K H)ᵀ + K R Kᵀ with K = u / S.
static inline __attribute__((always_inline)) int scalar_update(double *x, double *P, double hx, double hy, double y,
                                                               double variance, double gate_long, double gate_short,
                                                               double *stats) {
    double u[4]; // P H^T
    for (int i = 0; i < 4; i++) u[i] = P[i * 4 + 0] * hx + P[i * 4 + 1] * hy;
    const double s = hx * u[0] + hy * u[1] + variance;
    if (!(s > 0) || !finite(s)) return LOCUS_KALMAN_NOT_POSITIVE;
    const double v = y / sqrt(s);
    if (stats) { stats[0] = v; stats[1] = s; stats[2] = y; }
    if (locus_measurement_gated(v, gate_long, gate_short)) return LOCUS_KALMAN_GATED;
    double k[4], nx[4];
    for (int i = 0; i < 4; i++) { k[i] = u[i] / s; nx[i] = x[i] + k[i] * y; }
    // M = (I - K H) P = P - K u^T ; w = M H^T ; P' = M - w K^T + variance K K^T (Joseph form)
    double m[16], w[4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            m[i * 4 + j] = P[i * 4 + j] - k[i] * u[j];
    for (int i = 0; i < 4; i++) w[i] = m[i * 4 + 0] * hx + m[i * 4 + 1] * hy;
    double n[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            n[i * 4 + j] = m[i * 4 + j] - w[i] * k[j] + variance * k[i] * k[j];
    return commit_update(x, P, nx, n);
}

// The range model (locus_measurement_range.h), planar: h = ρ = ‖(px, py, tag height) − anchor‖,
// H = (dx, dy)/ρ, y = range − ρ, then the scalar update.
int locus_kalman_cv_update_range(double *x, double *P, const double *anchor, double tag_height_m,
                                 double range_m, double variance, double gate_long, double gate_short,
                                 double *stats) {
    if (!(variance > 0) || !finite(range_m) || !finite(variance)) return LOCUS_KALMAN_BAD_ARGUMENT;
    double d[3], h[3];
    locus_range_offset(x[0], x[1], tag_height_m, anchor, d);
    const double rho = locus_range_predicted(d[0], d[1], d[2]);
    if (!(rho >= 1e-6) || !finite(rho)) return LOCUS_KALMAN_BAD_ARGUMENT;
    locus_range_unit(d[0], d[1], d[2], rho, h);
    return scalar_update(x, P, h[0], h[1], range_m - rho, variance, gate_long, gate_short, stats);
}

// The range-difference model (locus_measurement_difference.h), planar: every raw difference linearised
// and gated at the entering state, the survivors whitened (W = I + c 11ᵀ) and applied as sequential
// scalar updates of that linearisation (see locus_kalman.h), on a copy committed at the end.
int locus_kalman_cv_update_differences(double *x, double *P, const double *reference, int m, double *rows,
                                       double tag_height_m, double variance, double gate_long, double gate_short,
                                       double *stats) {
    stats[0] = stats[1] = stats[2] = stats[3] = 0;
    if (!(variance > 0) || !finite(variance) || m < 1) return LOCUS_KALMAN_BAD_ARGUMENT;
    const double x0 = x[0], y0 = x[1];
    double sh = 0, sgx = 0, sgy = 0, sz = 0;
    int n = 0, gated = 0;
    for (int k = 0; k < m; k++) {
        double *row = rows + LOCUS_DIFFERENCE_ROW * k;
        double g[3];
        const double h = locus_difference_jacobian(x0, y0, tag_height_m, reference, row, g);
        const double z = row[3];
        row[6] = h; row[10] = g[0]; row[14] = g[1];
        // S = H P Hᵀ + 2σ² (the raw difference: two arrivals of variance σ² each).
        const double s = g[0] * (P[0] * g[0] + P[1] * g[1]) + g[1] * (P[4] * g[0] + P[5] * g[1]) + 2.0 * variance;
        const double nu = (z - h) / sqrt(s);
        row[5] = nu;
        if (!finite(h + g[0] + g[1] + z) || !(s > 0) || !finite(nu)) { row[4] = -1; continue; }
        if (locus_measurement_gated(nu, gate_long, gate_short)) { row[4] = 0; gated++; continue; }
        row[4] = 1;
        sh += h; sgx += g[0]; sgy += g[1]; sz += z;
        n++;
    }
    if (n == 0) return gated > 0 ? LOCUS_KALMAN_GATED : LOCUS_KALMAN_BAD_ARGUMENT;
    const double c = locus_difference_whitening(n);
    double lx[4], lp[16];
    for (int i = 0; i < 4; i++) lx[i] = x[i];
    for (int i = 0; i < 16; i++) lp[i] = P[i];
    double r2 = 0, f00 = 0, f01 = 0, f11 = 0;
    for (int k = 0; k < m; k++) {
        const double *row = rows + LOCUS_DIFFERENCE_ROW * k;
        if (row[4] != 1) continue;
        // (W v)_j = v_j + c Σ_k v_k for z, h and each column of H.
        const double gx = row[10] + c * sgx, gy = row[14] + c * sgy;
        const double y = (row[3] + c * sz) - (row[6] + c * sh) - (gx * (lx[0] - x0) + gy * (lx[1] - y0));
        const int status = scalar_update(lx, lp, gx, gy, y, variance, INFINITY, INFINITY, 0);
        if (status != LOCUS_KALMAN_OK) return status;
        r2 += y * y; f00 += gx * gx; f01 += gx * gy; f11 += gy * gy;
    }
    for (int i = 0; i < 4; i++) x[i] = lx[i];
    for (int i = 0; i < 16; i++) P[i] = lp[i];
    stats[0] = r2; stats[1] = f00; stats[2] = f01; stats[3] = f11;
    return LOCUS_KALMAN_OK;
}

// Cholesky factor of a 4x4 SPD matrix into L (lower, row-major). Returns 0 on success.
static int cholesky4(const double *a, double *l) {
    for (int i = 0; i < 16; i++) l[i] = 0;
    for (int j = 0; j < 4; j++) {
        double d = a[j * 4 + j];
        for (int k = 0; k < j; k++) d -= l[j * 4 + k] * l[j * 4 + k];
        if (!(d > 0)) return -1;
        const double ljj = sqrt(d);
        l[j * 4 + j] = ljj;
        for (int i = j + 1; i < 4; i++) {
            double s = a[i * 4 + j];
            for (int k = 0; k < j; k++) s -= l[i * 4 + k] * l[j * 4 + k];
            l[i * 4 + j] = s / ljj;
        }
    }
    return 0;
}

int locus_kalman_cv_rts_step(const double *xf, const double *Pf, const double *xp_next, const double *Pp_next,
                             const double *xs_next, const double *Ps_next, double dt_s, double *xs, double *Ps) {
    if (!(dt_s >= 0) || !finite(dt_s)) return LOCUS_KALMAN_BAD_ARGUMENT;
    double l[16];
    if (cholesky4(Pp_next, l) != 0) return LOCUS_KALMAN_NOT_POSITIVE;
    // B = F Pf (4x4): rows 0,1 get dt times rows 2,3 added.
    double b[16];
    for (int j = 0; j < 4; j++) {
        b[0 * 4 + j] = Pf[0 * 4 + j] + dt_s * Pf[2 * 4 + j];
        b[1 * 4 + j] = Pf[1 * 4 + j] + dt_s * Pf[3 * 4 + j];
        b[2 * 4 + j] = Pf[2 * 4 + j];
        b[3 * 4 + j] = Pf[3 * 4 + j];
    }
    // Y = Pp^-1 B by forward then backward substitution, column by column; G = Y^T.
    double y[16];
    for (int c = 0; c < 4; c++) {
        double t[4];
        for (int i = 0; i < 4; i++) {
            double s = b[i * 4 + c];
            for (int k = 0; k < i; k++) s -= l[i * 4 + k] * t[k];
            t[i] = s / l[i * 4 + i];
        }
        for (int i = 3; i >= 0; i--) {
            double s = t[i];
            for (int k = i + 1; k < 4; k++) s -= l[k * 4 + i] * y[k * 4 + c];
            y[i * 4 + c] = s / l[i * 4 + i];
        }
    }
    double g[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            g[i * 4 + j] = y[j * 4 + i];
    double dx[4], dp[16], gd[16], nx[4], n[16];
    for (int i = 0; i < 4; i++) dx[i] = xs_next[i] - xp_next[i];
    for (int i = 0; i < 16; i++) dp[i] = Ps_next[i] - Pp_next[i];
    for (int i = 0; i < 4; i++) {
        double s = xf[i];
        for (int k = 0; k < 4; k++) s += g[i * 4 + k] * dx[k];
        nx[i] = s;
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += g[i * 4 + k] * dp[k * 4 + j];
            gd[i * 4 + j] = s;
        }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double s = Pf[i * 4 + j];
            for (int k = 0; k < 4; k++) s += gd[i * 4 + k] * g[j * 4 + k];
            n[i * 4 + j] = s;
        }
    return commit_update(xs, Ps, nx, n);
}
