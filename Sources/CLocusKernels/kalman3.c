// 3-D constant-velocity Kalman kernels (spatial floors): see include/locus_kalman3.h. No allocation,
// no library calls beyond sqrt; fixed sizes so that the compiler unrolls everything.
#include "locus_kalman3.h"
#include <math.h>
#include "finite.h"
#include "locus_measurement_range.h"

enum { N = 6 };

// Symmetrises n into P' = (n + nᵀ)/2, checks the new state (finite, positive diagonal) and only then
// writes it to s: a failed step leaves the caller's state untouched.
static int commit3(locus_kalman3_state *s, const double nx[N], const double n[N * N]) {
    double out[N * N];
    double check = 0;
    for (int i = 0; i < N; i++) check += nx[i] * 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            out[i * N + j] = 0.5 * (n[i * N + j] + n[j * N + i]);
            check += out[i * N + j] * 0.0;
        }
    if (check != 0.0) return LOCUS_KALMAN_NOT_FINITE; // NaN or inf anywhere makes the sum NaN
    for (int i = 0; i < N; i++)
        if (!(out[i * N + i] > 0)) return LOCUS_KALMAN_NOT_POSITIVE;
    for (int i = 0; i < N; i++) s->x[i] = nx[i];
    for (int i = 0; i < N * N; i++) s->p[i] = out[i];
    return LOCUS_KALMAN_OK;
}

int locus_kalman_cv3_predict(locus_kalman3_state *s, double dt_s, double q_h, double q_v) {
    if (!(dt_s >= 0) || !(q_h >= 0) || !(q_v >= 0) || !finite(dt_s) || !finite(q_h) || !finite(q_v))
        return LOCUS_KALMAN_BAD_ARGUMENT;
    const double dt = dt_s, dt2 = dt * dt, dt3 = dt2 * dt;
    const double *P = s->p;
    // B = F P: rows 0..2 get dt times rows 3..5 added; then n = B Fᵀ: columns likewise.
    double b[N * N], n[N * N], nx[N];
    for (int j = 0; j < N; j++) {
        for (int i = 0; i < 3; i++) {
            b[i * N + j] = P[i * N + j] + dt * P[(i + 3) * N + j];
            b[(i + 3) * N + j] = P[(i + 3) * N + j];
        }
    }
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < 3; j++) {
            n[i * N + j] = b[i * N + j] + dt * b[i * N + j + 3];
            n[i * N + j + 3] = b[i * N + j + 3];
        }
    }
    for (int a = 0; a < 3; a++) {
        const double q = a == 2 ? q_v : q_h;
        n[a * N + a] += q * dt3 / 3.0;
        n[a * N + a + 3] += q * dt2 / 2.0;
        n[(a + 3) * N + a] += q * dt2 / 2.0;
        n[(a + 3) * N + a + 3] += q * dt;
    }
    for (int i = 0; i < 3; i++) {
        nx[i] = s->x[i] + dt * s->x[i + 3];
        nx[i + 3] = s->x[i + 3];
    }
    return commit3(s, nx, n);
}

// The scalar EKF update with a row H = [h, 0, 0, 0] on the position (h a 3-vector), innovation y
// and noise variance: S = H P Hᵀ + variance, ν = y/√S (stats: ν, S, y), gated with the soft long side
// (locus_measurement_soft_excess: refused beyond gate_short either side; gate_long < ν ≤ gate_short taken
// with variance and S raised by e = y²/1.5² − S), then the Joseph form P' = (I − K H) P (I − K H)ᵀ +
// variance K Kᵀ, K = P Hᵀ / S. Shared by the range and the height rows (infinite gates: never raised),
// so the update is written once.
static int update_position_row(locus_kalman3_state *s, const double h[3], double y, double variance, double gate_long,
                               double gate_short, double *stats) {
    const double *x = s->x, *P = s->p;
    double u[N]; // P Hᵀ
    for (int i = 0; i < N; i++) u[i] = P[i * N + 0] * h[0] + P[i * N + 1] * h[1] + P[i * N + 2] * h[2];
    double sv = h[0] * u[0] + h[1] * u[1] + h[2] * u[2] + variance;
    if (!(sv > 0) || !finite(sv)) return LOCUS_KALMAN_NOT_POSITIVE;
    const double nu = y / sqrt(sv);
    if (stats) { stats[0] = nu; stats[1] = sv; stats[2] = y; }
    const double extra = locus_measurement_soft_excess(y, 1.0, sv, gate_long, gate_short);
    if (extra < 0) return LOCUS_KALMAN_GATED;
    variance += extra;
    sv += extra;
    double k[N], nx[N];
    for (int i = 0; i < N; i++) { k[i] = u[i] / sv; nx[i] = x[i] + k[i] * y; }
    // M = (I − K H) P = P − K uᵀ; w = M Hᵀ; P' = M − w Kᵀ + variance K Kᵀ (Joseph form).
    double m[N * N], w[N], n[N * N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) m[i * N + j] = P[i * N + j] - k[i] * u[j];
    for (int i = 0; i < N; i++) w[i] = m[i * N + 0] * h[0] + m[i * N + 1] * h[1] + m[i * N + 2] * h[2];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) n[i * N + j] = m[i * N + j] - w[i] * k[j] + variance * k[i] * k[j];
    return commit3(s, nx, n);
}

