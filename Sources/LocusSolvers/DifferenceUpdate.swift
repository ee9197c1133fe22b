internal import CLocusKernels
import LocusCore

/// The rows in which a range-difference group goes to the filters' difference updates
/// (`KalmanKernels.updateDifferences`, `InteractingModels.predictAndUpdateDifferences`; C layout
/// `LOCUS_DIFFERENCE_ROW` in `locus_kalman.h`): `stride` doubles per difference of one group, in
/// caller-owned memory (a stack buffer: no allocation per update). The caller writes each row's other
/// locator B and difference z (`set`); the kernel writes back what became of it (`outcome`) and the
/// gate's statistic ν (`normalisedInnovation`), and uses the rest as scratch.
enum DifferenceRows {
    /// Doubles per difference: `LOCUS_DIFFERENCE_ROW` (a literal here so that `set` and `outcome`
    /// inline into the filter; the kernel wrappers check that the two agree).
    static var stride: Int { 18 }

    /// Whether `stride` is the C layout's row (checked by the wrappers that hand rows to a kernel).
    static var matchesKernelLayout: Bool { stride == Int(LOCUS_DIFFERENCE_ROW) }

    /// What the update did with one difference.
    enum Outcome: Sendable, Hashable {
        /// Whitened and applied.
        case applied
        /// Its normalised innovation fell outside the gate; not applied.
        case gated
        /// Its prediction or Jacobian was not finite (or the update never ran): not applied.
        case unusable
    }

    /// Row k: the other locator B at `locator` (m) and z = d(tag, B) − d(tag, A) (m, biases removed).
    static func set(_ rows: inout MutableSpan<Double>, row k: Int, locator b: Point3, differenceMeters z: Double) {
        let base = k * stride
        rows[base] = b.x; rows[base + 1] = b.y; rows[base + 2] = b.z
        rows[base + 3] = z
        rows[base + 4] = -1
        rows[base + 5] = .nan
    }

    /// What the last update did with row k.
    static func outcome(_ rows: borrowing MutableSpan<Double>, row k: Int) -> Outcome {
        let flag = rows[k * stride + 4]
        return flag == 1 ? .applied : flag == 0 ? .gated : .unusable
    }

    /// Row k's normalised innovation ν = y/√S of the raw difference (S = HPHᵀ + 2σ², dimensionless;
    /// NaN when unusable).
    static func normalisedInnovation(_ rows: borrowing MutableSpan<Double>, row k: Int) -> Double {
        rows[k * stride + 5]
    }
}

/// What a difference group's update adds to an epoch's quality figures (`TrackEpochQuality.accept(differences:statistics:)`),
/// over its applied (whitened) rows: Σ y'ⱼ² (m²) and Σ H'ⱼᵀH'ⱼ (per unit σ²: the group's Fisher information F of `DifferenceGeometry`
/// restricted to the applied differences), plus the state's mean after the update.
struct DifferenceGroupStatistics: Sendable {
    /// Σ y'ⱼ² of the whitened innovations (before each scalar update), m².
    var residualSquares = 0.0
    /// Σ H'ᵀH' (xx, xy, yy), dimensionless.
    var xx = 0.0, xy = 0.0, yy = 0.0
    /// The mean after the update (IMM: Σ μⱼ xⱼ with the settled μ).
    var mean = SIMD4<Double>.zero

    /// Zeros.
    init() {}
}

extension KalmanKernels {
    /// Tightly coupled update with the first `count` rows of `rows` (`DifferenceRows`), range
    /// differences sharing one arrival at `reference` (locus_measurement_difference.h), the tag at height
    /// h: each raw difference gated on its own, ν = (z − h(x))/√(HPHᵀ + 2σ²) outside
    /// [−`gateShort`, `gateLong`] refused (infinite gates: none), the n survivors (noise Σ = σ²(I + 11ᵀ))
    /// whitened by W = I + c11ᵀ, c = (1/√(n+1) − 1)/n, and applied as n sequential scalar Joseph-form
    /// updates of the linearisation at the entering state (the exact vector EKF update). σ² =
    /// `varianceSquareMeters` per arrival. All or nothing; `.gated` when every usable row was gated.
    static func updateDifferences(_ state: inout KalmanState, reference: Point3, rows: inout MutableSpan<Double>,
                                          count m: Int, tagHeightMeters h: Double, varianceSquareMeters v: Double,
                                          gateLong: Double, gateShort: Double) -> (KalmanOutcome, DifferenceGroupStatistics) {
        precondition(m >= 0 && rows.count >= m * DifferenceRows.stride && DifferenceRows.matchesKernelLayout,
                     "KalmanKernels.updateDifferences: rows too short")
        var a = SIMD4<Double>(reference.x, reference.y, reference.z, 0)
        var stats = SIMD4<Double>.zero
        let status = rows.withUnsafeMutableBufferPointer { rowBuffer in
            state.withKernelPointers { x, p in
                withDoubles(&a) { ap in
                    withDoubles(&stats) { s in
                        locus_kalman_cv_update_differences(x, p, ap, Int32(clamping: m), rowBuffer.baseAddress, h, v, gateLong,
                                                           gateShort, s)
                    }
                }
            }
        }
        var out = DifferenceGroupStatistics()
        out.residualSquares = stats[0]; out.xx = stats[1]; out.xy = stats[2]; out.yy = stats[3]
        out.mean = state.x
        return (KalmanOutcome(status: status), out)
    }
}
