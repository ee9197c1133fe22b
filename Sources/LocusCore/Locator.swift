/// A fixed UWB locator (anchor) on a floor.
public struct Locator: Sendable, Hashable {
    /// The 16-bit short address the trace's `anchor` column refers to.
    public var address: LocatorAddress
    /// Antenna position in the floor frame, metres (`z` defaults to 0 in site files).
    public var position: Point3
    /// Range bias (antenna delay), metres: subtracted from every range measured to this locator.
    public var biasMeters: Double

    public init(address: LocatorAddress, position: Point3, biasMeters: Double = 0) {
        self.address = address
        self.position = position
        self.biasMeters = biasMeters
    }
}
