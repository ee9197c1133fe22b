// Trilateration kernels (see include/locus_trilateration.h).
//
// Algorithm, all in coordinates centred on the locators' centroid c (added back at the end):
//  1. Seed: subtract the mean of the squared-range equations |p - p_i|^2 = r_i^2, leaving the
//     linear system  a_i . p = -1/2 [(s_i - mean s) - (q_i - mean q)],  a_i = p_i (centred),
//     q_i = |p_i|^2, s_i = r_i^2 (planar: s_i = r_i^2 - (h - z_i)^2 over (x, y)).
//     Solved by its 2x2 / 3x3 normal equations; reciprocal condition < min_rcond -> DEGENERATE.
//  2. Newton / Gauss–Newton on chi2 = sum w_i (r_i - rhat_i(p))^2, w_i = 1 / sigma_i^2,
//     sigma_i = sigma0 + k r_i: N = sum w_i g_i g_i^T, b = sum w_i g_i e_i, g_i = d rhat_i / dp,
//     H = N + sum w_i (e_i / rhat_i) g_i g_i^T - (sum w_i e_i / rhat_i) I (the Hessian of chi2 / 2);
//     delta = H^-1 b where H is positive definite (quadratic convergence), else N^-1 b.
//     Stops when |delta| or the estimated distance to the optimum |delta| rho / (1 - rho),
//     rho = |delta_k| / |delta_(k-1)|, is <= tolerance, or after max_iterations steps.
//  3. Robust: when chi2 = sum w_i e_i^2 > chi2_{0.995}(n - p) and the residuals do not show a
//     common bias (guard: all z_i = e_i / sigma_i within [-0.5, 5] and a majority above +0.75 --
//     NLOS on a minority pulls the fit so that other ranges read short; a common bias such as
//     uncalibrated antenna delays leaves none short, is not NLOS, and rejection would only bend
//     the geometry), search the sets E of at most K ranges to exclude (n - |E| >= p + 1) for the
//     minimum of chi2(without E) + lambda |E|, among sets whose ranges all read long
//     (r_j - rhat_j > 0 at the fit without them: NLOS only lengthens a range). Level k = |E| takes
//     every k-subset while k <= 3 and C(n, k) <= 64, otherwise the best set of level k - 1 extended
//     by one of the 4 ranges that read longest there (largest positive e_i / sigma_i; greedy).
//     Level k runs only while the best cost so far exceeds lambda k (every set of k or more costs
//     at least that). Screening (exhaustive levels): each candidate first gets one linearised step
//     from the all-ranges solution by downdating the normal equations, which gives a lower bound on
//     its chi2 within a ball around that point (`screen`); candidates are then fitted from the
//     screened step, in increasing order of the bound, until the bound proves that none left can win.
//     A greedy level fits each of its extensions from level k - 1's best fit. Candidate fits stop at
//     1e-6 m steps; the chosen fit is then polished to the full tolerance.
//     lambda = 2 ln[(1 - eps) L / (eps sigma sqrt(2 pi))] is the -2 log-likelihood price of calling
//     a range an outlier under a prior of NLOS rate eps with extra length uniform over L metres
//     (eps = 0.1, L = 2.2 m, sigma = 0.1 m gives 8.7).
//  4. Covariance (N^-1 at the solution) * max(1, chi2 / dof); DOP with unit rows.
#include "locus_trilateration.h"

#include <math.h>
#include "finite.h"
#include "locus_measurement_range.h"
#include <stddef.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Helpers taking a constant `planar` (or p) or `fixed` (the storage, see tril_head) are forced inline, so
// that each mode and storage gets its own code with the other's branches and values removed (see
// linearize_in, gauss_newton_in, solve_in, trilaterate_in).
#define LOCUS_TRIL_INLINE static inline __attribute__((always_inline))

// The search's linearisation terms of one range (see tril_linearization).
typedef struct {
    double nn[6], bb[3], cc;   // w g g^T (xx, xy, xz, yy, yz, zz), w g e, w e^2
    double gx, gy, gz, e, ir;  // g (planar: gz = 0), e = r - rhat, 1 / rhat (0 where rhat == 0)
} tril_row_terms;

// A set-up problem: its header (sizes, centroid, settings) and its per-range arrays of n entries, in one
// of two storages with the same fields, chosen at the entry:
//  - tril_fixed (`locus_trilaterate`, n <= LOCUS_TRIL_MAX_LOCATORS): the arrays inside the struct, on
//    the stack, each at a constant offset from the problem;
//  - tril_scratch (`locus_trilaterate_scratch`, any n): pointers into one caller-owned block of
//    LOCUS_TRIL_SCRATCH_DOUBLES(n) doubles (`carve`).
// Every function below takes the problem as its header `P` and a constant `fixed` flag (like `planar`)
// and reaches an array through TRIL_ARR(name): the functions are forced inline down to an entry that
// passes the flag as a constant, so the n <= 64 path addresses its arrays as P + constant offset (no
// pointer loads, no registers held for the bases) while the algorithm has one source.
// Each array has one user at a time (named after it), so nothing is shared.
typedef struct {
    int32_t n, p, planar;
    double cx, cy, cz;       // centroid added back at the end
    double tol;
    double min_rcond;
    int32_t max_it;
} tril_head;

// The per-range arrays: X(element type, name).
//   lx, ly: centred locator x_i, y_i; lz: planar: h - z_i (fixed vertical offset), spatial: centred z_i;
//   r: range r_i (m); w: weight w_i = 1 / sigma_i^2 (1/m^2); seed_s, seed_q: seed;
//   lin_*: linearize_spatial; rh, ir: solve_in's rhat_i, 1 / rhat_i; wa: the search's candidate weights;
//   full_row: the search's linearisation (tril_linearization); elig, cand_set, level_set, best_set:
//   the search's index lists; active: range in the fit; in_base: range in a greedy level's base set.
#define LOCUS_TRIL_ARRAYS(X)                                                                          \
    X(double, lx) X(double, ly) X(double, lz) X(double, r) X(double, w)                               \
    X(double, seed_s) X(double, seed_q)                                                               \
    X(double, lin_gx) X(double, lin_gy) X(double, lin_gz) X(double, lin_e) X(double, lin_wh)          \
    X(double, rh) X(double, ir) X(double, wa)                                                         \
    X(tril_row_terms, full_row)                                                                       \
    X(int32_t, elig) X(int32_t, cand_set) X(int32_t, level_set) X(int32_t, best_set)                  \
    X(uint8_t, active) X(uint8_t, in_base)

#define LOCUS_TRIL_POINTER(T, name) T *name;
#define LOCUS_TRIL_ARRAY(T, name) T name[LOCUS_TRIL_MAX_LOCATORS];
typedef struct { tril_head h; LOCUS_TRIL_ARRAYS(LOCUS_TRIL_POINTER) } tril_scratch;
typedef struct { tril_head h; LOCUS_TRIL_ARRAYS(LOCUS_TRIL_ARRAY) } tril_fixed;
#undef LOCUS_TRIL_POINTER
#undef LOCUS_TRIL_ARRAY

// Array `name` of the problem P (a tril_head * at offset 0 of its storage) in the storage `fixed` says;
// `fixed` is a compile-time constant wherever this is expanded.
#define TRIL_ARR(name) (fixed ? ((tril_fixed *)(P))->name : ((tril_scratch *)(P))->name)

// The offset d = p - a_i of the range model (locus_measurement_range.h) in the problem's centred
// coordinates at x: (x - lx_i, y - ly_i, planar ? lz_i (the fixed h - z_i) : z - lz_i).
LOCUS_TRIL_INLINE void offset_at(tril_head *P, int32_t i, const double x[3], const int planar, const int fixed,
                                 double *dx, double *dy, double *dz) {
    *dx = x[0] - TRIL_ARR(lx)[i];
    *dy = x[1] - TRIL_ARR(ly)[i];
    *dz = planar ? TRIL_ARR(lz)[i] : x[2] - TRIL_ARR(lz)[i];
}

static const double chi2_995[64] = {
    7.8794385766, 10.5966347331, 12.8381564666, 14.8602590006,
    16.7496023436, 18.5475841785, 20.2777398750, 21.9549549907,
    23.5893507813, 25.1881795720, 26.7568489165, 28.2995188220,
    29.8194712237, 31.3193496226, 32.8013206458, 34.2671865378,
    35.7184656590, 37.1564514566, 38.5822565549, 39.9968463129,
    41.4010647714, 42.7956549993, 44.1812752500, 45.5585119365,
    46.9278901601, 48.2898823325, 49.6449152990, 50.9933762685,
    52.3356177859, 53.6719619302, 55.0027038800, 56.3281149597,
    57.6484452559, 58.9639258755, 60.2747709048, 61.5811791148,
    62.8833354537, 64.1814123574, 65.4755709035, 66.7659618328,
    68.0527264554, 69.3359974569, 70.6158996180, 71.8925504590,
    73.1660608182, 74.4365353721, 75.7040731047, 76.9687677320,
    78.2307080867, 79.4899784668, 80.7466589540, 82.0008257028,
    83.2525512052, 84.5019045328, 85.7489515586, 86.9937551609,
    88.2363754100, 89.4768697414, 90.7152931145, 91.9516981596,
    93.1861353141, 94.4186529479, 95.6492974805, 96.8781134895,
};

double locus_tril_chi_square_995(int32_t dof) {
    if (dof < 1) return INFINITY;
    if (dof <= 64) return chi2_995[dof - 1];
    // Wilson–Hilferty: chi2_q(k) ~ k (1 - 2/(9k) + z_q sqrt(2/(9k)))^3, z_0.995 = 2.5758293035489
    double k = (double)dof, a = 2.0 / (9.0 * k);
    double t = 1.0 - a + 2.5758293035489004 * sqrt(a);
    return k * t * t * t;
}

// max(a, b) for finite a, b, inline (libm's fmax is a call without -ffinite-math-only).
static inline double max_of(double a, double b) { return a > b ? a : b; }

