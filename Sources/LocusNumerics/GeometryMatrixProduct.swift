internal import CLapacke
import LocusCore

/// The one BLAS call of the batched DOP map: C = A·B with `cblas_dgemm`, column-major.
///
/// `locus geometry` forms the normal matrices HᵀH of a whole block of grid cells at once: with
/// W (cells × locators) holding the weights wᵢⱼ = 1/rᵢⱼ² of the locators in range of each cell and
/// B (locators × k) the locators' moment columns (1, x, y, z, x², xy, …), the product M = W·B holds
/// every cell's weighted moments, from which HᵀH follows in O(1) per cell (see
/// `GeometryReport+Batched.swift` in LocusSolvers). All pointer work for it lives in this file.
package enum GeometryMatrixProduct {
    /// C (m×n) = A (m×k) · B (k×n), all column-major with leading dimensions m, k and m.
    /// Buffers are caller-owned; nothing is allocated. Complexity O(m·n·k) flops.
    /// - Precondition: the buffers hold at least m·k, k·n and m·n elements; dimensions fit Int32.
    package static func multiply(rows m: Int, columns n: Int, inner k: Int,
                                 a: [Double], b: [Double], into c: inout [Double]) {
        precondition(m >= 0 && n >= 0 && k >= 0, "multiply: negative dimension")
        precondition(a.count >= m * k && b.count >= k * n && c.count >= m * n, "multiply: buffers too small")
        if m == 0 || n == 0 { return }
        if k == 0 {
            for i in 0..<(m * n) { c[i] = 0 }
            return
        }
        let m32 = LapackStatus.int32(m), n32 = LapackStatus.int32(n), k32 = LapackStatus.int32(k)
        a.withUnsafeBufferPointer { ap in
            b.withUnsafeBufferPointer { bp in
                c.withUnsafeMutableBufferPointer { cp in
                    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m32, n32, k32,
                                1.0, ap.baseAddress, m32, bp.baseAddress, k32, 0.0, cp.baseAddress, m32)
                }
            }
        }
    }
}
