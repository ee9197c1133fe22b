// The range-difference (TDoA) measurement model: one difference of arrival expressed in metres,
// z = d(tag, B) − d(tag, A), of the tag at p heard by the locator B and the reference locator A (the
// infrastructure formed it from synchronised clocks: z = c·(t_B − t_A)). The one place where the
// difference's prediction, Jacobian, noise and plausibility are spelled; the solvers and filters call
// it (in Swift through LocusNumerics' `DifferenceModel`). Built on the range model
// (locus_measurement_range.h): a difference is two ranges.
//
//   prediction  h(p) = ρ_B − ρ_A = ‖p − b‖ − ‖p − a‖   (m; planar: pz is the floor's tag height)
//   Jacobian    H = ∂h/∂p = (p − b)/ρ_B − (p − a)/ρ_A, the difference of the two unit lines of
//               sight (planar: its (x, y) part); a component is 0 where its ρ is 0
//   noise       each arrival carries its own error (variance σ², m²), so a difference has 2σ², and
//               m differences sharing one reference A are correlated through A's error:
//               Σ = σ² (I + 11ᵀ). Its whitening W = I + c 11ᵀ, c = (1/√(m+1) − 1)/m, gives
//               W Σ Wᵀ = σ² I (W² = (I + 11ᵀ)⁻¹): W z has independent components of variance σ².
//               Equivalently (the form the solvers use): the m + 1 arrivals of one reference group
//               are pseudo-ranges ρ_i + β with a nuisance offset β per group, independent noise σ²
//               each, and the reference's arrival observed as 0 — eliminating β gives the same
//               estimate and covariance as Σ above.
//   plausibility |z| ≤ ‖b − a‖ (the triangle inequality) plus a margin for noise: a row beyond it
//               cannot be a difference of this pair (skipped as `difference_too_long`).
#ifndef LOCUS_MEASUREMENT_DIFFERENCE_H
#define LOCUS_MEASUREMENT_DIFFERENCE_H

#include <math.h>
#include "locus_measurement.h"
#include "locus_measurement_range.h"

/// The predicted difference h = ρ_B − ρ_A (m) of the tag at (px, py, pz) between the locator at b and
/// the reference at a (three doubles each). Planar: pass the floor's tag height as pz.
LOCUS_MEASUREMENT_INLINE double locus_difference_predicted(double px, double py, double pz, const double *a,
                                                           const double *b) {
    double da[3], db[3];
    locus_range_offset(px, py, pz, a, da);
    locus_range_offset(px, py, pz, b, db);
    return locus_range_predicted(db[0], db[1], db[2]) - locus_range_predicted(da[0], da[1], da[2]);
}

/// The predicted difference h (returned, m) and its Jacobian H = (p − b)/ρ_B − (p − a)/ρ_A into h3
/// (a zero line of sight where a ρ is 0: the tag on a locator).
LOCUS_MEASUREMENT_INLINE double locus_difference_jacobian(double px, double py, double pz, const double *a,
                                                          const double *b, double h3[3]) {
    double da[3], db[3];
    locus_range_offset(px, py, pz, a, da);
    locus_range_offset(px, py, pz, b, db);
    const double rho_a = locus_range_predicted(da[0], da[1], da[2]);
    const double rho_b = locus_range_predicted(db[0], db[1], db[2]);
    const double ia = locus_range_inverse(rho_a), ib = locus_range_inverse(rho_b);
    h3[0] = db[0] * ib - da[0] * ia;
    h3[1] = db[1] * ib - da[1] * ia;
    h3[2] = db[2] * ib - da[2] * ia;
    return rho_b - rho_a;
}

/// The whitening coefficient c of m ≥ 1 differences sharing one reference: W = I + c 11ᵀ with
/// c = (1/√(m+1) − 1)/m, so that W (I + 11ᵀ) Wᵀ = I. (W z)_j = z_j + c Σ_k z_k.
LOCUS_MEASUREMENT_INLINE double locus_difference_whitening(int m) {
    return m > 0 ? (1.0 / sqrt((double)m + 1.0) - 1.0) / (double)m : 0.0;
}

/// Whether z (m) is a plausible difference of the pair whose locators are `baseline` = ‖b − a‖ metres
/// apart: |z| ≤ baseline + margin (margin ≥ 0, m). NaN is not plausible.
LOCUS_MEASUREMENT_INLINE int locus_difference_plausible(double z, double baseline, double margin) {
    return fabs(z) <= baseline + margin;
}

#endif