// True when a symmetric positive definite 2x2 matrix with trace tr and determinant det has
// lambda_min / lambda_max >= rcond. Without a square root: tr^2 / det = (1 + rho)^2 / rho decreases in
// rho = lambda_min / lambda_max on (0, 1], so the test is tr^2 rcond <= (1 + rcond)^2 det.
static inline int well_conditioned_2x2(double tr, double det, double rcond) {
    return tr > 0.0 && finite(tr) && det > 0.0 && tr * tr * rcond <= (1.0 + rcond) * (1.0 + rcond) * det;
}

// Reciprocal condition and inverse of a symmetric 2x2 / 3x3 matrix stored as (xx, xy, xz, yy, yz, zz).
// Returns 0 and fills inv when rcond >= min_rcond, else LOCUS_TRIL_DEGENERATE.
// sym_inverse_in is inlined where p is a constant (Gauss–Newton, per mode); sym_inverse elsewhere.
LOCUS_TRIL_INLINE int sym_inverse_in(int32_t p, const double m[6], double min_rcond, double inv[6]) {
    if (p == 2) {
        double a = m[0], b = m[1], c = m[3];
        double det = a * c - b * b;
        if (!well_conditioned_2x2(a + c, det, min_rcond)) return LOCUS_TRIL_DEGENERATE;
        double id = 1.0 / det;
        inv[0] = c * id; inv[1] = -b * id; inv[3] = a * id;
        inv[2] = inv[4] = inv[5] = 0.0;
        return LOCUS_TRIL_OK;
    }
    double a = m[0], b = m[1], c = m[2], d = m[3], e = m[4], f = m[5];
    double c00 = d * f - e * e, c01 = c * e - b * f, c02 = b * e - c * d;
    double c11 = a * f - c * c, c12 = b * c - a * e, c22 = a * d - b * b;
    double det = a * c00 + b * c01 + c * c02;
    if (!(det > 0.0) || !finite(det)) return LOCUS_TRIL_DEGENERATE;
    double id = 1.0 / det;
    inv[0] = c00 * id; inv[1] = c01 * id; inv[2] = c02 * id;
    inv[3] = c11 * id; inv[4] = c12 * id; inv[5] = c22 * id;
    // 1-norm reciprocal condition 1 / (|M|_1 |M^-1|_1), exact for 3x3.
    double n0 = fabs(a) + fabs(b) + fabs(c), n1 = fabs(b) + fabs(d) + fabs(e), n2 = fabs(c) + fabs(e) + fabs(f);
    double i0 = fabs(inv[0]) + fabs(inv[1]) + fabs(inv[2]);
    double i1 = fabs(inv[1]) + fabs(inv[3]) + fabs(inv[4]);
    double i2 = fabs(inv[2]) + fabs(inv[4]) + fabs(inv[5]);
    double nm = max_of(n0, max_of(n1, n2)), ni = max_of(i0, max_of(i1, i2));
    double rc = 1.0 / (nm * ni);
    if (!(rc >= min_rcond)) return LOCUS_TRIL_DEGENERATE;
    return LOCUS_TRIL_OK;
}

static int sym_inverse(int32_t p, const double m[6], double min_rcond, double inv[6]) {
    return sym_inverse_in(p, m, min_rcond, inv);
}

int locus_tril_choose_mode(const double *xyz, int32_t n, int32_t requested_mode,
                           double planar_height_ratio, int32_t *mode) {
    if (xyz == NULL || mode == NULL || n < 0 || !(planar_height_ratio >= 0.0)) return LOCUS_TRIL_BAD_ARGUMENT;
    if (requested_mode == LOCUS_TRIL_MODE_PLANAR || requested_mode == LOCUS_TRIL_MODE_SPATIAL) {
        *mode = requested_mode;
        return LOCUS_TRIL_OK;
    }
    if (requested_mode != LOCUS_TRIL_MODE_AUTOMATIC) return LOCUS_TRIL_BAD_ARGUMENT;
    if (n < 4) { *mode = LOCUS_TRIL_MODE_PLANAR; return LOCUS_TRIL_OK; }
    double x0 = xyz[0], x1 = xyz[0], y0 = xyz[1], y1 = xyz[1], z0 = xyz[2], z1 = xyz[2];
    for (int32_t i = 1; i < n; i++) {
        const double *q = xyz + 3 * i;
        x0 = fmin(x0, q[0]); x1 = fmax(x1, q[0]);
        y0 = fmin(y0, q[1]); y1 = fmax(y1, q[1]);
        z0 = fmin(z0, q[2]); z1 = fmax(z1, q[2]);
    }
    double extent = sqrt((x1 - x0) * (x1 - x0) + (y1 - y0) * (y1 - y0));
    *mode = (z1 - z0) <= planar_height_ratio * extent ? LOCUS_TRIL_MODE_PLANAR : LOCUS_TRIL_MODE_SPATIAL;
    return LOCUS_TRIL_OK;
}

// Linearised closed-form seed over all n ranges.
LOCUS_TRIL_INLINE int seed(tril_head *P, const uint8_t *active, double x[3], const int planar, const int fixed) {
    int32_t n = P->n, count = 0;
    double ms = 0.0, mq = 0.0, ax0 = 0.0, ay0 = 0.0, az0 = 0.0;
    double *restrict s = TRIL_ARR(seed_s), *restrict q = TRIL_ARR(seed_q);
    const double *restrict lx = TRIL_ARR(lx), *restrict ly = TRIL_ARR(ly), *restrict lz = TRIL_ARR(lz), *restrict rr = TRIL_ARR(r);
    for (int32_t i = 0; i < n; i++) {
        if (!active[i]) continue;
        count++;
        double ri = rr[i];
        if (planar) {
            s[i] = ri * ri - lz[i] * lz[i];
            q[i] = lx[i] * lx[i] + ly[i] * ly[i];
        } else {
            s[i] = ri * ri;
            q[i] = lx[i] * lx[i] + ly[i] * ly[i] + lz[i] * lz[i];
        }
        ms += s[i]; mq += q[i];
        ax0 += lx[i]; ay0 += ly[i]; az0 += lz[i];
    }
    if (count < (planar ? 2 : 3) + 1) return LOCUS_TRIL_TOO_FEW_RANGES;
    ms /= count; mq /= count; ax0 /= count; ay0 /= count; az0 /= count;
    double m[6] = {0, 0, 0, 0, 0, 0}, b[3] = {0, 0, 0};
    for (int32_t i = 0; i < n; i++) {
        if (!active[i]) continue;
        double rhs = -0.5 * ((s[i] - ms) - (q[i] - mq));
        double ax = lx[i] - ax0, ay = ly[i] - ay0;
        m[0] += ax * ax; m[1] += ax * ay; m[3] += ay * ay;
        b[0] += ax * rhs; b[1] += ay * rhs;
        if (!planar) {
            double az = lz[i] - az0;
            m[2] += ax * az; m[4] += ay * az; m[5] += az * az;
            b[2] += az * rhs;
        }
    }
    double inv[6];
    int st = sym_inverse_in(planar ? 2 : 3, m, P->min_rcond, inv);
    if (st != LOCUS_TRIL_OK) return st;
    if (planar) {
        x[0] = inv[0] * b[0] + inv[1] * b[1];
        x[1] = inv[1] * b[0] + inv[3] * b[1];
        x[2] = 0.0;
    } else {
        x[0] = inv[0] * b[0] + inv[1] * b[1] + inv[2] * b[2];
        x[1] = inv[1] * b[0] + inv[3] * b[1] + inv[4] * b[2];
        x[2] = inv[2] * b[0] + inv[4] * b[1] + inv[5] * b[2];
    }
    if (!finite(x[0]) || !finite(x[1]) || !finite(x[2])) return LOCUS_TRIL_DIVERGED;
    return LOCUS_TRIL_OK;
}

