/// One floor of a site: its extent, locators and zones.
public struct Floor: Sendable, Hashable {
    public var id: FloorID
    public var name: String
    /// The floor rectangle: origin (lower-left corner) and size, metres.
    public var originX: Double
    public var originY: Double
    public var widthMeters: Double
    public var heightMeters: Double
    /// Height at which tags are carried, metres (planar solving takes it as the tag's z).
    public var tagHeightMeters: Double
    /// The floor's UWB session, if configured.
    public var sessionID: Int?
    public var locators: [Locator]
    public var zones: [Zone]

    public init(id: FloorID, name: String = "", originX: Double = 0, originY: Double = 0,
                widthMeters: Double = 0, heightMeters: Double = 0, tagHeightMeters: Double = 0,
                sessionID: Int? = nil, locators: [Locator] = [], zones: [Zone] = []) {
        self.id = id
        self.name = name
        self.originX = originX
        self.originY = originY
        self.widthMeters = widthMeters
        self.heightMeters = heightMeters
        self.tagHeightMeters = tagHeightMeters
        self.sessionID = sessionID
        self.locators = locators
        self.zones = zones
    }

    /// As the SDK reports it: at least 3 locators and a session id.
    public var isPositioningReady: Bool { locators.count >= 3 && sessionID != nil }

    /// The locator with this address, if the floor has it. O(n).
    public func locator(_ address: LocatorAddress) -> Locator? {
        locators.first { $0.address == address }
    }
}
