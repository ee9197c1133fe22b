// The range measurement model: one two-way-ranging distance z (metres) from the tag at p to a locator
// at a = (ax, ay, az). The one place where the range's prediction, Jacobian and gate are spelled;
// the kernels (trilateration.c, kalman.c, kalman3.c, imm.c) and, through LocusNumerics' `RangeModel`, the Swift
// solvers call it. Symbols as in locus_measurement.h.
//
//   offset      d = p − a = (px − ax, py − ay, pz − az); planar: pz is the floor's known tag height,
//               spatial: the position's own z (m)
//   prediction  h(p) = ρ = ‖d‖ = √((dx² + dy²) + dz²)   (m; ρ² summed in that order)
//   Jacobian    H = ∂h/∂p = d / ρ, the unit line of sight (planar: its (x, y) part, ∂h/∂z unused);
//               two roundings of it: d / ρ (one division per component: locus_range_unit) and
//               d · (1/ρ) (one division for all: locus_range_inverse, then products) — each caller
//               keeps the one it has always used, so every output bit stays the same
//   noise       R = σ² (m²), the caller's (σ per fix or per range, NLOS inflation included)
//   innovation  y = z − ρ, S = H P Hᵀ + R, ν = y / √S; gate: locus_measurement.h (asymmetric:
//               ranges run long under NLOS)
//
// Every function is static inline, always inlined: the hot paths keep their speed and their exact
// operation order. The lane-wise forms (the SSE2 pair of the trilateration kernel, the four-lane
// vectors of the IMM through LOCUS_RANGE_SQUARED) compute the same expressions lane by lane.
#ifndef LOCUS_MEASUREMENT_RANGE_H
#define LOCUS_MEASUREMENT_RANGE_H

#include <math.h>
#include "locus_measurement.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/// ρ² = (dx² + dy²) + dz² for any lane type with C arithmetic (double, an SSE2 pair, a four-lane
/// vector; a scalar dz broadcasts): the one spelling of the sum, so that every form rounds alike.
#define LOCUS_RANGE_SQUARED(dx, dy, dz) ((dx) * (dx) + (dy) * (dy) + (dz) * (dz))

/// The offset d = p − a of the tag at (px, py, pz) from the locator at a (three doubles), m.
/// Planar: pass the floor's tag height as pz.
LOCUS_MEASUREMENT_INLINE void locus_range_offset(double px, double py, double pz, const double *a, double d[3]) {
    d[0] = px - a[0];
    d[1] = py - a[1];
    d[2] = pz - a[2];
}

/// ρ² = ‖d‖² (m²).
LOCUS_MEASUREMENT_INLINE double locus_range_squared(double dx, double dy, double dz) {
    return LOCUS_RANGE_SQUARED(dx, dy, dz);
}

/// The predicted range h = ρ = ‖d‖ (m).
LOCUS_MEASUREMENT_INLINE double locus_range_predicted(double dx, double dy, double dz) {
    return sqrt(LOCUS_RANGE_SQUARED(dx, dy, dz));
}

/// 1/ρ, and 0 at ρ = 0 (the tag on the locator: a zero Jacobian row rather than a division by zero).
/// H = d · locus_range_inverse(ρ) per component.
LOCUS_MEASUREMENT_INLINE double locus_range_inverse(double rho) {
    return rho > 0.0 ? 1.0 / rho : 0.0;
}

/// The Jacobian H = d / ρ, one division per component (ρ > 0).
LOCUS_MEASUREMENT_INLINE void locus_range_unit(double dx, double dy, double dz, double rho, double h[3]) {
    h[0] = dx / rho;
    h[1] = dy / rho;
    h[2] = dz / rho;
}

/// The range's share of an epoch's line-of-sight Gram matrix A = Σ HᵀH (planar, H = (dx, dy)/ρ, for the
/// HDOP): a[0..2] += (dx², dx·dy, dy²)/ρ², one division for the three, ρ² floored at 1e-12 m².
/// (The floor written as Swift's max(1e-12, ρ²): the same operand wins on a tie.)
LOCUS_MEASUREMENT_INLINE void locus_range_gram_add(double a[3], double dx, double dy, double rho2) {
    const double inverse = 1 / (rho2 >= 1e-12 ? rho2 : 1e-12);
    a[0] += dx * dx * inverse;
    a[1] += dx * dy * inverse;
    a[2] += dy * dy * inverse;
}

#if defined(__SSE2__)
/// Two ranges at once (SSE2): ρ = ‖d‖ per lane.
LOCUS_MEASUREMENT_INLINE __m128d locus_range_predicted_pd(__m128d dx, __m128d dy, __m128d dz) {
    return _mm_sqrt_pd(LOCUS_RANGE_SQUARED(dx, dy, dz));
}

/// Two ranges at once (SSE2): 1/ρ per lane, 0 where ρ = 0 (locus_range_inverse).
LOCUS_MEASUREMENT_INLINE __m128d locus_range_inverse_pd(__m128d rho) {
    return _mm_and_pd(_mm_div_pd(_mm_set1_pd(1.0), rho), _mm_cmpgt_pd(rho, _mm_setzero_pd()));
}
#endif

#endif
