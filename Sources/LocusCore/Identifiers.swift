/// A tag's id, as it appears in the `tag` column of a trace (default `tag`).
public struct TagID: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (a: TagID, b: TagID) -> Bool { a.rawValue.utf8.lexicographicallyPrecedes(b.rawValue.utf8) }
    /// The id used when a trace has no `tag` column.
    public static let single: TagID = "tag"
}

/// A zone's id, unique within its floor.
public struct ZoneID: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (a: ZoneID, b: ZoneID) -> Bool { a.rawValue.utf8.lexicographicallyPrecedes(b.rawValue.utf8) }
}

/// A floor's id, unique within its site.
public struct FloorID: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (a: FloorID, b: FloorID) -> Bool { a.rawValue.utf8.lexicographicallyPrecedes(b.rawValue.utf8) }
}