// Model distances rh_i = |p - p_i| (planar: fixed vertical offset) and their reciprocals
// ir_i = 1 / rh_i (0 where rh_i == 0) for all n locators, two at a time with SSE2 where available:
// the square roots and divisions dominate a Gauss–Newton step.
LOCUS_TRIL_INLINE void
distances(tril_head *P, const double x[3], double *rh, double *ir, const int planar, const int fixed) {
    int32_t n = P->n;
#if defined(__SSE2__)
    const __m128d px = _mm_set1_pd(x[0]), py = _mm_set1_pd(x[1]), pz = _mm_set1_pd(x[2]);
    int32_t i = 0;
    for (; i + 1 < n; i += 2) {
        __m128d dx = _mm_sub_pd(px, _mm_loadu_pd(TRIL_ARR(lx) + i));
        __m128d dy = _mm_sub_pd(py, _mm_loadu_pd(TRIL_ARR(ly) + i));
        __m128d lz = _mm_loadu_pd(TRIL_ARR(lz) + i);
        __m128d dz = planar ? lz : _mm_sub_pd(pz, lz);
        __m128d r = locus_range_predicted_pd(dx, dy, dz);
        __m128d inv = locus_range_inverse_pd(r);
        _mm_storeu_pd(rh + i, r);
        _mm_storeu_pd(ir + i, inv);
    }
    for (; i < n; i++) {
#else
    for (int32_t i = 0; i < n; i++) {
#endif
        double dx, dy, dz;
        offset_at(P, i, x, planar, fixed, &dx, &dy, &dz);
        double r = locus_range_predicted(dx, dy, dz);
        rh[i] = r;
        ir[i] = locus_range_inverse(r);
    }
}

// Normal matrix N = sum wa_i g_i g_i^T, gradient b = sum wa_i g_i e_i, chi2 = sum wa_i e_i^2 and the
// Hessian of chi2 / 2, H = N - sum wa_i e_i d^2 rhat_i / dp^2 = sum wa_i (1 + e_i / rhat_i) g_i g_i^T
// - (sum wa_i e_i / rhat_i) I (d^2 rhat_i / dp^2 = (I - g_i g_i^T) / rhat_i), at x; g_i = (x - p_i) /
// rhat_i (planar: (x, y) components), e_i = r_i - rhat_i, active weights wa_i = w_i for a range in the
// fit and 0 for one left out. One fused pass, two ranges at a time with SSE2 where available (the
// square roots and divisions dominate a step). Matrices as (xx, xy, xz, yy, yz, zz). `planar` is a
// constant at every call (gauss_newton_in), so each mode gets its own loop holding only its own
// accumulators in registers: one loop branched on the mode inside was not unswitched by the compiler
// and spilled the spatial accumulators in both modes.
LOCUS_TRIL_INLINE void
linearize_in(tril_head *P, const double *wa, const double x[3], double m[6], double b[3], double *chi2,
             double h[6], const int planar, const int fixed) {
    int32_t n = P->n, i = 0;
    const double *restrict lx = TRIL_ARR(lx), *restrict ly = TRIL_ARR(ly), *restrict pz_ = TRIL_ARR(lz), *restrict rr = TRIL_ARR(r);
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, b0 = 0, b1 = 0, b2 = 0, c = 0;
    double t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0, t5 = 0, q = 0;
#if defined(__SSE2__)
    const __m128d px = _mm_set1_pd(x[0]), py = _mm_set1_pd(x[1]), pz = _mm_set1_pd(x[2]);
    const __m128d zero = _mm_setzero_pd();
    __m128d v0 = zero, v1 = zero, v2 = zero, v3 = zero, v4 = zero, v5 = zero;
    __m128d u0 = zero, u1 = zero, u2 = zero, vc = zero;
    __m128d h0 = zero, h1 = zero, h2 = zero, h3 = zero, h4 = zero, h5 = zero, vq = zero;
    for (; i + 1 < n; i += 2) {
        __m128d dx = _mm_sub_pd(px, _mm_loadu_pd(lx + i));
        __m128d dy = _mm_sub_pd(py, _mm_loadu_pd(ly + i));
        __m128d lz = _mm_loadu_pd(pz_ + i);
        __m128d dz = planar ? lz : _mm_sub_pd(pz, lz);
        __m128d r = locus_range_predicted_pd(dx, dy, dz);
        __m128d ir = locus_range_inverse_pd(r);
        __m128d gx = _mm_mul_pd(dx, ir), gy = _mm_mul_pd(dy, ir);
        __m128d e = _mm_sub_pd(_mm_loadu_pd(rr + i), r), w = _mm_loadu_pd(wa + i);
        __m128d we = _mm_mul_pd(w, e), wei = _mm_mul_pd(we, ir);
        vc = _mm_add_pd(vc, _mm_mul_pd(we, e));
        vq = _mm_add_pd(vq, wei);
        __m128d wh = _mm_add_pd(w, wei);   // w (1 + e / rhat)
        __m128d wgx = _mm_mul_pd(w, gx), wgy = _mm_mul_pd(w, gy);
        u0 = _mm_add_pd(u0, _mm_mul_pd(wgx, e)); u1 = _mm_add_pd(u1, _mm_mul_pd(wgy, e));
        v0 = _mm_add_pd(v0, _mm_mul_pd(wgx, gx)); v1 = _mm_add_pd(v1, _mm_mul_pd(wgx, gy));
        v3 = _mm_add_pd(v3, _mm_mul_pd(wgy, gy));
        __m128d hgx = _mm_mul_pd(wh, gx), hgy = _mm_mul_pd(wh, gy);
        h0 = _mm_add_pd(h0, _mm_mul_pd(hgx, gx)); h1 = _mm_add_pd(h1, _mm_mul_pd(hgx, gy));
        h3 = _mm_add_pd(h3, _mm_mul_pd(hgy, gy));
        if (!planar) {
            __m128d gz = _mm_mul_pd(dz, ir), wgz = _mm_mul_pd(w, gz), hgz = _mm_mul_pd(wh, gz);
            v2 = _mm_add_pd(v2, _mm_mul_pd(wgx, gz)); v4 = _mm_add_pd(v4, _mm_mul_pd(wgy, gz));
            v5 = _mm_add_pd(v5, _mm_mul_pd(wgz, gz)); u2 = _mm_add_pd(u2, _mm_mul_pd(wgz, e));
            h2 = _mm_add_pd(h2, _mm_mul_pd(hgx, gz)); h4 = _mm_add_pd(h4, _mm_mul_pd(hgy, gz));
            h5 = _mm_add_pd(h5, _mm_mul_pd(hgz, gz));
        }
    }
    double hs[2];
#define LOCUS_TRIL_HSUM(v, out) (_mm_storeu_pd(hs, (v)), (out) = hs[0] + hs[1])
    LOCUS_TRIL_HSUM(v0, s0); LOCUS_TRIL_HSUM(v1, s1); LOCUS_TRIL_HSUM(v3, s3);
    LOCUS_TRIL_HSUM(u0, b0); LOCUS_TRIL_HSUM(u1, b1); LOCUS_TRIL_HSUM(vc, c);
    LOCUS_TRIL_HSUM(h0, t0); LOCUS_TRIL_HSUM(h1, t1); LOCUS_TRIL_HSUM(h3, t3); LOCUS_TRIL_HSUM(vq, q);
    if (!planar) {
        LOCUS_TRIL_HSUM(v2, s2); LOCUS_TRIL_HSUM(v4, s4); LOCUS_TRIL_HSUM(v5, s5); LOCUS_TRIL_HSUM(u2, b2);
        LOCUS_TRIL_HSUM(h2, t2); LOCUS_TRIL_HSUM(h4, t4); LOCUS_TRIL_HSUM(h5, t5);
    }
#undef LOCUS_TRIL_HSUM
#endif
    for (; i < n; i++) {
        double dx, dy, dz;
        offset_at(P, i, x, planar, fixed, &dx, &dy, &dz);
        double r = locus_range_predicted(dx, dy, dz);
        double ir = locus_range_inverse(r);
        double gx = dx * ir, gy = dy * ir, gz = planar ? 0.0 : dz * ir;
        double e = TRIL_ARR(r)[i] - r, w = wa[i];
        double we = w * e, wei = we * ir, wh = w + wei;
        double wgx = w * gx, wgy = w * gy, wgz = w * gz;
        double hgx = wh * gx, hgy = wh * gy, hgz = wh * gz;
        s0 += wgx * gx; s1 += wgx * gy; s2 += wgx * gz;
        s3 += wgy * gy; s4 += wgy * gz; s5 += wgz * gz;
        t0 += hgx * gx; t1 += hgx * gy; t2 += hgx * gz;
        t3 += hgy * gy; t4 += hgy * gz; t5 += hgz * gz;
        b0 += wgx * e; b1 += wgy * e; b2 += wgz * e;
        c += we * e;
        q += wei;
    }
    m[0] = s0; m[1] = s1; m[2] = s2; m[3] = s3; m[4] = s4; m[5] = s5;
    h[0] = t0 - q; h[1] = t1; h[2] = t2; h[3] = t3 - q; h[4] = t4; h[5] = planar ? 0.0 : t5 - q;
    b[0] = b0; b[1] = b1; b[2] = b2;
    *chi2 = c;
}

#if defined(__SSE2__)
// The spatial linearisation with SSE2: the same sums as linearize_in, term for term and in the same
// order (so the same bits), in three passes, since the fused spatial loop's 17 accumulators do not fit
// the 16 SSE registers and spilled on every pair: (1) per range g_i, e_i, wh_i = wa_i (1 + e_i / rhat_i),
// and chi2, q = sum wa_i e_i / rhat_i; (2) N and b; (3) the Hessian's sum wh_i g_i g_i^T.
LOCUS_TRIL_INLINE void
linearize_spatial(tril_head *P, const double *wa, const double x[3], double m[6], double b[3], double *chi2,
                  double h[6], const int fixed) {
    int32_t n = P->n, i;
    double *gx = TRIL_ARR(lin_gx), *gy = TRIL_ARR(lin_gy), *gz = TRIL_ARR(lin_gz), *ev = TRIL_ARR(lin_e), *wh = TRIL_ARR(lin_wh);
    const __m128d px = _mm_set1_pd(x[0]), py = _mm_set1_pd(x[1]), pz = _mm_set1_pd(x[2]);
    const __m128d zero = _mm_setzero_pd();
    double hs[2];
#define LOCUS_TRIL_HSUM(v, out) (_mm_storeu_pd(hs, (v)), (out) = hs[0] + hs[1])
    // (1) geometry, residuals, chi2 and q
    __m128d vc = zero, vq = zero;
    for (i = 0; i + 1 < n; i += 2) {
        __m128d dx = _mm_sub_pd(px, _mm_loadu_pd(TRIL_ARR(lx) + i));
        __m128d dy = _mm_sub_pd(py, _mm_loadu_pd(TRIL_ARR(ly) + i));
        __m128d dz = _mm_sub_pd(pz, _mm_loadu_pd(TRIL_ARR(lz) + i));
        __m128d r = locus_range_predicted_pd(dx, dy, dz);
        __m128d ir = locus_range_inverse_pd(r);
        __m128d e = _mm_sub_pd(_mm_loadu_pd(TRIL_ARR(r) + i), r), w = _mm_loadu_pd(wa + i);
        __m128d we = _mm_mul_pd(w, e), wei = _mm_mul_pd(we, ir);
        _mm_storeu_pd(gx + i, _mm_mul_pd(dx, ir));
        _mm_storeu_pd(gy + i, _mm_mul_pd(dy, ir));
        _mm_storeu_pd(gz + i, _mm_mul_pd(dz, ir));
        _mm_storeu_pd(ev + i, e);
        _mm_storeu_pd(wh + i, _mm_add_pd(w, wei));
        vc = _mm_add_pd(vc, _mm_mul_pd(we, e));
        vq = _mm_add_pd(vq, wei);
    }
    double c, q;
    LOCUS_TRIL_HSUM(vc, c); LOCUS_TRIL_HSUM(vq, q);
    for (; i < n; i++) {
        double dx, dy, dz;
        offset_at(P, i, x, 0, fixed, &dx, &dy, &dz);
        double r = locus_range_predicted(dx, dy, dz);
        double ir = locus_range_inverse(r);
        double e = TRIL_ARR(r)[i] - r, w = wa[i];
        double we = w * e, wei = we * ir;
        gx[i] = dx * ir; gy[i] = dy * ir; gz[i] = dz * ir; ev[i] = e; wh[i] = w + wei;
        c += we * e;
        q += wei;
    }
    // (2) N = sum w g g^T, b = sum w g e
    __m128d v0 = zero, v1 = zero, v2 = zero, v3 = zero, v4 = zero, v5 = zero, u0 = zero, u1 = zero, u2 = zero;
    for (i = 0; i + 1 < n; i += 2) {
        __m128d w = _mm_loadu_pd(wa + i), e = _mm_loadu_pd(ev + i);
        __m128d gxv = _mm_loadu_pd(gx + i), gyv = _mm_loadu_pd(gy + i), gzv = _mm_loadu_pd(gz + i);
        __m128d wgx = _mm_mul_pd(w, gxv), wgy = _mm_mul_pd(w, gyv), wgz = _mm_mul_pd(w, gzv);
        v0 = _mm_add_pd(v0, _mm_mul_pd(wgx, gxv)); v1 = _mm_add_pd(v1, _mm_mul_pd(wgx, gyv));
        v2 = _mm_add_pd(v2, _mm_mul_pd(wgx, gzv)); v3 = _mm_add_pd(v3, _mm_mul_pd(wgy, gyv));
        v4 = _mm_add_pd(v4, _mm_mul_pd(wgy, gzv)); v5 = _mm_add_pd(v5, _mm_mul_pd(wgz, gzv));
        u0 = _mm_add_pd(u0, _mm_mul_pd(wgx, e)); u1 = _mm_add_pd(u1, _mm_mul_pd(wgy, e));
        u2 = _mm_add_pd(u2, _mm_mul_pd(wgz, e));
    }
    double s0, s1, s2, s3, s4, s5, b0, b1, b2;
    LOCUS_TRIL_HSUM(v0, s0); LOCUS_TRIL_HSUM(v1, s1); LOCUS_TRIL_HSUM(v2, s2);
    LOCUS_TRIL_HSUM(v3, s3); LOCUS_TRIL_HSUM(v4, s4); LOCUS_TRIL_HSUM(v5, s5);
    LOCUS_TRIL_HSUM(u0, b0); LOCUS_TRIL_HSUM(u1, b1); LOCUS_TRIL_HSUM(u2, b2);
    for (int32_t j = i; j < n; j++) {
        double w = wa[j], wgx = w * gx[j], wgy = w * gy[j], wgz = w * gz[j];
        s0 += wgx * gx[j]; s1 += wgx * gy[j]; s2 += wgx * gz[j];
        s3 += wgy * gy[j]; s4 += wgy * gz[j]; s5 += wgz * gz[j];
        b0 += wgx * ev[j]; b1 += wgy * ev[j]; b2 += wgz * ev[j];
    }
    // (3) the Hessian's sum wh g g^T
    __m128d h0 = zero, h1 = zero, h2 = zero, h3 = zero, h4 = zero, h5 = zero;
    for (i = 0; i + 1 < n; i += 2) {
        __m128d whv = _mm_loadu_pd(wh + i);
        __m128d gxv = _mm_loadu_pd(gx + i), gyv = _mm_loadu_pd(gy + i), gzv = _mm_loadu_pd(gz + i);
        __m128d hgx = _mm_mul_pd(whv, gxv), hgy = _mm_mul_pd(whv, gyv), hgz = _mm_mul_pd(whv, gzv);
        h0 = _mm_add_pd(h0, _mm_mul_pd(hgx, gxv)); h1 = _mm_add_pd(h1, _mm_mul_pd(hgx, gyv));
        h2 = _mm_add_pd(h2, _mm_mul_pd(hgx, gzv)); h3 = _mm_add_pd(h3, _mm_mul_pd(hgy, gyv));
        h4 = _mm_add_pd(h4, _mm_mul_pd(hgy, gzv)); h5 = _mm_add_pd(h5, _mm_mul_pd(hgz, gzv));
    }
    double t0, t1, t2, t3, t4, t5;
    LOCUS_TRIL_HSUM(h0, t0); LOCUS_TRIL_HSUM(h1, t1); LOCUS_TRIL_HSUM(h2, t2);
    LOCUS_TRIL_HSUM(h3, t3); LOCUS_TRIL_HSUM(h4, t4); LOCUS_TRIL_HSUM(h5, t5);
#undef LOCUS_TRIL_HSUM
    for (int32_t j = i; j < n; j++) {
        double hgx = wh[j] * gx[j], hgy = wh[j] * gy[j], hgz = wh[j] * gz[j];
        t0 += hgx * gx[j]; t1 += hgx * gy[j]; t2 += hgx * gz[j];
        t3 += hgy * gy[j]; t4 += hgy * gz[j]; t5 += hgz * gz[j];
    }
    m[0] = s0; m[1] = s1; m[2] = s2; m[3] = s3; m[4] = s4; m[5] = s5;
    h[0] = t0 - q; h[1] = t1; h[2] = t2; h[3] = t3 - q; h[4] = t4; h[5] = t5 - q;
    b[0] = b0; b[1] = b1; b[2] = b2;
    *chi2 = c;
}
#endif


// True when the symmetric p x p matrix h is positive definite and passes sym_inverse's conditioning
// test; then its inverse is in inv.
LOCUS_TRIL_INLINE int positive_definite_inverse(int32_t p, const double h[6], double min_rcond, double inv[6]) {
    if (p == 3 && !(h[0] > 0.0 && h[0] * h[3] - h[1] * h[1] > 0.0)) return 0;   // leading minors (det: sym_inverse)
    return sym_inverse_in(p, h, min_rcond, inv) == LOCUS_TRIL_OK;
}

// Newton's method on chi2 from x (in/out), with the Gauss–Newton step where the Hessian is not
// positive definite (far from the optimum, large residuals): delta = H^-1 b, else N^-1 b. Newton
// converges quadratically where Gauss–Newton's linear rate is poor (large residuals, a weak direction
// such as the vertical of a spatial fit); both stop at the same optimum. Stops when the estimated
// distance to the optimum after a step, |delta_k| rho / (1 - rho) with rho = |delta_k| / |delta_(k-1)|,
// is at most tol, or when |delta| <= tol; the normal matrix m = N and *chi2 are those of the last
// linearisation (one step before x: they differ from the values at x by O(|delta|^2)). After
// max_iterations steps without meeting the tolerance it linearises once more at x and stops
// (*converged = 0). DEGENERATE when N fails the conditioning test at a Gauss–Newton step or at the
// last linearisation.
LOCUS_TRIL_INLINE int
gauss_newton_in(tril_head *P, const double *wa, double tol, double x[3], double m[6], double *chi2,
                int32_t *iterations, int32_t *converged, const int planar, const int fixed) {
    const int32_t p = planar ? 2 : 3;
    double b[3], h[6], inv[6], hinv[6];
    double previous = INFINITY;
    int32_t it = 0;
    *converged = 0;
    for (;;) {
#if defined(__SSE2__)
        if (planar) linearize_in(P, wa, x, m, b, chi2, h, 1, fixed);
        else linearize_spatial(P, wa, x, m, b, chi2, h, fixed);
#else
        linearize_in(P, wa, x, m, b, chi2, h, planar, fixed);
#endif
        if (!finite(*chi2)) return LOCUS_TRIL_DIVERGED;
        if (it >= P->max_it) break;
        const double *k = hinv;
        if (!positive_definite_inverse(p, h, P->min_rcond, hinv)) {
            int st = sym_inverse_in(p, m, P->min_rcond, inv);
            if (st != LOCUS_TRIL_OK) return st;
            k = inv;
        }
        double d0, d1, d2;
        if (planar) {
            d0 = k[0] * b[0] + k[1] * b[1];
            d1 = k[1] * b[0] + k[3] * b[1];
            d2 = 0.0;
        } else {
            d0 = k[0] * b[0] + k[1] * b[1] + k[2] * b[2];
            d1 = k[1] * b[0] + k[3] * b[1] + k[4] * b[2];
            d2 = k[2] * b[0] + k[4] * b[1] + k[5] * b[2];
        }
        x[0] += d0; x[1] += d1; x[2] += d2;
        if (!finite(x[0]) || !finite(x[1]) || !finite(x[2])) return LOCUS_TRIL_DIVERGED;
        double step = sqrt(d0 * d0 + d1 * d1 + d2 * d2);
        it++;
        if (step <= tol || (finite(previous) && step < previous && step * step <= tol * (previous - step))) { *converged = 1; break; }
        previous = step;
    }
    *iterations = it;
    return sym_inverse_in(p, m, P->min_rcond, inv);   // the geometry test on N of the last linearisation
}

// gauss_newton_in compiled once per mode and storage (the linearisation, the 2x2 / 3x3 inverses and the
// step inline): gauss_newton_fixed, gauss_newton_scratch, called through gauss_newton.
#define LOCUS_TRIL_GAUSS_NEWTON(storage, fixed_)                                                          \
    static int gauss_newton_##storage(tril_head *P, const double *wa, double tol, double x[3], double m[6], \
                                      double *chi2, int32_t *iterations, int32_t *converged) {           \
        return P->planar ? gauss_newton_in(P, wa, tol, x, m, chi2, iterations, converged, 1, fixed_)     \
                         : gauss_newton_in(P, wa, tol, x, m, chi2, iterations, converged, 0, fixed_);    \
    }
