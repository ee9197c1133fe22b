/// One input row of either kind: a range (two-way ranging) or a range difference (TDoA). What a
/// session or a provider takes when a site mixes the two (SPEC §2: a hybrid trace).
public enum Measurement: Sendable, Hashable {
    case range(RangeMeasurement)
    case difference(RangeDifference)

    /// Measurement time, seconds.
    public var timeSeconds: Double {
        switch self {
        case .range(let m): m.timeSeconds
        case .difference(let d): d.timeSeconds
        }
    }

    /// The tag measured.
    public var tag: TagID {
        switch self {
        case .range(let m): m.tag
        case .difference(let d): d.tag
        }
    }

    /// The floor named by the row, or nil for the stream's default floor.
    public var floor: FloorID? {
        get {
            switch self {
            case .range(let m): m.floor
            case .difference(let d): d.floor
            }
        }
        set {
            switch self {
            case .range(var m): m.floor = newValue; self = .range(m)
            case .difference(var d): d.floor = newValue; self = .difference(d)
            }
        }
    }
}
