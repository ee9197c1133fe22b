internal import CLapacke
import LocusCore

/// LAPACKE linear algebra used by the general (any-size) solvers: rank-revealing least squares,
/// Gram matrices and symmetric positive-definite inverses. Column-major storage everywhere; the
/// caller owns every buffer (arrays passed `inout`, no allocation when they are large enough and
/// uniquely referenced).
package enum LapackLinearAlgebra {
    /// The `lwork` that `dgelsy` wants for an m×n problem with one right-hand side.
    /// Complexity: one LAPACK workspace query.
    static func leastSquaresWorkspaceCount(rows: Int, columns: Int) -> Int {
        var a = [Double](repeating: 0, count: max(1, rows * columns))
        var b = [Double](repeating: 0, count: max(1, max(rows, columns)))
        var pivots = [Int32](repeating: 0, count: max(1, columns))
        var rank: Int32 = 0
        var query = 0.0
        let m = LapackStatus.int32(rows), n = LapackStatus.int32(columns)
        let info = a.withUnsafeMutableBufferPointer { ap in
            b.withUnsafeMutableBufferPointer { bp in
                pivots.withUnsafeMutableBufferPointer { pp in
                    LAPACKE_dgelsy_work(LAPACK_COL_MAJOR, m, n, 1, ap.baseAddress, max(1, m), bp.baseAddress,
                                        max(1, max(m, n)), pp.baseAddress, 1e-5, &rank, &query, -1)
                }
            }
        }
        guard info == 0, query.isFinite, query >= 1 else { return max(1, 4 * (rows + columns) + 64) }
        return Int(query)
    }

    /// Minimum-norm least squares x = argmin ‖A x − b‖₂ by complete orthogonal factorisation with
    /// column pivoting (`dgelsy`): A (m×n, column-major, leading dimension `rows`) is overwritten;
    /// b (length ≥ max(m, n)) holds the solution in its first n entries on return.
    /// Columns whose R diagonal falls below `reciprocalCondition`·|R₁₁| are treated as zero.
    /// Complexity O(m n²).
    /// - Returns: the effective rank of A.
    /// - Throws: E5101 on an illegal argument (a bug).
    static func leastSquares(a: inout [Double], rows: Int, columns: Int, b: inout [Double],
                                     pivots: inout [Int32], reciprocalCondition: Double,
                                     work: inout [Double]) throws(LocusError) -> Int {
        precondition(a.count >= rows * columns && b.count >= max(rows, columns) && pivots.count >= columns,
                     "leastSquares: buffers too small")
        let m = LapackStatus.int32(rows), n = LapackStatus.int32(columns)
        let lwork = LapackStatus.int32(work.count)
        var rank: Int32 = 0
        for k in 0..<columns { pivots[k] = 0 }
        let info = a.withUnsafeMutableBufferPointer { ap in
            b.withUnsafeMutableBufferPointer { bp in
                pivots.withUnsafeMutableBufferPointer { pp in
                    work.withUnsafeMutableBufferPointer { wp in
                        LAPACKE_dgelsy_work(LAPACK_COL_MAJOR, m, n, 1, ap.baseAddress, max(1, m), bp.baseAddress,
                                            max(1, max(m, n)), pp.baseAddress, reciprocalCondition, &rank,
                                            wp.baseAddress, lwork)
                    }
                }
            }
        }
        try LapackStatus.check(info, routine: "dgelsy")
        return Int(rank)
    }

    /// Gram matrix C = Aᵀ A (n×n, full symmetric, column-major) of A (m×n, column-major, leading
    /// dimension `rows`), by `cblas_dsyrk`. Complexity O(m n²).
    static func gram(of a: [Double], rows: Int, columns: Int, into c: inout [Double]) {
        precondition(a.count >= rows * columns && c.count >= columns * columns, "gram: buffers too small")
        let m = LapackStatus.int32(rows), n = LapackStatus.int32(columns)
        a.withUnsafeBufferPointer { ap in
            c.withUnsafeMutableBufferPointer { cp in
                cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, n, m, 1.0, ap.baseAddress, max(1, m), 0.0,
                            cp.baseAddress, max(1, n))
            }
        }
        for j in 0..<columns { for i in (j + 1)..<max(j + 1, columns) { c[i + j * columns] = c[j + i * columns] } }
    }

    /// In-place inverse of a symmetric positive-definite n×n matrix (column-major, full storage)
    /// by Cholesky (`dpotrf`, `dpotri`), re-symmetrised.
    /// Complexity O(n³).
    /// - Throws: E4002 when the matrix is not positive definite (singular geometry), E5101 on an
    ///   illegal argument.
    static func invertPositiveDefinite(_ c: inout [Double], order: Int) throws(LocusError) {
        precondition(c.count >= order * order, "invertPositiveDefinite: buffer too small")
        let n = LapackStatus.int32(order)
        let upper = CChar(UInt8(ascii: "U"))
        let info1 = c.withUnsafeMutableBufferPointer { cp in
            LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, upper, n, cp.baseAddress, max(1, n))
        }
        try LapackStatus.check(info1, routine: "dpotrf")
        let info2 = c.withUnsafeMutableBufferPointer { cp in
            LAPACKE_dpotri_work(LAPACK_COL_MAJOR, upper, n, cp.baseAddress, max(1, n))
        }
        try LapackStatus.check(info2, routine: "dpotri")
        for j in 0..<order { for i in (j + 1)..<max(j + 1, order) { c[i + j * order] = c[j + i * order] } }
    }

    /// Solves A x = b for a symmetric n×n matrix A (column-major, full storage; overwritten by its
    /// Cholesky factor) by `dposv`; b (length ≥ n) holds x on return.
    /// Complexity O(n³).
    /// - Returns: false (b unchanged in meaning) when A is not positive definite.
    /// - Throws: E5101 on an illegal argument (a bug).
    package static func solvePositiveDefinite(_ a: inout [Double], order: Int, b: inout [Double]) throws(LocusError) -> Bool {
        precondition(a.count >= order * order && b.count >= order, "solvePositiveDefinite: buffers too small")
        let n = LapackStatus.int32(order)
        let upper = CChar(UInt8(ascii: "U"))
        let info = a.withUnsafeMutableBufferPointer { ap in
            b.withUnsafeMutableBufferPointer { bp in
                LAPACKE_dposv_work(LAPACK_COL_MAJOR, upper, n, 1, ap.baseAddress, max(1, n), bp.baseAddress, max(1, n))
            }
        }
        if info > 0 { return false }
        try LapackStatus.check(info, routine: "dposv")
        return true
    }
}
