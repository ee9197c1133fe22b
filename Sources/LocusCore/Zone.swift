/// A zone of a floor: a simple polygon and its judgement rules.
public struct Zone: Sendable, Hashable {
    public var id: ZoneID
    public var name: String
    /// The polygon's vertices in the floor frame, metres, in either winding, without a repeated
    /// closing vertex (the decoder drops one). At least 3 distinct vertices, simple, non-zero area.
    public var polygon: [Point2]
    public var rules: ZoneRules

    public init(id: ZoneID, name: String = "", polygon: [Point2], rules: ZoneRules = .standard) {
        self.id = id
        self.name = name
        self.polygon = polygon
        self.rules = rules
    }
}
