/// A floor's position in its site's `floors` (`Site.floorIndex(of:)` is the one lookup from an id).
/// Per-floor state (locator slots, solvers, zone judges) lives in arrays indexed by it.
@usableFromInline package struct FloorIndex: Sendable, Hashable, Comparable {
    /// The position, ≥ 0.
    @usableFromInline package var rawValue: Int
    /// The index `rawValue`.
    @inlinable package init(_ rawValue: Int) { self.rawValue = rawValue }
    @inlinable package static func < (a: FloorIndex, b: FloorIndex) -> Bool { a.rawValue < b.rawValue }
}