LOCUS_TRIL_GAUSS_NEWTON(fixed, 1)
LOCUS_TRIL_GAUSS_NEWTON(scratch, 0)
#undef LOCUS_TRIL_GAUSS_NEWTON

LOCUS_TRIL_INLINE int gauss_newton(tril_head *P, const double *wa, double tol, double x[3], double m[6],
                                   double *chi2, int32_t *iterations, int32_t *converged, const int fixed) {
    return fixed ? gauss_newton_fixed(P, wa, tol, x, m, chi2, iterations, converged)
                 : gauss_newton_scratch(P, wa, tol, x, m, chi2, iterations, converged);
}

// Level k of the rejection search tries every k-subset while k <= 3 and C(n, k) <= this budget.
#define LOCUS_TRIL_EXHAUSTIVE_BUDGET 64.0
// A greedy level of the rejection search tries this many of the longest-reading ranges.
#define LOCUS_TRIL_GREEDY_CANDIDATES 4
// Candidate fits of the rejection search stop at this step size; the chosen one is then polished.
#define LOCUS_TRIL_CANDIDATE_TOLERANCE_M 1e-6
// Screening: a level fits at most this many of its candidates (lowest predicted chi2 first) ...
#define LOCUS_TRIL_FITS_PER_LEVEL 3
// ... and only those whose predicted chi2 is within this margin (chi2 units) of the level's lowest
// prediction and whose predicted cost chi2 + lambda k is below the best cost so far plus the margin.
// It absorbs the error of the one-step linear prediction.
#define LOCUS_TRIL_SCREEN_MARGIN 2.0
#define LOCUS_TRIL_SCREEN_BALL 2.0
#define LOCUS_TRIL_SEARCH_SLOTS 64

