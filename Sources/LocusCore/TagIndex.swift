/// A tag's dense number within one engine: 0, 1, 2, … in order of first appearance (`TagRegistry`).
/// Every stage that keeps per-tag state (epochs, filters, tag offsets, zone judges) keeps it in an
/// array indexed by this number, so a row's tag is hashed once, at the engine's door.
@usableFromInline package struct TagIndex: Sendable, Hashable, Comparable {
    /// The number, ≥ 0.
    @usableFromInline package var rawValue: Int
    /// The index `rawValue`.
    @inlinable package init(_ rawValue: Int) { self.rawValue = rawValue }
    @inlinable package static func < (a: TagIndex, b: TagIndex) -> Bool { a.rawValue < b.rawValue }
}
