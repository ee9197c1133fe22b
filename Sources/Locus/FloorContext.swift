import LocusCore
import LocusSolvers

/// What the engine keeps per floor: locator positions and biases by slot (the floor's locator
/// order), the address → slot map, and the solver settings for the floor.
package struct FloorContext: Sendable {
    /// The floor as the site gives it.
    package let floor: Floor
    /// Locator positions, by slot.
    package let positions: [Point3]
    /// Locator range biases (metres), by slot: subtracted from each range.
    package let biasesMeters: [Double]
    /// True when no locator of the floor carries a bias or a range scale (no calibration).
    package let isUncalibrated: Bool
    /// The locators, by slot (the filter's range updates take them whole).
    package let locators: [Locator]
    /// Addresses, by slot.
    package let addresses: [LocatorAddress]
    private let slotByAddress: [UInt16: Int]
    /// Raw addresses by slot, scanned linearly on small floors (a scan of ≤ 32 16-bit values beats
    /// hashing the key).
    private let rawAddresses: [UInt16]
    /// The solver for this floor (its tag height and mode).
    package let solver: Trilaterator
    /// The mode the floor's locators are solved in (planar or spatial).
    package let mode: TrilaterationMode

    /// The context of `floor`, with the solver settings `base` at the floor's tag height.
    package init(floor: Floor, solver base: TrilaterationConfiguration) {
        self.floor = floor
        positions = floor.locators.map(\.position)
        biasesMeters = floor.locators.map(\.biasMeters)
        isUncalibrated = floor.locators.allSatisfy { $0.biasMeters == 0 && $0.biasSlope == 0 }
        addresses = floor.locators.map(\.address)
        locators = floor.locators
        var map: [UInt16: Int] = [:]
        for (slot, locator) in floor.locators.enumerated() { map[locator.address.rawValue] = slot }
        slotByAddress = map
        rawAddresses = floor.locators.map(\.address.rawValue)
        var configuration = base
        configuration.tagHeightMeters = floor.tagHeightMeters
        solver = Trilaterator(configuration: configuration)
        mode = configuration.resolvedMode(for: positions)
    }

    /// The slot of the locator with this address, or nil when the floor has none.
    /// O(n) scan for n ≤ 32 locators, a hash lookup above.
    @inline(__always) package func slot(of address: UInt16) -> Int? {
        if rawAddresses.count <= 32 { return rawAddresses.firstIndex(of: address) }
        return slotByAddress[address]
    }
}
