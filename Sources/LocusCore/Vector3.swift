/// A displacement or velocity in a floor's frame (metres, or metres per second for velocity).
public struct Vector3: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var z: Double
    public init(x: Double, y: Double, z: Double) { self.x = x; self.y = y; self.z = z }
    public static let zero = Vector3(x: 0, y: 0, z: 0)

    /// Horizontal norm √(x² + y²).
    @inlinable public var horizontalNorm: Double { (x * x + y * y).squareRoot() }

    /// Euclidean norm √(x² + y² + z²).
    @inlinable public var norm: Double { (x * x + y * y + z * z).squareRoot() }

    /// Component `axis`: 0 → x, 1 → y, anything else → z.
    @inlinable package subscript(_ axis: Int) -> Double { axis == 0 ? x : axis == 1 ? y : z }

    /// The vector scaled by `a`: (a·x, a·y, a·z).
    @inlinable public static func * (a: Double, v: Vector3) -> Vector3 { Vector3(x: a * v.x, y: a * v.y, z: a * v.z) }

    /// The vector divided by `a`: (x/a, y/a, z/a) (three divisions, not one reciprocal: same bits as dividing each).
    @inlinable public static func / (v: Vector3, a: Double) -> Vector3 { Vector3(x: v.x / a, y: v.y / a, z: v.z / a) }
}