// Binomial coefficient C(n, k) as a double (k small).
static double combinations(int32_t n, int32_t k) {
    double c = 1.0;
    for (int32_t i = 0; i < k; i++) c = c * (double)(n - i) / (double)(i + 1);
    return c;
}


// Common-bias test at the all-ranges fit: every standardized residual z_i = (r_i - rhat_i) sqrt(w_i)
// within [LOCUS_TRIL_COMMON_BIAS_SHORT, LOCUS_TRIL_COMMON_BIAS_MAX] and more than half of them above
// LOCUS_TRIL_COMMON_BIAS_LONG; rh: the model distances rhat_i at that fit (`distances`).
#define LOCUS_TRIL_COMMON_BIAS_SHORT (-0.5)
#define LOCUS_TRIL_COMMON_BIAS_LONG 0.75
#define LOCUS_TRIL_COMMON_BIAS_MAX 5.0
LOCUS_TRIL_INLINE int reads_common_bias(tril_head *P, const double *rh, const int fixed) {
    int32_t long_count = 0;
    for (int32_t i = 0; i < P->n; i++) {
        double z = (TRIL_ARR(r)[i] - rh[i]) * sqrt(TRIL_ARR(w)[i]);
        if (z < LOCUS_TRIL_COMMON_BIAS_SHORT || z > LOCUS_TRIL_COMMON_BIAS_MAX) return 0;
        if (z > LOCUS_TRIL_COMMON_BIAS_LONG) long_count++;
    }
    return 2 * long_count > P->n;
}

LOCUS_TRIL_INLINE double residual_at(tril_head *P, int32_t i, const double x[3], const int planar, const int fixed) {
    double dx, dy, dz;
    offset_at(P, i, x, planar, fixed, &dx, &dy, &dz);
    return TRIL_ARR(r)[i] - locus_range_predicted(dx, dy, dz);
}

// The rejection search's linearisation at a point x: per range i the Jacobian row g_i = d rhat_i / dp
// (unit line of sight; planar: gz = 0), the residual e_i = r_i - rhat_i(x) and 1 / rhat_i for all n
// ranges, with each range's terms of the normal equations (w g g^T, w g e, w e^2); and their sums over
// all n ranges: N = sum w g g^T, b = sum w g e, c = sum w e^2 (chi2 at x), and the
// screen's slack scale beta^2 / 2 sqrt(sum w / rhat^2) (see `screen`).
// The per-range terms are in the problem's full_row (n entries): g_i, e_i, 1 / rhat_i and the terms.
typedef struct {
    double n[6], b[3], c;
    double slack_scale;                   // beta^2 / 2 * sqrt(sum w_i / rhat_i^2), 1 / m
} tril_linearization;

LOCUS_TRIL_INLINE void
linearize_rows(tril_head *P, const double x[3], const double *rh, const double *ir,
               tril_linearization *L, const int planar, const int fixed) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, b0 = 0, b1 = 0, b2 = 0, c = 0, k = 0;
    tril_row_terms *restrict row = TRIL_ARR(full_row);
    for (int32_t i = 0; i < P->n; i++) {
        double dx, dy, dz;
        offset_at(P, i, x, planar, fixed, &dx, &dy, &dz);
        double gx = dx * ir[i], gy = dy * ir[i];
        double gz = planar ? 0.0 : dz * ir[i];
        double e = TRIL_ARR(r)[i] - rh[i];
        double w = TRIL_ARR(w)[i], wgx = w * gx, wgy = w * gy, wgz = w * gz;
        tril_row_terms *t = &row[i];
        t->gx = gx; t->gy = gy; t->gz = gz; t->e = e; t->ir = ir[i];
        t->nn[0] = wgx * gx; t->nn[1] = wgx * gy; t->nn[2] = wgx * gz;
        t->nn[3] = wgy * gy; t->nn[4] = wgy * gz; t->nn[5] = wgz * gz;
        t->bb[0] = wgx * e; t->bb[1] = wgy * e; t->bb[2] = wgz * e;
        t->cc = w * e * e;
        s0 += t->nn[0]; s1 += t->nn[1]; s2 += t->nn[2]; s3 += t->nn[3]; s4 += t->nn[4]; s5 += t->nn[5];
        b0 += t->bb[0]; b1 += t->bb[1]; b2 += t->bb[2];
        c += t->cc;
        k += w * ir[i] * ir[i];
    }
    L->n[0] = s0; L->n[1] = s1; L->n[2] = s2; L->n[3] = s3; L->n[4] = s4; L->n[5] = s5;
    L->b[0] = b0; L->b[1] = b1; L->b[2] = b2;
    L->c = c;
    L->slack_scale = 0.5 * LOCUS_TRIL_SCREEN_BALL * LOCUS_TRIL_SCREEN_BALL * sqrt(k);
}

// Screens the exclusion of E = {excl[0], ..., excl[t-1]} with one linearised Gauss–Newton step from
// L's point x over L's ranges minus E, by downdating L's normal equations:
//   N_E = N - sum_E w_j g_j g_j^T,  b_E = b - sum_E w_j g_j e_j,  c_E = c - sum_E w_j e_j^2,
//   delta = N_E^-1 b_E (m),  chi2_lin = c_E - b_E . delta (the linearised chi2's minimum).
// Within the ball |y - x| <= beta |delta| (beta = LOCUS_TRIL_SCREEN_BALL) each model range departs
// from its linearisation by 0 <= eta_i <= beta^2 |delta|^2 / (2 rhat_i) (rhat is convex, with
// curvature at most 1 / rhat across the line of sight), so by the triangle inequality
//   chi2(y) >= (sqrt(chi2_lin) - beta^2 |delta|^2 / 2 * sqrt(sum w_i / rhat_i^2))_+^2 = *bound
// for every y in the ball (the sum over L's ranges, an upper bound of that over the kept ones).
// Returns 1 with *bound and delta when N_E passes the conditioning test and every excluded range can
// still read long after the step (e_j - g_j . delta + beta^2 |delta|^2 / (2 rhat_j) > 0: NLOS only
// lengthens a range), else 0. O(t) plus one p x p solve.
LOCUS_TRIL_INLINE int
screen(tril_head *P, const tril_linearization *L, const int32_t *excl, int32_t t, double delta[3],
       double *bound, const int planar, const int fixed) {
    double d0, d1, d2, lin;
    if (planar) {
        double m0 = L->n[0], m1 = L->n[1], m3 = L->n[3], b0 = L->b[0], b1 = L->b[1], c = L->c;
        for (int32_t q = 0; q < t; q++) {
            const tril_row_terms *r = &TRIL_ARR(full_row)[excl[q]];
            m0 -= r->nn[0]; m1 -= r->nn[1]; m3 -= r->nn[3];
            b0 -= r->bb[0]; b1 -= r->bb[1];
            c -= r->cc;
        }
        double det = m0 * m3 - m1 * m1;
        if (!well_conditioned_2x2(m0 + m3, det, P->min_rcond)) return 0;
        double id = 1.0 / det;
        d0 = (m3 * b0 - m1 * b1) * id;
        d1 = (m0 * b1 - m1 * b0) * id;
        d2 = 0.0;
        lin = c - (b0 * d0 + b1 * d1);
    } else {
        double m[6] = {L->n[0], L->n[1], L->n[2], L->n[3], L->n[4], L->n[5]};
        double b0 = L->b[0], b1 = L->b[1], b2 = L->b[2], c = L->c;
        for (int32_t q = 0; q < t; q++) {
            const tril_row_terms *r = &TRIL_ARR(full_row)[excl[q]];
            for (int u = 0; u < 6; u++) m[u] -= r->nn[u];
            b0 -= r->bb[0]; b1 -= r->bb[1]; b2 -= r->bb[2];
            c -= r->cc;
        }
        double inv[6];
        if (sym_inverse_in(3, m, P->min_rcond, inv) != LOCUS_TRIL_OK) return 0;
        d0 = inv[0] * b0 + inv[1] * b1 + inv[2] * b2;
        d1 = inv[1] * b0 + inv[3] * b1 + inv[4] * b2;
        d2 = inv[2] * b0 + inv[4] * b1 + inv[5] * b2;
        lin = c - (b0 * d0 + b1 * d1 + b2 * d2);
    }
    double step2 = d0 * d0 + d1 * d1 + d2 * d2;
    double reach = 0.5 * LOCUS_TRIL_SCREEN_BALL * LOCUS_TRIL_SCREEN_BALL * step2;
    for (int32_t q = 0; q < t; q++) {
        const tril_row_terms *r = &TRIL_ARR(full_row)[excl[q]];
        if (!(r->e - (r->gx * d0 + r->gy * d1 + r->gz * d2) + reach * r->ir > 0.0)) return 0;
    }
    double root = sqrt(lin > 0.0 ? lin : 0.0) - L->slack_scale * step2;
    *bound = root > 0.0 ? root * root : 0.0;
    if (!finite(*bound)) return 0;
    delta[0] = d0; delta[1] = d1; delta[2] = d2;
    return 1;
}

// The search's active weights wa (wa_i = w_i for a range in the fit, 0 for one left out) hold w between
// fits: a fit without the `count` ranges listed in excl zeroes their entries (`leave_out`) and puts them
// back afterwards (`put_back`), O(count) instead of a copy of all n.
static inline void leave_out(const int32_t *excl, int32_t count, double *wa) {
    for (int32_t q = 0; q < count; q++) wa[excl[q]] = 0.0;
}

