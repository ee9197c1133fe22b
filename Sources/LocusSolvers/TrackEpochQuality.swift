import LocusCore
import LocusNumerics

/// The quality figures of one epoch of a tightly coupled track, from the ranges (and range
/// differences: `accept(differences:statistics:)`) it took: locators used, HDOP of their geometry,
/// residual RMS, and the locators whose ranges were gated. The one record of them (issue #39): the
/// filters' range updates add their accepted ranges here themselves — one at a time
/// (`InteractingModels.predictAndUpdateRange`, or `accept(residualMeters:dx:dy:rho2:)` after a
/// filter's own update) or a round's in one kernel call (`InteractingModels.updateRanges`, which
/// carries these sums through `locus_imm_run`).
///
/// Each accepted range adds its unit line of sight H = (dx, dy)/ρ to A = Σ HᵀH and its innovation y
/// to Σ y²; then HDOP = √trace(A⁻¹) = √((A₀₀ + A₁₁)/det A) (0 while A is singular) and the residual
/// RMS is √(Σ y² / n). Plain values: no allocation.
struct TrackEpochQuality: Sendable {
    var a00 = 0.0, a01 = 0.0, a11 = 0.0
    var residualSquares = 0.0
    private var rejected = LocatorList()
    /// Measurements accepted in the epoch (32 bits and last, beside the flag: the struct then packs into
    /// 64 bytes, which every tracked tag carries).
    var used: Int32 = 0
    /// Whether range differences entered the epoch (its sums are then not ranges alone).
    private var tookDifferences = false

    /// No range yet.
    init() {}

    /// Ranges accepted in the epoch.
    var rangesUsed: Int { Int(used) }

    /// Counts an accepted range: its innovation y (metres) and the tag's offset (dx, dy) from the
    /// locator with ρ² = dx² + dy² + dz² (m²).
    @inline(__always)
    mutating func accept(residualMeters y: Double, dx: Double, dy: Double, rho2: Double) {
        // Σ HᵀH with H = (dx, dy)/ρ: the range model's (one division for the three products).
        used += 1
        RangeModel.addLineOfSight(dx: dx, dy: dy, rho2: rho2, a00: &a00, a01: &a01, a11: &a11)
        residualSquares += y * y
    }

    /// Counts a group's applied range differences (`DifferenceGroupStatistics`): `count` more
    /// measurements, their whitened rows H' = W H added to A (Σ H'ᵀH' is the group's Fisher
    /// information per unit σ², so HDOP is the differences' own) and their whitened innovations' squares
    /// to Σ y² (each of variance σ² + H'PH'ᵀ, like a range's).
    mutating func accept(differences count: Int, statistics s: DifferenceGroupStatistics) {
        used += Int32(clamping: count)
        tookDifferences = true
        a00 += s.xx; a01 += s.xy; a11 += s.yy
        residualSquares += s.residualSquares
    }

    /// The epoch's sample of the range variance, m²: s = (Σ yₖ² − tr(P A)) / n over its n accepted ranges,
    /// A = Σ HₖᵀHₖ, P = [[xx, xy], [xy, yy]] a position covariance (m²). Each innovation has variance
    /// E[yₖ²] = Hₖ Pₖ⁻ Hₖᵀ + R; with P the covariance after the epoch (no larger than each Pₖ⁻) the sample
    /// leans towards a larger R. Nil without ranges or when range differences entered the epoch.
    func rangeVarianceSample(xx: Double, xy: Double, yy: Double) -> Double? {
        guard used > 0, !tookDifferences else { return nil }
        return (residualSquares - (xx * a00 + 2 * xy * a01 + yy * a11)) / Double(used)
    }

    /// Counts a gated range of locator `address`.
    mutating func reject(_ address: LocatorAddress) { rejected.append(address) }

    /// The figures as a fix carries them (planar: PDOP = HDOP).
    var fixQuality: FixQuality {
        let det = a00 * a11 - a01 * a01
        let hdop = det > 1e-12 ? ((a00 + a11) / det).squareRoot() : 0
        return FixQuality(hdop: hdop, pdop: hdop, residualRMSMeters: used > 0 ? (residualSquares / Double(used)).squareRoot() : 0,
                          locatorsUsed: Int(used), rejected: rejected)
    }
}
