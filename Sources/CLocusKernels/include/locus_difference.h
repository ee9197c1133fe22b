// The range-difference (TDoA) solver's hot loop (LocusSolvers' DifferenceSolver): the normal
// equations of one Gauss–Newton step over an epoch's difference pairs, every prediction, Jacobian
// and whitening taken from the measurement model (locus_measurement_difference.h).
#ifndef LOCUS_DIFFERENCE_H
#define LOCUS_DIFFERENCE_H

#include <stdint.h>

/// One range difference z = d(tag, locators[locator]) − d(tag, locators[reference]) (m) at time_s,
/// laid out as LocusSolvers' `DifferencePair` (two int32 indices, two doubles: 24 bytes).
typedef struct {
    int32_t reference;
    int32_t locator;
    double difference_m;
    double time_s;
} locus_difference_pair;

/// The normal equations per unit σ² at one point: n = N (xx, xy, xz, yy, yz, zz), b, and c = χ²σ²
/// (m²). Planar: the z entries 0.
typedef struct {
    double n[6];
    double b[3];
    double c;
} locus_difference_normal;

/// The normal equations at p = (px, py, pz) (planar: pz the tag height) over `count` pairs whose
/// locators are `xyz` (3 doubles each), leaving out every arrival of a locator i with excluded[i] ≠ 0.
/// A group is a run of consecutive pairs with the same reference and time; per group of m + 1
/// arrivals in the fit (the reference's own counted when it is in), with rows vᵢ = ∂(ρᵢ − ρ_A)/∂p and
/// residuals eᵢ = zᵢ − (ρᵢ − ρ_A) (the reference's row 0):
///   N += Σ vvᵀ + κ (Σv)(Σv)ᵀ,  b += Σ v e + κ (Σv)(Σe),  c += Σ e² + κ (Σe)²,
/// κ = c_w (2 + m c_w) = −1/(m+1), c_w the model's whitening: generalised least squares with
/// Σ = σ²(I + 11ᵀ), re-referenced when the reference is left out. Groups of fewer than 2 arrivals add
/// nothing. The sums are centred, so they are formed from the pseudo-range rows uᵢ = (p − bᵢ)/ρᵢ (the
/// range model's lines of sight, vᵢ shifted by u_A; the reference's row u_A) with ρ_A once per group:
/// (m + 1) square roots and divisions a group, not 2m. O(count), no allocation.
void locus_difference_linearize(const double *xyz, const locus_difference_pair *pairs, int32_t count,
                                const int32_t *excluded, int32_t planar, double px, double py, double pz,
                                locus_difference_normal *out);

#endif
