/// A fixed UWB locator (anchor) on a floor.
public struct Locator: Sendable, Hashable {
    /// The 16-bit short address the trace's `anchor` column refers to.
    public var address: LocatorAddress
    /// Antenna position in the floor frame, metres (`z` defaults to 0 in site files).
    public var position: Point3
    /// Range bias (antenna delay), metres: subtracted from every range measured to this locator.
    public var biasMeters: Double
    /// Range scale error s (dimensionless, `biasSlope` in site files, default 0): the locator's ranges
    /// read r = (1 + s)·d + b for a true distance d. An extension of SPEC §1 that `locus calibrate
    /// --slope` estimates; with s = 0 only the bias is removed, as the SPEC says.
    public var biasSlope: Double

    public init(address: LocatorAddress, position: Point3, biasMeters: Double = 0, biasSlope: Double = 0) {
        self.address = address
        self.position = position
        self.biasMeters = biasMeters
        self.biasSlope = biasSlope
    }

    /// The distance a measured range stands for: d = (r − b) / (1 + s), metres (not clamped).
    @inlinable public func correctedRange(_ rangeMeters: Double) -> Double {
        biasSlope == 0 ? rangeMeters - biasMeters : (rangeMeters - biasMeters) / (1 + biasSlope)
    }
}
