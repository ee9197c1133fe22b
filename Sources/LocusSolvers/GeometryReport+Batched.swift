import LocusCore
import LocusNumerics

/// The normal matrix N = HᵀH of unit line-of-sight rows at one point, upper triangle
/// (xx, xy, xz, yy, yz, zz); planar uses the 2×2 block.
struct NormalMatrix: Sendable, Equatable {
    /// N₁₁ = Σ gₓ², unitless.
    var xx = 0.0
    /// N₁₂ = Σ gₓ g_y.
    var xy = 0.0
    /// N₁₃ = Σ gₓ g_z (spatial only).
    var xz = 0.0
    /// N₂₂ = Σ g_y².
    var yy = 0.0
    /// N₂₃ = Σ g_y g_z (spatial only).
    var yz = 0.0
    /// N₃₃ = Σ g_z² (spatial only).
    var zz = 0.0

    /// The zero matrix.
    init() {}

    /// Adds one locator's row g = (p − pᵢ)/r, r = ‖p − pᵢ‖ (planar: p_z is the tag height h):
    /// N += g gᵀ; a locator at zero distance adds nothing (as in `locus_tril_dop`).
    @inline(__always)
    mutating func add(dx: Double, dy: Double, dz: Double) {
        let r2 = dx * dx + dy * dy + dz * dz
        guard r2 > 0 else { return }
        let w = 1 / r2
        xx += w * dx * dx; xy += w * dx * dy; xz += w * dx * dz
        yy += w * dy * dy; yz += w * dy * dz; zz += w * dz * dz
    }

    /// (HDOP, VDOP) from Q = N⁻¹ with the rules of the C kernel's `sym_inverse`: planar
    /// λ_min ≥ rcond · λ_max of the 2×2 block, spatial 1-norm reciprocal condition ≥ rcond, and
    /// PDOP = √trace Q ≤ `maximumDOP`; nil otherwise (degenerate). VDOP is 0 in planar mode.
    @inline(__always)
    func dop(spatial: Bool, minimumReciprocalCondition rcond: Double, maximumDOP: Double) -> (hdop: Double, vdop: Double)? {
        var h2: Double, v2 = 0.0
        if !spatial {
            let a = xx, b = xy, c = yy
            let lmax = SymmetricMatrix3.eigenvalues2x2(xx: a, xy: b, yy: c).major
            let det = a * c - b * b
            guard lmax > 0, lmax.isFinite else { return nil }
            let lmin = det / lmax
            guard lmin >= rcond * lmax else { return nil }
            h2 = c / det + a / det
        } else {
            let a = xx, b = xy, c = xz, d = yy, e = yz, f = zz
            let c00 = d * f - e * e, c01 = c * e - b * f, c02 = b * e - c * d
            let c11 = a * f - c * c, c12 = b * c - a * e, c22 = a * d - b * b
            let det = a * c00 + b * c01 + c * c02
            guard det > 0, det.isFinite else { return nil }
            let id = 1 / det
            let i0 = c00 * id, i1 = c01 * id, i2 = c02 * id, i3 = c11 * id, i4 = c12 * id, i5 = c22 * id
            let n0 = abs(a) + abs(b) + abs(c), n1 = abs(b) + abs(d) + abs(e), n2 = abs(c) + abs(e) + abs(f)
            let q0 = abs(i0) + abs(i1) + abs(i2), q1 = abs(i1) + abs(i3) + abs(i4), q2 = abs(i2) + abs(i4) + abs(i5)
            let rc = 1 / (max(n0, max(n1, n2)) * max(q0, max(q1, q2)))
            guard rc >= rcond else { return nil }
            h2 = i0 + i3
            v2 = i5
        }
        guard h2 >= 0, v2 >= 0 else { return nil }
        let pdop = (h2 + v2).squareRoot()
        guard pdop <= maximumDOP else { return nil }
        return (h2.squareRoot(), v2.squareRoot())
    }
}

extension GeometryReport {
    /// Cells per BLAS block of the batched path (W is block × n doubles).
    static let batchCells = 4096