LOCUS_TRIL_INLINE void put_back(tril_head *P, const int32_t *excl, int32_t count, double *wa, const int fixed) {
    const double *w = TRIL_ARR(w);
    for (int32_t q = 0; q < count; q++) wa[excl[q]] = w[excl[q]];
}

static void copy_set(const int32_t *from, int32_t count, int32_t *to) {
    for (int32_t q = 0; q < count; q++) to[q] = from[q];
}

// The penalised subset search (file header, step 3). In: x, m, *chi2 of the all-ranges fit and its model
// distances rh, ir (`distances`). Out: the chosen fit (unchanged when no set wins), its excluded set as
// *rejected_count indices in TRIL_ARR(best_set); *solves counts the full fits. A set is kept as a list of
// indices (any n): a candidate of level k is the level's base set (empty on an exhaustive level, level
// k - 1's best on a greedy one) plus t picks.
LOCUS_TRIL_INLINE int
search_rejections(tril_head *P, double lambda, int32_t max_rejections, double x[3], const double *rh,
                  const double *ir, double m[6], double *chi2, int32_t *iterations, int32_t *converged,
                  int32_t *rejected_count, int32_t *solves, const int planar, const int fixed) {
    int32_t n = P->n;
    int32_t kmax = max_rejections < n - (planar ? 2 : 3) - 1 ? max_rejections : n - (planar ? 2 : 3) - 1;
    double best_cost = *chi2;
    double x_full[3] = {x[0], x[1], x[2]};
    double x_level[3] = {x[0], x[1], x[2]};   // a greedy level starts at the previous level's best fit
    const double candidate_tol = max_of(P->tol, LOCUS_TRIL_CANDIDATE_TOLERANCE_M);
    // cand_set holds the level's base set as its prefix (copied once per level); a candidate writes only its
    // picks after it.
    int32_t *level_set = TRIL_ARR(level_set), *cand_set = TRIL_ARR(cand_set);
    int32_t level_count = 0, base_count = 0;
    int level_has_best = 1;
    tril_linearization full = {{0, 0, 0, 0, 0, 0}, {0, 0, 0}, 0.0, 0.0};
    linearize_rows(P, x_full, rh, ir, &full, planar, fixed);
    double *wa = TRIL_ARR(wa);   // active weights of a candidate fit (0: left out); w between fits
    for (int32_t i = 0; i < n; i++) wa[i] = TRIL_ARR(w)[i];
    *rejected_count = 0;
    for (int32_t k = 1; k <= kmax; k++) {
        if (best_cost <= lambda * k) break;   // every set of k or more ranges costs at least lambda k
        int exhaustive = k <= 3 && combinations(n, k) <= LOCUS_TRIL_EXHAUSTIVE_BUDGET;
        if (!exhaustive && !level_has_best) break;
        base_count = exhaustive ? 0 : level_count;
        copy_set(level_set, base_count, cand_set);
        int32_t t = exhaustive ? k : 1;
        const double *x_start = exhaustive ? x_full : x_level;
        int32_t *elig = TRIL_ARR(elig), e_count = 0;
        if (exhaustive) {
            for (int32_t i = 0; i < n; i++) elig[e_count++] = i;
        } else {
            // Greedy: the LOCUS_TRIL_GREEDY_CANDIDATES longest-reading ranges (largest positive
            // e_i / sigma_i at the level's start), in index order.
            double score[LOCUS_TRIL_GREEDY_CANDIDATES];
            uint8_t *in_base = TRIL_ARR(in_base);
            for (int32_t i = 0; i < n; i++) in_base[i] = 0;
            for (int32_t q = 0; q < base_count; q++) in_base[cand_set[q]] = 1;
            for (int32_t i = 0; i < n; i++) {
                if (in_base[i]) continue;
                double z = residual_at(P, i, x_level, planar, fixed) * sqrt(TRIL_ARR(w)[i]);
                if (!(z > 0.0)) continue;
                int32_t slot = e_count < LOCUS_TRIL_GREEDY_CANDIDATES ? e_count++ : -1;
                if (slot < 0) {   // replace the weakest kept candidate when this one reads longer
                    int32_t weakest = 0;
                    for (int32_t q = 1; q < e_count; q++) if (score[q] < score[weakest]) weakest = q;
                    if (!(z > score[weakest])) continue;
                    slot = weakest;
                }
                elig[slot] = i; score[slot] = z;
            }
            for (int32_t a = 1; a < e_count; a++) {   // index order, so ties resolve as in the LAPACKE path
                int32_t ei = elig[a]; double es = score[a]; int32_t b = a;
                while (b > 0 && elig[b - 1] > ei) { elig[b] = elig[b - 1]; score[b] = score[b - 1]; b--; }
                elig[b] = ei; score[b] = es;
            }
        }
        if (e_count < t) break;
        // Screen every t-combination (lexicographic), recording each one's lower bound (those that
        // cannot be fitted below are left out).
        int continues = k < kmax && !(k + 1 <= 3 && combinations(n, k + 1) <= LOCUS_TRIL_EXHAUSTIVE_BUDGET);
        double bound[LOCUS_TRIL_SEARCH_SLOTS], start[LOCUS_TRIL_SEARCH_SLOTS][3];
        int32_t cand[LOCUS_TRIL_SEARCH_SLOTS][3];   // a candidate's picks (the base set added)
        int32_t count = 0;
        int32_t c[3] = {0, 1, 2};
        for (;;) {
            int32_t sel[3] = {elig[c[0]], t > 1 ? elig[c[1]] : 0, t > 2 ? elig[c[2]] : 0};
            // A greedy level's few extensions are all fitted, from the level's point: far from the
            // all-ranges fit (several outliers left out) its linearisation is no guide.
            double d[3] = {0, 0, 0}, lb = 0.0;
            if ((!exhaustive || screen(P, &full, sel, t, d, &lb, planar, fixed)) &&
                (continues || lb + lambda * k < best_cost)) {
                cand[count][0] = sel[0]; cand[count][1] = sel[1]; cand[count][2] = sel[2];
                bound[count] = lb;
                start[count][0] = x_start[0] + d[0]; start[count][1] = x_start[1] + d[1];
                start[count][2] = x_start[2] + d[2];
                count++;
            }
            int32_t q = t - 1;
            while (q >= 0 && c[q] == e_count - t + q) q--;
            if (q < 0) break;
            c[q]++;
            for (int32_t r = q + 1; r < t; r++) c[r] = c[r - 1] + 1;
        }
        // Fit the candidates in increasing order of their bound (ties: enumeration order) until the
        // bound proves that none left can win: bound + lambda k >= best cost; when a greedy level
        // follows, it needs this level's best chi2, so until bound >= the level's best chi2.
        double level_best = INFINITY, level_x[3] = {0, 0, 0};
        int32_t level_found = 0;   // entries of this level's best set, in level_set (base set + picks)
        for (;;) {
            // The first untaken candidate of least bound (a taken one's bound is +inf; every recorded
            // bound is finite); branch-free select, the comparisons are data-dependent.
            int32_t q = -1;
            double least = INFINITY;
            for (int32_t r = 0; r < count; r++) {
                int lower = bound[r] < least;
                q = lower ? r : q;
                least = lower ? bound[r] : least;
            }
            if (q < 0) break;
            if (continues ? !(bound[q] < level_best) : !(bound[q] + lambda * k < best_cost)) break;
            // The candidate's set: the base set, then its picks.
            copy_set(cand[q], t, cand_set + base_count);
            const int32_t set_count = base_count + t;
            bound[q] = INFINITY;   // taken
            leave_out(cand_set, set_count, wa);
            double xj[3] = {start[q][0], start[q][1], start[q][2]}, mj[6], cj;
            int32_t itj = 0, convj = 0;
            (*solves)++;
            int stj = gauss_newton(P, wa, candidate_tol, xj, mj, &cj, &itj, &convj, fixed);
            put_back(P, cand_set, set_count, wa, fixed);
            if (stj != LOCUS_TRIL_OK || !(cj < level_best)) continue;
            int long_reading = 1;
            for (int32_t u = 0; u < set_count && long_reading; u++)
                if (!(residual_at(P, cand_set[u], xj, planar, fixed) > 0.0))
                    long_reading = 0;   // NLOS only lengthens
            if (!long_reading) continue;
            level_best = cj;
            copy_set(cand_set, set_count, level_set);
            level_found = set_count;
            level_x[0] = xj[0]; level_x[1] = xj[1]; level_x[2] = xj[2];
            if (cj + lambda * k < best_cost) {
                best_cost = cj + lambda * k;
                copy_set(cand_set, set_count, TRIL_ARR(best_set));
                *rejected_count = set_count;
                x[0] = xj[0]; x[1] = xj[1]; x[2] = xj[2];
                for (int r = 0; r < 6; r++) m[r] = mj[r];
                *chi2 = cj; *iterations = itj; *converged = convj;
            }
        }
        level_has_best = level_best < INFINITY;
        level_count = level_found;
        if (level_has_best) { x_level[0] = level_x[0]; x_level[1] = level_x[1]; x_level[2] = level_x[2]; }
    }
    if (*rejected_count != 0) {   // polish the chosen fit to the full tolerance
        leave_out(TRIL_ARR(best_set), *rejected_count, wa);
        (*solves)++;
        return gauss_newton(P, wa, P->tol, x, m, chi2, iterations, converged, fixed);
    }
    return LOCUS_TRIL_OK;
}

// The reflection's layouts: the locators' scatter across their principal axis at most this share of the scatter
// along it (variance ratio 0.1: an RMS spread across under a third of that along; a corridor 60 x 3 m with a row
// along each wall: 0.007; a 20 x 12 m room with its locators around the walls: ~0.4).
#define LOCUS_TRIL_REFLECTION_SPREAD 0.1

