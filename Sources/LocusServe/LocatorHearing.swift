import Locus
import LocusCore

/// When each locator was last heard — a row naming it (a range, or either end of a range difference)
/// on its floor — for the page's "heard / last range age". Per floor a table by address, built from
/// the site; rows naming an address the floor does not have are not the page's concern (the engine
/// counts them as `unknown_anchor`). `take()` hands over what changed since the previous call, so a
/// frame carries only the locators heard since the last one.
struct LocatorHearing: Sendable {
    /// Per floor: address → locator index (the engine's table).
    private let indices: [LocatorSlotTable]
    private let addresses: [[LocatorAddress]]
    private let floorIDs: [FloorID]
    /// Per floor, per locator: the latest row time (−∞: never).
    private var latest: [[Double]]
    /// (floor, locator) heard since the last `take()`, each once.
    private var changed: [(floor: Int, locator: Int)] = []
    private var marked: [[Bool]]

    init(site: Site) {
        indices = site.floors.map { LocatorSlotTable(addresses: $0.locators.map(\.address.rawValue)) }
        addresses = site.floors.map { $0.locators.map(\.address) }
        floorIDs = site.floors.map(\.id)
        latest = site.floors.map { Array(repeating: -.infinity, count: $0.locators.count) }
        marked = site.floors.map { Array(repeating: false, count: $0.locators.count) }
    }

    /// A row naming `address` on floor `floor` (the site's index) at time `t` (seconds).
    mutating func hear(floor: Int, address: UInt16, at t: Double) {
        guard floor >= 0, floor < indices.count, t.isFinite, let i = indices[floor].slot(of: address) else { return }
        if t > latest[floor][i] { latest[floor][i] = t }
        if !marked[floor][i] {
            marked[floor][i] = true
            changed.append((floor, i))
        }
    }

    /// The locators heard since the previous call, with their latest row time, in the order first
    /// heard since then.
    mutating func take() -> [(floor: FloorID, address: LocatorAddress, timeSeconds: Double)] {
        defer {
            for c in changed { marked[c.floor][c.locator] = false }
            changed.removeAll(keepingCapacity: true)
        }
        return changed.map { (floorIDs[$0.floor], addresses[$0.floor][$0.locator], latest[$0.floor][$0.locator]) }
    }
}
