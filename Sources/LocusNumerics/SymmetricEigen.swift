internal import CLapacke
import LocusCore

/// Eigen-decomposition of a small dense symmetric matrix through LAPACKE `dsyev`, and the
/// pseudo-inverse built from it: the reduced normal equations of a bundle adjustment (a few tens of
/// global parameters) are solved this way, so that a direction the data do not determine (an
/// eigenvalue below a relative threshold) is left at zero and seen, not inverted into noise.
package struct SymmetricEigen: Sendable {
    /// The dimension n.
    package let size: Int
    /// Eigenvalues λ₁ ≤ … ≤ λₙ (ascending, as LAPACK returns them).
    package let values: [Double]
    /// Eigenvectors, column-major n×n: column k belongs to `values[k]`.
    package let vectors: [Double]

    /// Decomposes the symmetric n×n matrix `matrix` (column-major; only its upper triangle is read).
    /// Complexity O(n³).
    /// - Throws: `E4002` when LAPACK does not converge; `E5101` on an argument error (a bug).
    package init(_ matrix: [Double], size n: Int) throws(LocusError) {
        precondition(n >= 1 && matrix.count >= n * n, "SymmetricEigen: matrix smaller than n×n")
        var a = Array(matrix.prefix(n * n))
        var w = [Double](repeating: 0, count: n)
        let info = a.withUnsafeMutableBufferPointer { ap in
            w.withUnsafeMutableBufferPointer { wp in
                LapackThreads.onOneThread {  // dsyev's bits depend on OpenBLAS's thread count
                    LAPACKE_dsyev(LAPACK_COL_MAJOR, CChar(UInt8(ascii: "V")), CChar(UInt8(ascii: "U")), LapackStatus.int32(n),
                                  ap.baseAddress, LapackStatus.int32(n), wp.baseAddress)
                }
            }
        }
        try LapackStatus.check(info, routine: "dsyev")
        size = n
        values = w
        vectors = a
    }

    /// The directions the matrix determines: eigenvalues above `relativeThreshold`·λₙ (and above 0).
    package func isDetermined(_ k: Int, relativeThreshold: Double) -> Bool {
        let top = values.last ?? 0
        return top > 0 && values[k] > relativeThreshold * top
    }

    /// The pseudo-inverse A⁺ = Σ vₖvₖᵀ/λₖ over the determined directions, column-major n×n.
    package func pseudoInverse(relativeThreshold: Double) -> [Double] {
        let n = size
        var out = [Double](repeating: 0, count: n * n)
        for k in 0..<n where isDetermined(k, relativeThreshold: relativeThreshold) {
            let inv = 1 / values[k]
            for c in 0..<n {
                let vc = vectors[k * n + c] * inv
                for r in 0..<n { out[c * n + r] += vectors[k * n + r] * vc }
            }
        }
        return out
    }
}
