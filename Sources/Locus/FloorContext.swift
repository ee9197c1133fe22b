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
    /// Raw addresses by slot.
    private let rawAddresses: [UInt16]
    /// The address → slot map as an open-addressing table: entry (address + i) mod size, i = 0, 1, …,
    /// holds the slot of the first address that hashed there (−1: empty). At least four entries per
    /// locator (and a power of two), so a lookup is usually one probe — a row's locator is found in
    /// a handful of instructions, not by a scan of the floor's addresses.
    private let slotTable: [Int32]
    private let slotTableMask: Int
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
        rawAddresses = floor.locators.map(\.address.rawValue)
        (slotTable, slotTableMask) = Self.slotTable(rawAddresses)
        var configuration = base
        configuration.tagHeightMeters = floor.tagHeightMeters
        solver = Trilaterator(configuration: configuration)
        mode = configuration.resolvedMode(for: positions)
    }

    /// The slot of the locator with this address, or nil when the floor has none (the first slot
    /// with it, should a site repeat an address). Expected O(1).
    @inline(__always) func slot(of address: UInt16) -> Int? {
        var h = Int(address) & slotTableMask
        while true {
            let slot = Int(slotTable[h])
            if slot < 0 { return nil }
            if rawAddresses[slot] == address { return slot }
            h = (h + 1) & slotTableMask
        }
    }

    /// The open-addressing table of `addresses` (slot by address, linear probing) and its index mask.
    /// Never full (≥ 4 entries per address), so every probe sequence ends at an empty entry.
    private static func slotTable(_ addresses: [UInt16]) -> ([Int32], Int) {
        var size = 16
        while size < 4 * addresses.count { size *= 2 }
        var table = [Int32](repeating: -1, count: size)
        for (slot, address) in addresses.enumerated() {
            var h = Int(address) & (size - 1)
            while table[h] >= 0 {
                if addresses[Int(table[h])] == address { break } // a repeated address keeps its first slot
                h = (h + 1) & (size - 1)
            }
            if table[h] < 0 { table[h] = Int32(slot) }
        }
        return (table, size - 1)
    }
}
