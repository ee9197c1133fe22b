/// A point in a floor's plane, metres.
public struct Point2: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }

    /// Euclidean distance to another point, metres.
    @inlinable public func distance(to other: Point2) -> Double {
        let dx = x - other.x, dy = y - other.y
        return (dx * dx + dy * dy).squareRoot()
    }
}
