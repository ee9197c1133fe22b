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
    @inlinable package var horizontalTrace: Double { xx + yy }

    /// True when every entry is finite.
    @inlinable package var isFinite: Bool {
        xx.isFinite && xy.isFinite && xz.isFinite && yy.isFinite && yz.isFinite && zz.isFinite
    }
}
