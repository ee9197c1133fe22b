internal import CLapacke
import LocusCore

/// The LAPACKE path of range-bias calibration: one dense least-squares solve over all locators'
/// samples at once (`dgels`, QR factorisation), called once per reweighting pass.
///
/// Column-major storage; the caller owns every buffer (arrays passed `inout`, reused across passes).
package enum CalibrationLeastSquares {
    /// The `lwork` that `dgels` wants for an m×n full-rank problem with one right-hand side.
    /// Complexity: one LAPACK workspace query.
    package static func workspaceCount(rows: Int, columns: Int) -> Int {
        var query = 0.0
        var a = [0.0], b = [0.0]
        let m = LapackStatus.int32(rows), n = LapackStatus.int32(columns)
        // A workspace query reads neither A nor b; one-element stand-ins keep the pointers valid.
        let info = a.withUnsafeMutableBufferPointer { ap in
            b.withUnsafeMutableBufferPointer { bp in
                LAPACKE_dgels_work(LAPACK_COL_MAJOR, CChar(UInt8(ascii: "N")), m, n, 1, ap.baseAddress, max(1, m),
                                   bp.baseAddress, max(1, max(m, n)), &query, -1)
            }
        }
        let fallback = max(1, min(rows, columns) + max(1, max(rows, columns)) * 64)
        guard info == 0, query.isFinite, query >= 1 else { return fallback }
        return Int(query)
    }

    /// Least squares x = argmin ‖A x − b‖₂ for a full-rank A (m×n, m ≥ n, column-major, leading
    /// dimension m) by Householder QR (`LAPACKE_dgels_work`): x = R⁻¹ Qᵀ b.
    ///
    /// A is overwritten by its factorisation; b (length ≥ m) holds x in its first n entries on
    /// return and the residual information below. Complexity O(m n²) time, no allocation.
    /// - Throws: `E4002` (degenerateGeometry) when A is rank deficient (a parameter the samples do
    ///   not determine, e.g. a slope from samples all at one distance); `E5101` on an illegal
    ///   argument (a bug in Locus).
    package static func solve(a: inout [Double], rows: Int, columns: Int, b: inout [Double],
                              work: inout [Double]) throws(LocusError) {
        precondition(rows >= columns && columns >= 1 && a.count >= rows * columns && b.count >= rows && !work.isEmpty,
                     "CalibrationLeastSquares.solve: buffers too small or fewer rows than columns")
        let m = LapackStatus.int32(rows), n = LapackStatus.int32(columns)
        let lwork = LapackStatus.int32(work.count)
        let info = a.withUnsafeMutableBufferPointer { ap in
            b.withUnsafeMutableBufferPointer { bp in
                work.withUnsafeMutableBufferPointer { wp in
                    LapackThreads.onOneThread {  // dgels splits its reductions by thread count
                        LAPACKE_dgels_work(LAPACK_COL_MAJOR, CChar(UInt8(ascii: "N")), m, n, 1, ap.baseAddress, m,
                                           bp.baseAddress, m, wp.baseAddress, lwork)
                    }
                }
            }
        }
        try LapackStatus.check(info, routine: "dgels")
    }
}
