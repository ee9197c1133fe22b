/// A symmetric 3×3 matrix (a covariance), stored as its six distinct entries.
/// Units are those of the quantity squared (m² for a position covariance).
public struct SymmetricMatrix3: Sendable, Hashable {
    public var xx: Double, xy: Double, xz: Double
    public var yy: Double, yz: Double
    public var zz: Double

    public init(xx: Double, xy: Double = 0, xz: Double = 0, yy: Double, yz: Double = 0, zz: Double) {
        self.xx = xx; self.xy = xy; self.xz = xz
        self.yy = yy; self.yz = yz
        self.zz = zz
    }

    public static let zero = SymmetricMatrix3(xx: 0, yy: 0, zz: 0)

    /// Trace of the horizontal 2×2 block, xx + yy.
    @inlinable var horizontalTrace: Double { xx + yy }

    /// Eigenvalues of the symmetric 2×2 [[xx, xy], [xy, yy]] (a horizontal block) in closed form —
    /// the one 2×2 symmetric eigen-solve of Locus (n×n: `SymmetricEigen` in LocusNumerics, LAPACKE
    /// `dsyev`; this one lives here because the per-fix 95 % radius needs it, allocation-free):
    ///   λ± = m ± √(h² + xy²),  m = ½(xx + yy),  h = ½(xx − yy),
    /// major = λ₊ ≥ minor = λ₋, not clamped (rounding can leave a positive semi-definite block's
    /// minor slightly below 0; callers clamp as they need). Units of the entries.
    @inlinable package static func eigenvalues2x2(xx: Double, xy: Double, yy: Double) -> (major: Double, minor: Double) {
        let mean = 0.5 * (xx + yy)
        let half = 0.5 * (xx - yy)
        let disc = (half * half + xy * xy).squareRoot()
        return (mean + disc, mean - disc)
    }

    /// True when every entry is finite.
    @inlinable public var isFinite: Bool {
        xx.isFinite && xy.isFinite && xz.isFinite && yy.isFinite && yz.isFinite && zz.isFinite
    }
}
