/// Closed-form inverse and solve of a 2×2 or 3×3 system held as a 3×3 row-major array (the leading
/// n×n block is used, n = 2 or 3): the per-epoch position blocks of the calibration without truth.
/// Cofactors over the determinant, A⁻¹ = adj(A)/det A; "singular" is |det A| ≤ 1e-300. Allocates the
/// result (offline use); the per-fix solves stay inline in their kernels.
enum SmallDenseSolve {
    /// x = A⁻¹b for the leading n×n block of row-major 3×3 `a` (n = 2 or 3), x as 3 values (x₂ = 0
    /// for n = 2); nil when singular.
    static func solve(_ a: [Double], _ b: [Double], order n: Int) -> [Double]? {
        guard let inverse = inverse(a, order: n) else { return nil }
        var x = [Double](repeating: 0, count: 3)
        for r in 0..<n { for c in 0..<n { x[r] += inverse[3 * r + c] * b[c] } }
        return x
    }

    /// The inverse of the leading n×n block of row-major 3×3 `a` (n = 2 or 3), row-major 3×3 (zeros
    /// outside the block); nil when singular.
    static func inverse(_ a: [Double], order n: Int) -> [Double]? {
        precondition((n == 2 || n == 3) && a.count >= 9, "SmallDenseSolve: order 2 or 3 of a 3×3 array")
        var out = [Double](repeating: 0, count: 9)
        if n == 2 {
            let det = a[0] * a[4] - a[1] * a[3]
            guard abs(det) > 1e-300 else { return nil }
            out[0] = a[4] / det; out[1] = -a[1] / det; out[3] = -a[3] / det; out[4] = a[0] / det
            return out
        }
        let c00 = a[4] * a[8] - a[5] * a[7], c01 = a[5] * a[6] - a[3] * a[8], c02 = a[3] * a[7] - a[4] * a[6]
        let det = a[0] * c00 + a[1] * c01 + a[2] * c02
        guard abs(det) > 1e-300 else { return nil }
        out[0] = c00 / det; out[3] = c01 / det; out[6] = c02 / det
        out[1] = (a[2] * a[7] - a[1] * a[8]) / det; out[4] = (a[0] * a[8] - a[2] * a[6]) / det; out[7] = (a[1] * a[6] - a[0] * a[7]) / det
        out[2] = (a[1] * a[5] - a[2] * a[4]) / det; out[5] = (a[2] * a[3] - a[0] * a[5]) / det; out[8] = (a[0] * a[4] - a[1] * a[3]) / det
        return out
    }
}