    /// The batched path. Per block of B cells with centre c̄ (coordinates taken relative to it):
    /// W (B × n) with wⱼᵢ = 1/rⱼᵢ² for locator i in range of cell j (0 otherwise), and the
    /// locators' moment matrix A (n × 10) with columns (1, x, y, z, x², xy, xz, y², yz, z²);
    /// one `cblas_dgemm` gives S = W·A, every cell's weighted moments, and then with p the cell
    /// centre (p_z = h): N_xx = S₀pₓ² − 2pₓSₓ + Sₓₓ, N_xy = S₀pₓp_y − pₓS_y − p_ySₓ + Sₓᵧ, … as in
    /// Σ wᵢ (p − pᵢ)(p − pᵢ)ᵀ, followed by the closed-form inverse of `NormalMatrix.dop`.
    /// No square root per locator–cell pair (the range test compares r² with R²).
    /// Complexity O(cells · n) (the dgemm is 20 · cells · n flops).
    package static func batchedCells(grid: GeometryGrid, locators: [Point3], mode: TrilaterationMode, tagHeightMeters h: Double,
                             options: GeometryReportOptions) -> [GeometryCell] {
        let n = locators.count
        let spatial = mode == .spatial
        let needed = spatial ? 4 : 3
        let range2 = options.maximumRangeMeters * options.maximumRangeMeters
        let rcond = options.trilateration.minimumReciprocalCondition, maxDOP = options.trilateration.maximumDOP
        let total = grid.count
        let block = min(batchCells, max(1, total))
        var w = [Double](repeating: 0, count: block * max(1, n))
        var a = [Double](repeating: 0, count: max(1, n) * 10)
        var s = [Double](repeating: 0, count: block * 10)
        var inRange = [Int](repeating: 0, count: block)
        var xs = [Double](repeating: 0, count: block), ys = [Double](repeating: 0, count: block)
        var cells: [GeometryCell] = []
        cells.reserveCapacity(total)
        var start = 0
        while start < total {
            let m = min(block, total - start)
            // Block centre: the mean of its first and last cell centres (keeps coordinates small).
            let first = grid.centre(index: start), last = grid.centre(index: start + m - 1)
            let cx = 0.5 * (first.x + last.x), cy = 0.5 * (first.y + last.y)
            for i in 0..<n {
                let x = locators[i].x - cx, y = locators[i].y - cy, z = locators[i].z - h
                a[i] = 1; a[i + n] = x; a[i + 2 * n] = y; a[i + 3 * n] = z
                a[i + 4 * n] = x * x; a[i + 5 * n] = x * y; a[i + 6 * n] = x * z
                a[i + 7 * n] = y * y; a[i + 8 * n] = y * z; a[i + 9 * n] = z * z
            }
            for j in 0..<m {
                let c = grid.centre(index: start + j)
                xs[j] = c.x
                ys[j] = c.y
                inRange[j] = 0
            }
            // Locator-major so that W's column i is written contiguously.
            for i in 0..<n {
                let p = locators[i]
                let dz = h - p.z, dz2 = dz * dz
                let column = i * m
                for j in 0..<m {
                    let dx = xs[j] - p.x, dy = ys[j] - p.y
                    let r2 = dx * dx + dy * dy + dz2
                    if r2 <= range2 {
                        inRange[j] += 1
                        w[column + j] = r2 > 0 ? 1 / r2 : 0
                    } else {
                        w[column + j] = 0
                    }
                }
            }
            GeometryMatrixProduct.multiply(rows: m, columns: 10, inner: n, a: w, b: a, into: &s)
            for j in 0..<m {
                let k = inRange[j]
                guard k >= needed else { cells.append(GeometryCell(locatorsInRange: k, hdop: nil, vdop: nil)); continue }
                let px = xs[j] - cx, py = ys[j] - cy
                let s0 = s[j], sx = s[j + m], sy = s[j + 2 * m], sz = s[j + 3 * m]
                var nm = NormalMatrix()
                nm.xx = s0 * px * px - 2 * px * sx + s[j + 4 * m]
                nm.xy = s0 * px * py - px * sy - py * sx + s[j + 5 * m]
                nm.xz = -px * sz + s[j + 6 * m]
                nm.yy = s0 * py * py - 2 * py * sy + s[j + 7 * m]
                nm.yz = -py * sz + s[j + 8 * m]
                nm.zz = s[j + 9 * m]
                if let d = nm.dop(spatial: spatial, minimumReciprocalCondition: rcond, maximumDOP: maxDOP) {
                    cells.append(GeometryCell(locatorsInRange: k, hdop: d.hdop, vdop: spatial ? d.vdop : nil))
                } else {
                    cells.append(GeometryCell(locatorsInRange: k, hdop: nil, vdop: nil))
                }
            }
            start += m
        }
        return cells
    }
}
