/// One measured tag–locator distance (a row of `trace.csv`).
public struct RangeMeasurement: Sendable, Hashable {
    /// Measurement time, seconds (the data's own clock).
    public var timeSeconds: Double
    public var tag: TagID
    public var locator: LocatorAddress
    /// Measured distance, metres, as reported (bias not yet removed).
    public var rangeMeters: Double
    /// The floor named by the row, or nil for the stream's default floor.
    public var floor: FloorID?

    public init(timeSeconds: Double, tag: TagID = .single, locator: LocatorAddress, rangeMeters: Double, floor: FloorID? = nil) {
        self.timeSeconds = timeSeconds
        self.tag = tag
        self.locator = locator
        self.rangeMeters = rangeMeters
        self.floor = floor
    }
}
