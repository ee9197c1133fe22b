import LocusCore
import LocusSolvers

/// What the engine keeps per floor: locator positions and biases by slot (the floor's locator
/// order), the address → slot map, and the solver settings for the floor.
struct FloorContext: Sendable {
    /// The floor as the site gives it.
    let floor: Floor
    /// Locator positions, by slot.
    let positions: [Point3]
    /// Locator range biases (metres), by slot: subtracted from each range.
    let biasesMeters: [Double]
    /// True when no locator of the floor carries a bias or a range scale (no calibration).
    let isUncalibrated: Bool
    /// The locators, by slot (the filter's range updates take them whole).
    let locators: [Locator]
    /// Addresses, by slot.
    let addresses: [LocatorAddress]
    /// The address → slot map.
    private let slots: LocatorSlotTable
    /// The solver for this floor (its tag height and mode).
    let solver: Trilaterator
    /// The mode the floor's locators are solved in (planar or spatial).
    let mode: TrilaterationMode

    /// The context of `floor`, with the solver settings `base` at the floor's tag height.
    init(floor: Floor, solver base: TrilaterationConfiguration) {
        self.floor = floor
        positions = floor.locators.map(\.position)
        biasesMeters = floor.locators.map(\.biasMeters)
        isUncalibrated = floor.locators.allSatisfy { $0.biasMeters == 0 && $0.biasSlope == 0 }
        addresses = floor.locators.map(\.address)
        locators = floor.locators
        slots = LocatorSlotTable(addresses: floor.locators.map(\.address.rawValue))
        var configuration = base
        configuration.tagHeightMeters = floor.tagHeightMeters
        solver = Trilaterator(configuration: configuration)
        mode = configuration.resolvedMode(for: positions)
    }

    /// The slot of the locator with this address, or nil when the floor has none (the first slot
    /// with it, should a site repeat an address). Expected O(1).
    @inline(__always) func slot(of address: UInt16) -> Int? { slots.slot(of: address) }
}