int locus_kalman_cv3_update_range(locus_kalman3_state *s, const double *anchor, double range_m, double variance,
                                  double gate_long, double gate_short, double *stats) {
    if (!(variance > 0) || !finite(range_m) || !finite(variance)) return LOCUS_KALMAN_BAD_ARGUMENT;
    // The range model (locus_measurement_range.h), spatial: the offset from the state's own z.
    double d[3], h[3];
    locus_range_offset(s->x[0], s->x[1], s->x[2], anchor, d);
    const double rho = locus_range_predicted(d[0], d[1], d[2]);
    if (!(rho >= 1e-6) || !finite(rho)) return LOCUS_KALMAN_BAD_ARGUMENT;
    locus_range_unit(d[0], d[1], d[2], rho, h);
    return update_position_row(s, h, range_m - rho, variance, gate_long, gate_short, stats);
}

int locus_kalman_cv3_update_height(locus_kalman3_state *s, double height_m, double variance) {
    if (!(variance > 0) || !finite(height_m) || !finite(variance)) return LOCUS_KALMAN_BAD_ARGUMENT;
    static const double h[3] = {0, 0, 1};
    return update_position_row(s, h, height_m - s->x[2], variance, INFINITY, INFINITY, NULL);
}

// Cholesky factor of a 6x6 SPD matrix into L (lower, row-major). Returns 0 on success.
static int cholesky6(const double *a, double *l) {
    for (int i = 0; i < N * N; i++) l[i] = 0;
    for (int j = 0; j < N; j++) {
        double d = a[j * N + j];
        for (int k = 0; k < j; k++) d -= l[j * N + k] * l[j * N + k];
        if (!(d > 0)) return -1;
        const double ljj = sqrt(d);
        l[j * N + j] = ljj;
        for (int i = j + 1; i < N; i++) {
            double t = a[i * N + j];
            for (int k = 0; k < j; k++) t -= l[i * N + k] * l[j * N + k];
            l[i * N + j] = t / ljj;
        }
    }
    return 0;
}

int locus_kalman_cv3_rts_step(const locus_kalman3_state *f, const locus_kalman3_state *pn, const locus_kalman3_state *sn,
                              double dt_s, locus_kalman3_state *out) {
    if (!(dt_s >= 0) || !finite(dt_s)) return LOCUS_KALMAN_BAD_ARGUMENT;
    double l[N * N];
    if (cholesky6(pn->p, l) != 0) return LOCUS_KALMAN_NOT_POSITIVE;
    // B = F Pf; X = Ppn⁻¹ B (column by column through L Lᵀ); G = Xᵀ = Pf Fᵀ Ppn⁻¹.
    double b[N * N], g[N * N];
    for (int j = 0; j < N; j++)
        for (int i = 0; i < 3; i++) {
            b[i * N + j] = f->p[i * N + j] + dt_s * f->p[(i + 3) * N + j];
            b[(i + 3) * N + j] = f->p[(i + 3) * N + j];
        }
    for (int c = 0; c < N; c++) {
        double z[N];
        for (int i = 0; i < N; i++) {
            double t = b[i * N + c];
            for (int k = 0; k < i; k++) t -= l[i * N + k] * z[k];
            z[i] = t / l[i * N + i];
        }
        for (int i = N - 1; i >= 0; i--) {
            double t = z[i];
            for (int k = i + 1; k < N; k++) t -= l[k * N + i] * z[k];
            z[i] = t / l[i * N + i];
        }
        for (int i = 0; i < N; i++) g[c * N + i] = z[i]; // G[c][i] = X[i][c]
    }
    double nx[N], dp[N * N], gd[N * N], n[N * N];
    for (int i = 0; i < N; i++) {
        double t = 0;
        for (int k = 0; k < N; k++) t += g[i * N + k] * (sn->x[k] - pn->x[k]);
        nx[i] = f->x[i] + t;
    }
    for (int i = 0; i < N * N; i++) dp[i] = sn->p[i] - pn->p[i];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double t = 0;
            for (int k = 0; k < N; k++) t += g[i * N + k] * dp[k * N + j];
            gd[i * N + j] = t;
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double t = 0;
            for (int k = 0; k < N; k++) t += gd[i * N + k] * g[j * N + k];
            n[i * N + j] = f->p[i * N + j] + t;
        }
    return commit3(out, nx, n);
}
