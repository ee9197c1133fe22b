internal import CLapacke
import LocusCore

/// The LAPACKE path of the offline smoother: one symmetric positive definite banded solve.
package enum SmootherBandedSolver {
    /// Solves A·u = b for a symmetric positive definite band matrix A of order n with kd
    /// super-diagonals, through LAPACKE `dpbsv` (banded Cholesky A = UᵀU, then two triangular solves).
    ///
    /// `band` holds the upper triangle column-major with leading dimension kd + 1:
    /// band[(kd + i − j) + j·(kd + 1)] = A[i, j] for max(0, j − kd) ≤ i ≤ j (0-based). It is
    /// overwritten with the factor; `rightHandSide` (n values) is overwritten with u.
    /// Complexity O(n·kd²) time, no allocation beyond the caller's arrays.
    /// - Throws: `E5101` (lapackInternal) for an illegal argument (a bug in Locus);
    ///   `E4005` (filterDivergence) when A is not positive definite (the smoothing problem is
    ///   not determined, e.g. a non-positive variance).
    package static func solve(order n: Int, superDiagonals kd: Int, band: inout [Double],
                              rightHandSide: inout [Double]) throws(LocusError) {
        precondition(n > 0 && kd >= 0 && band.count >= (kd + 1) * n && rightHandSide.count >= n,
                     "SmootherBandedSolver.solve: arrays too small for order and bandwidth")
        guard let n32 = Int32(exactly: n), let kd32 = Int32(exactly: kd), let ld32 = Int32(exactly: kd + 1) else {
            throw LocusError(.lapackInternal, "banded smoother: order \(n) does not fit LAPACK's integer")
        }
        let info = band.withUnsafeMutableBufferPointer { ab in
            rightHandSide.withUnsafeMutableBufferPointer { b in
                LAPACKE_dpbsv_work(Int32(LAPACK_COL_MAJOR), CChar(UInt8(ascii: "U")), n32, kd32, 1,
                                   ab.baseAddress, ld32, b.baseAddress, n32)
            }
        }
        try LapackStatus.check(info, routine: "LAPACKE_dpbsv_work", positiveInfo: .filterDivergence)
    }
}
