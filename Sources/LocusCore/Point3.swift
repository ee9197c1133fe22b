/// A point in a floor's frame, metres; `z` up from the floor's reference.
public struct Point3: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var z: Double
    public init(x: Double, y: Double, z: Double) { self.x = x; self.y = y; self.z = z }

    /// The horizontal (x, y) part.
    @inlinable public var horizontal: Point2 { Point2(x: x, y: y) }

    /// Euclidean distance to another point, metres.
    @inlinable public func distance(to other: Point3) -> Double {
        let dx = x - other.x, dy = y - other.y, dz = z - other.z
        return (dx * dx + dy * dy + dz * dz).squareRoot()
    }

    /// True when all three coordinates are finite.
    @inlinable public var isFinite: Bool { x.isFinite && y.isFinite && z.isFinite }
}
