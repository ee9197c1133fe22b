// Trilateration kernels: linearised seed, Newton / Gauss–Newton weighted least squares, NLOS rejection
// (chi-square gate, then a penalised search over subsets of long-reading ranges, screened by one
// linearised step each), DOP. No allocation, no BLAS/LAPACK: up to LOCUS_TRIL_MAX_LOCATORS locators
// on the stack (`locus_trilaterate`), any number in a caller-owned scratch block
// (`locus_trilaterate_scratch`) -- the same code. Every function returns an int status
// (LOCUS_TRIL_OK = 0). Units: metres.
#ifndef LOCUS_TRILATERATION_H
#define LOCUS_TRILATERATION_H

#include <stddef.h>
#include <stdint.h>

/// Largest n that `locus_trilaterate` solves with its scratch on the stack (≈ 17 KB).
#define LOCUS_TRIL_MAX_LOCATORS 64
/// Doubles of scratch one solve of n locators uses: 30 n doubles, 5 n int32 index lists and 2 n
/// flag bytes, rounded up (33 n + 1).
#define LOCUS_TRIL_SCRATCH_DOUBLES(n) (33 * (size_t)(n) + 1)

enum {
    LOCUS_TRIL_OK = 0,
    LOCUS_TRIL_TOO_FEW_RANGES = 1,   // fewer than 3 (planar) / 4 (spatial) ranges
    LOCUS_TRIL_DEGENERATE = 2,       // collinear / coplanar / coincident locators, DOP too large
    LOCUS_TRIL_INVALID_RANGE = 3,    // a range is negative or not finite
    LOCUS_TRIL_DIVERGED = 4,         // an iterate or its residuals are not finite
    LOCUS_TRIL_BAD_ARGUMENT = 5      // programmer error: null pointer, n out of range, bad options
};

enum {
    LOCUS_TRIL_MODE_AUTOMATIC = 0,
    LOCUS_TRIL_MODE_PLANAR = 1,
    LOCUS_TRIL_MODE_SPATIAL = 2
};

/// Solver options (see TrilaterationConfiguration in LocusSolvers for the meaning of each).
typedef struct locus_tril_options {
    int32_t mode;                 // LOCUS_TRIL_MODE_*
    int32_t robust;               // nonzero: chi-square gate + penalised subset search (NLOS rejection)
    int32_t max_iterations;       // Gauss–Newton steps per solve, >= 1
    int32_t max_rejections;       // K: at most this many ranges rejected, >= 0
    int32_t common_bias_guard;    // nonzero: no rejection when the residuals show a common bias
    double tag_height_m;          // h, planar mode
    double sigma0_m;              // sigma_i = sigma0 + sigma_slope * r_i, sigma0 > 0
    double sigma_slope;           // k >= 0, dimensionless
    double tolerance_m;           // stop when |delta| <= tolerance
    double planar_height_ratio;   // automatic: planar when height spread <= ratio * horizontal extent
    double min_rcond;             // smallest reciprocal condition of a normal matrix (e.g. 1e-10)
    double max_dop;               // largest PDOP accepted (e.g. 1e4)
    double rejection_penalty;     // lambda: cost of one rejection in chi-square units, > 0
} locus_tril_options;

/// One solution.
typedef struct locus_tril_result {
    double x, y, z;                                      // m; planar: z = tag height
    double cov_xx, cov_xy, cov_xz, cov_yy, cov_yz, cov_zz; // m^2; (J^T W J)^-1 * max(1, chi2/dof)
    double hdop, vdop, pdop;                             // unit line-of-sight rows; planar: vdop = 0
    double residual_rms_m;                               // sqrt(sum e_i^2 / m) over used ranges
    double chi_square;                                   // sum (e_i / sigma_i)^2 over used ranges
    uint64_t rejected_mask;                              // bit i: range i rejected (i < 64)
    int32_t mode;                                        // LOCUS_TRIL_MODE_PLANAR or _SPATIAL
    int32_t used;                                        // ranges in the final fit
    int32_t iterations;                                  // Newton / Gauss–Newton steps of the final fit
    int32_t dof;                                         // used - p
    int32_t solves;                                      // fits run: 1 + rejection candidates fitted (+ polish)
    int32_t converged;                                   // 1 when the final fit met the tolerance
} locus_tril_result;

/// Solves for the tag position from n ranges to locators at xyz (n rows of x, y, z), n <=
/// LOCUS_TRIL_MAX_LOCATORS (BAD_ARGUMENT beyond), with its scratch on the stack.
int locus_trilaterate(const double *xyz, const double *ranges_m, int32_t n,
                      const locus_tril_options *options, locus_tril_result *result);

/// The same solve for any n >= 0 in the caller's scratch (at least LOCUS_TRIL_SCRATCH_DOUBLES(n)
/// doubles, else BAD_ARGUMENT; contents need not be set and are meaningless afterwards). When used is
/// not NULL and the solve succeeds, used[i] = 1 for a range in the final fit, 0 for a rejected one
/// (result->rejected_mask holds only the indices below 64; result->used counts all).
int locus_trilaterate_scratch(const double *xyz, const double *ranges_m, int32_t n,
                              const locus_tril_options *options, double *scratch, size_t scratch_doubles,
                              uint8_t *used, locus_tril_result *result);

/// LOCUS_TRIL_SCRATCH_DOUBLES(n) (0 for n <= 0), for callers without the macro.
size_t locus_tril_scratch_doubles(int32_t n);

/// The mode the automatic rule picks for these locators (PLANAR or SPATIAL) into *mode.
/// Planar when n < 4 or (max z - min z) <= ratio * (diagonal of the horizontal bounding box).
int locus_tril_choose_mode(const double *xyz, int32_t n, int32_t requested_mode,
                           double planar_height_ratio, int32_t *mode);

/// Model ranges and Jacobian at point (x, y, z): rhat_i and d rhat_i / d(x, y[, z]).
/// Planar: rhat_i = sqrt((x-xi)^2 + (y-yi)^2 + (h-zi)^2), columns (x, y).
/// Spatial: rhat_i = |p - p_i|, columns (x, y, z). jacobian is column-major with leading
/// dimension ld >= n; a row is zero where rhat_i == 0. Either output may be NULL.
int locus_tril_model(const double *xyz, int32_t n, int32_t mode, double tag_height_m,
                     double x, double y, double z, double *ranges_m, double *jacobian, int32_t ld);

/// DOP at (x, y, z) over the locators whose bit is set in active_mask (all when ~0):
/// Q = (H^T H)^-1 with unit line-of-sight rows; hdop = sqrt(Q11+Q22), vdop = sqrt(Q33)
/// (0 in planar mode), pdop = sqrt(trace Q). DEGENERATE when singular or pdop > max_dop.
int locus_tril_dop(const double *xyz, int32_t n, uint64_t active_mask, int32_t mode,
                   double tag_height_m, double x, double y, double z, double min_rcond,
                   double max_dop, double *hdop, double *vdop, double *pdop);

/// 99.5 % quantile of the chi-square distribution with dof degrees of freedom (table for
/// 1...64, Wilson–Hilferty beyond; +inf for dof < 1).
double locus_tril_chi_square_995(int32_t dof);

#endif
