/// One measured range difference (TDoA, a SPEC §2 difference row): the tag's distance to `locator`
/// (B) minus its distance to `reference` (A), metres — z = d(tag, B) − d(tag, A), formed by the
/// infrastructure from synchronised locator clocks (c · (t_B − t_A)).
public struct RangeDifference: Sendable, Hashable {
    /// Measurement time, seconds (the data's own clock).
    public var timeSeconds: Double
    public var tag: TagID
    /// The reference locator A.
    public var reference: LocatorAddress
    /// The other locator B.
    public var locator: LocatorAddress
    /// d(tag, B) − d(tag, A), metres, as reported (locator biases not yet removed).
    public var differenceMeters: Double
    /// The floor named by the row, or nil for the stream's default floor.
    public var floor: FloorID?

    public init(timeSeconds: Double, tag: TagID = .single, reference: LocatorAddress, locator: LocatorAddress,
                differenceMeters: Double, floor: FloorID? = nil) {
        self.timeSeconds = timeSeconds
        self.tag = tag
        self.reference = reference
        self.locator = locator
        self.differenceMeters = differenceMeters
        self.floor = floor
    }
}
