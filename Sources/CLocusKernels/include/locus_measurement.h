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
// measurement. Two arithmetic forms of the one test, each kept exactly as its filter has always
// rounded it (so that every output bit stays the same):
//   locus_measurement_gated        on ν itself (the single-model filter computes ν = y / √S);
//   locus_measurement_gated_scaled on y² c² > γ² D, for a filter that carries S as D / c² (the IMM,
//                                  c² = ρ²: no square root and no division before the decision).
#ifndef LOCUS_MEASUREMENT_H
#define LOCUS_MEASUREMENT_H

#define LOCUS_MEASUREMENT_INLINE static inline __attribute__((always_inline))

/// Whether the normalised innovation ν = y / √S falls outside the gate [−gate_short, gate_long]
/// (NaN passes: the caller checks finiteness where it matters).
LOCUS_MEASUREMENT_INLINE int locus_measurement_gated(double nu, double gate_long, double gate_short) {
    return nu > gate_long || nu < -gate_short;
}

/// locus_measurement_gated for S = D / c² (D > 0, c² > 0) without forming ν: ν² = y² c² / D against
/// γ² on the side of y's sign (γ = gate_long for y > 0, gate_short otherwise), as y² c² > γ² D.
LOCUS_MEASUREMENT_INLINE int locus_measurement_gated_scaled(double y, double c2, double d, double gate_long,
                                                            double gate_short) {
    return y * y * c2 > (y > 0 ? gate_long * gate_long : gate_short * gate_short) * d;
}

#endif
