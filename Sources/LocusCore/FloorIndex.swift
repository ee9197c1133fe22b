/// A floor's position in its site's `floors` (`Site.floorIndex(of:)` is the one lookup from an id).
/// Per-floor state (locator slots, solvers, zone judges) lives in arrays indexed by it.
public struct FloorIndex: Sendable, Hashable, Comparable {
    /// The position, ≥ 0.
    public var rawValue: Int
    /// The index `rawValue`.
    @inlinable public init(_ rawValue: Int) { self.rawValue = rawValue }
    @inlinable public static func < (a: FloorIndex, b: FloorIndex) -> Bool { a.rawValue < b.rawValue }
}
