/// A displacement or velocity in a floor's frame (metres, or metres per second for velocity).
public struct Vector3: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var z: Double
    public init(x: Double, y: Double, z: Double) { self.x = x; self.y = y; self.z = z }
    public static let zero = Vector3(x: 0, y: 0, z: 0)

    /// Horizontal norm √(x² + y²).
    @inlinable package var horizontalNorm: Double { (x * x + y * y).squareRoot() }
}
