// What every scalar measurement model shares: the innovation gate.
//
// A scalar measurement z of the tag's position p (metres) has a model file of its own
// (locus_measurement_<kind>.h: the range model in locus_measurement_range.h; a range difference would
// be the next) that gives
//   h   the predicted measurement h(p), in the measurement's unit (metres),
//   H   its Jacobian ∂h/∂p (a row, unit 1 for a distance),
// and each filter's one scalar update (kalman.c: `scalar_update`, Joseph form; imm.c:
// `scalar_update_tracked`, the four-lane models) takes h and H with the measurement's noise
//   R   the variance σ² of z (m²; any NLOS/robust inflation is already in it),
// and forms
//   y   = z − h(p), the innovation (m),
//   S   = H P Hᵀ + R, its variance (m²),
//   ν   = y / √S, the normalised innovation (dimensionless),
// then gates on ν (below) before it changes the state.
//
// The gate is asymmetric: a range that is too long is a non-line-of-sight suspect, one that is too
// short is not, so the two sides have their own thresholds, ν > γ_long or ν < −γ_short refuses the
// measurement. Two forms:
//   locus_measurement_gated        on ν itself (the single-model and the 3-D filters compute ν = y / √S);
//   locus_measurement_soft_excess  on y² c² against γ² D, for a filter that carries S as D / c² (the IMM,
//                                  c² = ρ²: no square root and no division before the decision), with a
//                                  soft long side since issue #42: γ_long < ν ≤ γ_short is taken with R
//                                  raised so that ν = 1.5, beyond γ_short it is refused.
#ifndef LOCUS_MEASUREMENT_H
#define LOCUS_MEASUREMENT_H

#define LOCUS_MEASUREMENT_INLINE static inline __attribute__((always_inline))

/// Whether the normalised innovation ν = y / √S falls outside the gate [−gate_short, gate_long]
/// (NaN passes: the caller checks finiteness where it matters).
LOCUS_MEASUREMENT_INLINE int locus_measurement_gated(double nu, double gate_long, double gate_short) {
    return nu > gate_long || nu < -gate_short;
}

/// The normalised innovation a range in the soft band of the long side is brought to (dimensionless),
/// by raising its variance (locus_measurement_soft_excess).
#define LOCUS_MEASUREMENT_SOFT_NU 1.5

/// The IMM's range gate (issue #42, "a filter tuned for real data"): a soft long side. With S = D / c²
/// (D > 0, c² > 0) and ν² = y² c² / D:
///   ν < −γ_short or ν > γ_short   refused (the hard gate: γ_short, 4 by default, on both sides);
///   γ_long < ν ≤ γ_short          accepted with R raised so that the normalised innovation is
///                                 ν_s = LOCUS_MEASUREMENT_SOFT_NU: S' = y² / ν_s², R' = R + (y² / ν_s² − S)
///                                 (its correction K·y = P Hᵀ ν_s² / y is ν_s / ν of a range ν_s σ long's:
///                                 it falls as the range runs longer, to ν_s / γ_short at the hard gate);
///   otherwise                     accepted as it is (the returned extra variance is 0).
/// Returns the extra variance y² / ν_s² − S (m², > 0) to add to R, 0, or −1 when refused (NaN: 0, as the
/// hard test passed it before; the caller checks finiteness). Why: on real recordings the ranges 2.5–4σ
/// long are mostly right (slowly varying multipath, rounds of correlated errors), not NLOS outliers;
/// refusing them cost accuracy and opened the gate, while taking them at full weight let simulated NLOS
/// pull the track (docs/tracking.md, "Real recordings").
LOCUS_MEASUREMENT_INLINE double locus_measurement_soft_excess(double y, double c2, double d, double gate_long,
                                                              double gate_short) {
    const double y2c2 = y * y * c2;
    if (y2c2 > gate_short * gate_short * d) return -1;
    if (y > 0 && y2c2 > gate_long * gate_long * d) {
        return (y2c2 / (LOCUS_MEASUREMENT_SOFT_NU * LOCUS_MEASUREMENT_SOFT_NU) - d) / c2;
    }
    return 0;
}

#endif
