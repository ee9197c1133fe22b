/// The judgement parameters of one zone (SPEC §1 and §4), with the console's field names in the docs.
public struct ZoneRules: Sendable, Hashable {
    /// `inDist`: a fix qualifies when its planar distance to the polygon is at most this, metres.
    public var inDistanceMeters: Double
    /// `inCount`: detections needed to enter (0 never enters).
    public var inCount: Int
    /// `inCountInterval`: the largest gap between consecutive counted detections, seconds.
    public var inCountIntervalSeconds: Double
    /// `outPeriod`: exit once the clock passes the last detection plus this, seconds.
    public var outPeriodSeconds: Double
    /// `priority`: among qualifying zones only the highest values get a detection.
    public var priority: Int
    /// `callInout`: false suppresses enter and exit events (state and dwell go on).
    public var callInout: Bool
    /// `dwellSeconds`: period of dwell events while inside, seconds; 0 turns them off.
    public var dwellSeconds: Double

    public init(inDistanceMeters: Double, inCount: Int, inCountIntervalSeconds: Double, outPeriodSeconds: Double,
                priority: Int, callInout: Bool, dwellSeconds: Double) {
        self.inDistanceMeters = inDistanceMeters
        self.inCount = inCount
        self.inCountIntervalSeconds = inCountIntervalSeconds
        self.outPeriodSeconds = outPeriodSeconds
        self.priority = priority
        self.callInout = callInout
        self.dwellSeconds = dwellSeconds
    }

    /// The defaults of SPEC §1 — the one place they are written: `inDist` 3.0, `inCount` 1,
    /// `inCountInterval` 1, `outPeriod` 3, `priority` 0, `callInout` true, `dwellSeconds` 5.
    public static let standard = ZoneRules(inDistanceMeters: 3.0, inCount: 1, inCountIntervalSeconds: 1,
                                           outPeriodSeconds: 3, priority: 0, callInout: true, dwellSeconds: 5)
}