// Step 3's second start (planar): with locators near one line (a corridor: two rows of locators along its
// walls), the position and its reflection across that line fit their ranges alike but for the few
// locators off the line, and an NLOS range among those can put the seed, and so the all-ranges fit and the
// whole search, in the reflection's basin (the search then rejects the very ranges that tell the two
// apart). So when the search ran and the locators lie near one line (LOCUS_TRIL_REFLECTION_SPREAD), the
// reflection x' of the all-ranges fit x0 across their principal axis (through their centroid, the origin
// here) is tried too: when its all-ranges chi2 is within 4 chi2(x0) + the gate, the search runs again from
// x' (or, when x' already passes the gate, the all-ranges fit from it), and the lower penalised cost
// chi2 + lambda |E| wins (the first on a tie). The all-ranges fit is not restarted from x': the NLOS range
// that pulled it across pulls it back. When the reflection wins, x, m, chi2, the convergence flag and the
// rejected set are replaced; either way the search's arrays rh, ir may hold the reflection's distances (the
// caller recomputes them).
// 0 when the first fit stands. Returns LOCUS_TRIL_OK or the second search's error.
LOCUS_TRIL_INLINE int
reflected_search(tril_head *P, const locus_tril_options *o, const double x0[3], double chi2_0, double gate, double x[3],
                 double m[6], double *chi2, int32_t *iterations, int32_t *converged, int32_t *rejected_count,
                 int32_t *solves, const int fixed) {
    const int planar = 1;
    const int32_t n = P->n;
    if (*rejected_count > LOCUS_TRIL_MAX_LOCATORS) return LOCUS_TRIL_OK;
    double sxx = 0.0, sxy = 0.0, syy = 0.0;
    for (int32_t i = 0; i < n; i++) {
        double lx = TRIL_ARR(lx)[i], ly = TRIL_ARR(ly)[i];
        sxx += lx * lx; sxy += lx * ly; syy += ly * ly;
    }
    // The unit normal of the principal axis: the eigenvector of the smaller eigenvalue of the scatter.
    double half = 0.5 * (sxx + syy), disc = sqrt(max_of(0.0, 0.25 * (sxx - syy) * (sxx - syy) + sxy * sxy));
    double lmin = half - disc;
    double nx = sxy, ny = lmin - sxx;
    if (fabs(nx) + fabs(ny) <= 1e-12 * (sxx + syy)) { nx = lmin - syy; ny = sxy; }
    double norm = sqrt(nx * nx + ny * ny);
    if (!(norm > 0.0) || !(disc > 1e-12 * (sxx + syy))) return LOCUS_TRIL_OK;   // no principal axis (isotropic scatter)
    // Only locators near one line: the scatter across the axis at most LOCUS_TRIL_REFLECTION_SPREAD of that along it
    // (a corridor's two rows; a room's locators around its walls are not, and their reflections read metres off).
    if (!(lmin <= LOCUS_TRIL_REFLECTION_SPREAD * (half + disc))) return LOCUS_TRIL_OK;
    nx /= norm; ny /= norm;
    double d = x0[0] * nx + x0[1] * ny;
    double xr[3] = {x0[0] - 2.0 * d * nx, x0[1] - 2.0 * d * ny, 0.0};
    double c = 0.0;
    for (int32_t i = 0; i < n; i++) {
        double e = residual_at(P, i, xr, planar, fixed);
        c += TRIL_ARR(w)[i] * e * e;
    }
    if (!(c < 4.0 * chi2_0 + gate)) return LOCUS_TRIL_OK;
    // The search from x' itself: with all ranges the fit slides back to x0 (the NLOS range that put it there
    // still pulls), so x' is the search's starting point and each candidate set is fitted from there.
    double mr[6] = {0, 0, 0, 0, 0, 0}, chi2_r = c;
    int32_t conv_r = 0;
    // The first search's answer, kept while the second runs (it reuses the search's arrays).
    int32_t kept[LOCUS_TRIL_MAX_LOCATORS];
    const int32_t k_a = *rejected_count;
    for (int32_t q = 0; q < k_a; q++) kept[q] = TRIL_ARR(best_set)[q];
    int32_t k_r = 0;
    if (chi2_r > gate) {
        double *rh = TRIL_ARR(rh), *ir = TRIL_ARR(ir);
        distances(P, xr, rh, ir, planar, fixed);
        int st = search_rejections(P, o->rejection_penalty, o->max_rejections, xr, rh, ir, mr, &chi2_r, iterations,
                                   &conv_r, &k_r, solves, planar, fixed);
        if (st != LOCUS_TRIL_OK) return st;
    } else {
        (*solves)++;
        if (gauss_newton(P, TRIL_ARR(w), P->tol, xr, mr, &chi2_r, iterations, &conv_r, fixed) != LOCUS_TRIL_OK) return LOCUS_TRIL_OK;
    }
    if (chi2_r + o->rejection_penalty * k_r < *chi2 + o->rejection_penalty * k_a) {
        x[0] = xr[0]; x[1] = xr[1]; x[2] = xr[2];
        for (int j = 0; j < 6; j++) m[j] = mr[j];
        *chi2 = chi2_r;
        *rejected_count = k_r;
        *converged = conv_r;
        return LOCUS_TRIL_OK;
    }
    for (int32_t q = 0; q < k_a; q++) TRIL_ARR(best_set)[q] = kept[q];
    return LOCUS_TRIL_OK;
}

// Steps 1-4 of the file header for a set-up problem (locators centred, weights), compiled once per
// mode: the seed, the linearisations, the search and the final pass each keep only their own mode's
// arithmetic (a branch on the mode inside their loops also kept the other mode's values live).
LOCUS_TRIL_INLINE int
solve_in(tril_head *P, const locus_tril_options *o, int32_t mode, locus_tril_result *res,
         const int planar, const int fixed) {
    uint8_t *active = TRIL_ARR(active);
    const int32_t p = planar ? 2 : 3;
    int st;
    double x[3];
    st = seed(P, active, x, planar, fixed);
    if (st != LOCUS_TRIL_OK) return st;
    double m[6], chi2;
    int32_t iterations = 0, converged = 0, solves = 1;
    st = gauss_newton(P, TRIL_ARR(w), P->tol, x, m, &chi2, &iterations, &converged, fixed);
    if (st != LOCUS_TRIL_OK) return st;
    int32_t used = P->n;
    int32_t rejected_count = 0;
    // The model distances at the all-ranges fit, shared by the common-bias test, the search's
    // linearisation and (when no range is rejected) the final pass.
    double *rh = TRIL_ARR(rh), *ir = TRIL_ARR(ir);
    distances(P, x, rh, ir, planar, fixed);
    const double gate = locus_tril_chi_square_995(P->n - p);
    if (o->robust && chi2 > gate && !(o->common_bias_guard && reads_common_bias(P, rh, fixed))) {
        const double x0[3] = {x[0], x[1], x[2]}, chi2_0 = chi2;
        st = search_rejections(P, o->rejection_penalty, o->max_rejections, x, rh, ir, m, &chi2, &iterations,
                               &converged, &rejected_count, &solves, planar, fixed);
        if (st != LOCUS_TRIL_OK) return st;
        if (planar) {
            st = reflected_search(P, o, x0, chi2_0, gate, x, m, &chi2, &iterations, &converged, &rejected_count,
                                  &solves, fixed);
            if (st != LOCUS_TRIL_OK) return st;
        }
        used = P->n - rejected_count;
        for (int32_t q = 0; q < rejected_count; q++) active[TRIL_ARR(best_set)[q]] = 0;
        // The chosen fit's distances: x moved, or the reflection's search wrote its own.
        if (rejected_count != 0 || planar) distances(P, x, rh, ir, planar, fixed);
    }
    int32_t dof = used - p;
    double factor = dof > 0 ? max_of(1.0, chi2 / dof) : 1.0;
    double px = x[0] + P->cx, py = x[1] + P->cy, pz = planar ? o->tag_height_m : x[2] + P->cz;
    // One pass over the used ranges at the solution: the normal matrix N = J^T W J (covariance), the
    // unit line-of-sight Gram H^T H (DOP) and the residual SSE.
    double g[6] = {0, 0, 0, 0, 0, 0}, nw[6] = {0, 0, 0, 0, 0, 0}, sse = 0.0;
    for (int32_t i = 0; i < P->n; i++) {
        if (!active[i]) continue;
        double e = TRIL_ARR(r)[i] - rh[i];
        sse += e * e;
        double dx, dy, dz;
        offset_at(P, i, x, planar, fixed, &dx, &dy, &dz);
        double ux = dx * ir[i], uy = dy * ir[i], uz = dz * ir[i];
        g[0] += ux * ux; g[1] += ux * uy; g[3] += uy * uy;
        double w = TRIL_ARR(w)[i];
        nw[0] += w * ux * ux; nw[1] += w * ux * uy; nw[3] += w * uy * uy;
        if (!planar) {
            g[2] += ux * uz; g[4] += uy * uz; g[5] += uz * uz;
            nw[2] += w * ux * uz; nw[4] += w * uy * uz; nw[5] += w * uz * uz;
        }
    }
    double cov[6];
    st = sym_inverse_in(p, nw, P->min_rcond, cov);
    if (st != LOCUS_TRIL_OK) return st;
    double q[6];
    st = sym_inverse_in(p, g, P->min_rcond, q);
    if (st != LOCUS_TRIL_OK) return st;
    double h2 = q[0] + q[3], v2 = planar ? 0.0 : q[5];
    double pdop = sqrt(h2 + v2);
    if (!(h2 >= 0.0) || !(v2 >= 0.0) || !(pdop <= o->max_dop)) return LOCUS_TRIL_DEGENERATE;
    double hdop = sqrt(h2), vdop = sqrt(v2);
    res->x = px; res->y = py; res->z = pz;
    res->cov_xx = cov[0] * factor; res->cov_xy = cov[1] * factor; res->cov_yy = cov[3] * factor;
    res->cov_xz = cov[2] * factor; res->cov_yz = cov[4] * factor; res->cov_zz = cov[5] * factor;
    res->hdop = hdop; res->vdop = vdop; res->pdop = pdop;
    res->residual_rms_m = sqrt(sse / used);
    res->chi_square = chi2;
    uint64_t rejected_mask = 0;   // the indices below 64 (`used` counts them all)
    for (int32_t q = 0; q < rejected_count; q++)
        if (TRIL_ARR(best_set)[q] < 64) rejected_mask |= (uint64_t)1 << TRIL_ARR(best_set)[q];
    res->rejected_mask = rejected_mask;
    res->mode = mode;
    res->used = used;
    res->iterations = iterations;
    res->dof = dof;
    res->solves = solves;
    res->converged = converged;
    return LOCUS_TRIL_OK;
}

