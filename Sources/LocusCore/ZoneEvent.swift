/// A zone event (SPEC §3): a tag entered, dwelt in or left a zone.
public struct ZoneEvent: Sendable, Hashable {
    /// What happened. The raw values are the wire spellings; the declaration order is the order of
    /// events at equal times (SPEC §4.7: exit before enter before dwell).
    public enum Kind: String, Sendable, Hashable, CaseIterable, Comparable {
        case exit, enter, dwell
        var rank: Int { switch self { case .exit: 0; case .enter: 1; case .dwell: 2 } }
        public static func < (a: Kind, b: Kind) -> Bool { a.rank < b.rank }
    }

    /// Event time, seconds: the detection time for `enter`, tLast + outPeriod for `exit`,
    /// tEnter + k·dwellSeconds for `dwell`.
    public var timeSeconds: Double
    public var tag: TagID
    public var floor: FloorID
    public var zone: ZoneID
    public var kind: Kind
    /// For `dwell`: seconds since entry (k·dwellSeconds); nil otherwise.
    public var dwellSeconds: Double?

    public init(timeSeconds: Double, tag: TagID, floor: FloorID, zone: ZoneID, kind: Kind, dwellSeconds: Double? = nil) {
        self.timeSeconds = timeSeconds
        self.tag = tag
        self.floor = floor
        self.zone = zone
        self.kind = kind
        self.dwellSeconds = dwellSeconds
    }

    /// The total order of SPEC §4.7: time, then exit < enter < dwell, then tag, then zone id
    /// (then floor, to make the order total).
    public static func precedes(_ a: ZoneEvent, _ b: ZoneEvent) -> Bool {
        if a.timeSeconds != b.timeSeconds { return a.timeSeconds < b.timeSeconds }
        if a.kind != b.kind { return a.kind < b.kind }
        if a.tag != b.tag { return a.tag < b.tag }
        if a.zone != b.zone { return a.zone < b.zone }
        return a.floor < b.floor
    }
}