size_t locus_tril_scratch_doubles(int32_t n) { return n > 0 ? LOCUS_TRIL_SCRATCH_DOUBLES(n) : 0; }

// Carves S's per-range arrays from `scratch` (LOCUS_TRIL_SCRATCH_DOUBLES(n) doubles): 15 arrays of n
// doubles, the search's rows (15 n doubles), index lists of n int32 (5 slots, one spare) and 2 flag
// arrays of n bytes (the lists and flags take at most 3 n doubles: 33 n in all, plus one for the rounding).
static void carve(tril_scratch *S, double *scratch, int32_t n) {
    const size_t m = (size_t)n;
    S->lx = scratch; S->ly = scratch + m; S->lz = scratch + 2 * m; S->r = scratch + 3 * m; S->w = scratch + 4 * m;
    S->seed_s = scratch + 5 * m; S->seed_q = scratch + 6 * m;
    S->lin_gx = scratch + 7 * m; S->lin_gy = scratch + 8 * m; S->lin_gz = scratch + 9 * m;
    S->lin_e = scratch + 10 * m; S->lin_wh = scratch + 11 * m;
    S->rh = scratch + 12 * m; S->ir = scratch + 13 * m; S->wa = scratch + 14 * m;
    S->full_row = (tril_row_terms *)(scratch + 15 * m);
    int32_t *lists = (int32_t *)(scratch + 30 * m);
    S->elig = lists; S->cand_set = lists + 2 * n;
    S->level_set = lists + 3 * n; S->best_set = lists + 4 * n;
    S->active = (uint8_t *)(lists + 5 * n);
    S->in_base = S->active + n;
}

// Both entries after their storage checks: validates, sets up the problem P in the storage `fixed` says
// (tril_fixed; or tril_scratch, carved from `scratch`) and solves it (used_out: see the header).
LOCUS_TRIL_INLINE int
trilaterate_in(const double *xyz, const double *ranges_m, int32_t n, const locus_tril_options *o, tril_head *P,
               double *scratch, uint8_t *used_out, locus_tril_result *res, const int fixed) {
    if (xyz == NULL || ranges_m == NULL || o == NULL || res == NULL) return LOCUS_TRIL_BAD_ARGUMENT;
    if (!(o->sigma0_m > 0.0) || !finite(o->sigma0_m) || !(o->sigma_slope >= 0.0) || !finite(o->sigma_slope) ||
        !(o->tolerance_m > 0.0) || o->max_iterations < 1 || !(o->min_rcond > 0.0) || !(o->max_dop > 0.0) ||
        o->max_rejections < 0 || !(o->rejection_penalty > 0.0) ||
        !finite(o->tag_height_m))
        return LOCUS_TRIL_BAD_ARGUMENT;
    for (int32_t i = 0; i < n; i++) {
        if (!finite(xyz[3 * i]) || !finite(xyz[3 * i + 1]) || !finite(xyz[3 * i + 2])) return LOCUS_TRIL_BAD_ARGUMENT;
        if (!finite(ranges_m[i]) || ranges_m[i] < 0.0) return LOCUS_TRIL_INVALID_RANGE;
    }
    int32_t mode;
    int st = locus_tril_choose_mode(xyz, n, o->mode, o->planar_height_ratio, &mode);
    if (st != LOCUS_TRIL_OK) return st;
    P->planar = mode == LOCUS_TRIL_MODE_PLANAR;
    P->p = P->planar ? 2 : 3;
    P->n = n;
    if (n < P->p + 1) return LOCUS_TRIL_TOO_FEW_RANGES;
    if (!fixed) carve((tril_scratch *)P, scratch, n);
    P->tol = o->tolerance_m;
    P->min_rcond = o->min_rcond;
    P->max_it = o->max_iterations;
    double cx = 0, cy = 0, cz = 0;
    for (int32_t i = 0; i < n; i++) { cx += xyz[3 * i]; cy += xyz[3 * i + 1]; cz += xyz[3 * i + 2]; }
    cx /= n; cy /= n; cz /= n;
    if (P->planar) cz = 0.0;
    P->cx = cx; P->cy = cy; P->cz = cz;
    {
        double *restrict lx = TRIL_ARR(lx), *restrict ly = TRIL_ARR(ly), *restrict lz = TRIL_ARR(lz);
        double *restrict r = TRIL_ARR(r), *restrict w = TRIL_ARR(w);
        uint8_t *restrict active = TRIL_ARR(active);
        const int planar = P->planar;
        const double h = o->tag_height_m, sigma0 = o->sigma0_m, slope = o->sigma_slope;
        for (int32_t i = 0; i < n; i++) {
            lx[i] = xyz[3 * i] - cx;
            ly[i] = xyz[3 * i + 1] - cy;
            lz[i] = planar ? h - xyz[3 * i + 2] : xyz[3 * i + 2] - cz;
            r[i] = ranges_m[i];
            double sg = sigma0 + slope * ranges_m[i];
            w[i] = 1.0 / (sg * sg);
            active[i] = 1;
        }
    }
    st = P->planar ? solve_in(P, o, mode, res, 1, fixed) : solve_in(P, o, mode, res, 0, fixed);
    if (st == LOCUS_TRIL_OK && used_out != NULL) {
        const uint8_t *active = TRIL_ARR(active);
        for (int32_t i = 0; i < n; i++) used_out[i] = active[i];
    }
    return st;
}

int locus_trilaterate_scratch(const double *xyz, const double *ranges_m, int32_t n, const locus_tril_options *o,
                              double *scratch, size_t scratch_doubles, uint8_t *used_out, locus_tril_result *res) {
    if (n < 0 || (n > 0 && (scratch == NULL || scratch_doubles < LOCUS_TRIL_SCRATCH_DOUBLES(n))))
        return LOCUS_TRIL_BAD_ARGUMENT;
    tril_scratch S;
    return trilaterate_in(xyz, ranges_m, n, o, &S.h, scratch, used_out, res, 0);
}

int locus_trilaterate(const double *xyz, const double *ranges_m, int32_t n,
                      const locus_tril_options *o, locus_tril_result *res) {
    if (n < 0 || n > LOCUS_TRIL_MAX_LOCATORS) return LOCUS_TRIL_BAD_ARGUMENT;
    tril_fixed F;   // on the stack: no allocation
    return trilaterate_in(xyz, ranges_m, n, o, &F.h, NULL, NULL, res, 1);
}

int locus_tril_model(const double *xyz, int32_t n, int32_t mode, double tag_height_m,
                     double x, double y, double z, double *ranges_m, double *jacobian, int32_t ld) {
    if (xyz == NULL || n < 0 || (jacobian != NULL && ld < n)) return LOCUS_TRIL_BAD_ARGUMENT;
    if (mode != LOCUS_TRIL_MODE_PLANAR && mode != LOCUS_TRIL_MODE_SPATIAL) return LOCUS_TRIL_BAD_ARGUMENT;
    int planar = mode == LOCUS_TRIL_MODE_PLANAR;
    for (int32_t i = 0; i < n; i++) {
        double d[3];
        locus_range_offset(x, y, planar ? tag_height_m : z, xyz + 3 * i, d);
        double rh = locus_range_predicted(d[0], d[1], d[2]);
        if (ranges_m != NULL) ranges_m[i] = rh;
        if (jacobian != NULL) {
            double ir = locus_range_inverse(rh);
            jacobian[i] = d[0] * ir;
            jacobian[i + ld] = d[1] * ir;
            if (!planar) jacobian[i + 2 * ld] = d[2] * ir;
        }
    }
    return LOCUS_TRIL_OK;
}

int locus_tril_dop(const double *xyz, int32_t n, uint64_t active_mask, int32_t mode,
                   double tag_height_m, double x, double y, double z, double min_rcond,
                   double max_dop, double *hdop, double *vdop, double *pdop) {
    if (xyz == NULL || hdop == NULL || vdop == NULL || pdop == NULL || n < 0) return LOCUS_TRIL_BAD_ARGUMENT;
    if (mode != LOCUS_TRIL_MODE_PLANAR && mode != LOCUS_TRIL_MODE_SPATIAL) return LOCUS_TRIL_BAD_ARGUMENT;
    int planar = mode == LOCUS_TRIL_MODE_PLANAR;
    int32_t p = planar ? 2 : 3;
    double m[6] = {0, 0, 0, 0, 0, 0};
    int32_t count = 0;
    for (int32_t i = 0; i < n; i++) {
        if (i < 64 && !((active_mask >> i) & 1u)) continue;
        double d[3], u[3];
        locus_range_offset(x, y, planar ? tag_height_m : z, xyz + 3 * i, d);
        double rh = locus_range_predicted(d[0], d[1], d[2]);
        if (!(rh > 0.0)) continue;
        locus_range_unit(d[0], d[1], d[2], rh, u);
        double gx = u[0], gy = u[1], gz = u[2];
        m[0] += gx * gx; m[1] += gx * gy; m[3] += gy * gy;
        if (!planar) { m[2] += gx * gz; m[4] += gy * gz; m[5] += gz * gz; }
        count++;
    }
    if (count < p) return LOCUS_TRIL_DEGENERATE;
    double q[6];
    int st = sym_inverse(p, m, min_rcond, q);
    if (st != LOCUS_TRIL_OK) return st;
    double h2 = q[0] + q[3], v2 = planar ? 0.0 : q[5];
    if (!(h2 >= 0.0) || !(v2 >= 0.0)) return LOCUS_TRIL_DEGENERATE;
    double pd = sqrt(h2 + v2);
    if (!(pd <= max_dop)) return LOCUS_TRIL_DEGENERATE;
    *hdop = sqrt(h2); *vdop = sqrt(v2); *pdop = pd;
    return LOCUS_TRIL_OK;
}
