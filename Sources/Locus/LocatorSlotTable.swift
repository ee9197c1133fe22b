/// A floor's locator address → slot map (slot: the locator's position in the floor's list) as an
/// open-addressing table: entry (address + i) mod size, i = 0, 1, …, holds the slot of the first
/// address that hashed there (−1: empty). At least four entries per locator (and a power of two), so
/// a lookup is usually one probe — a row's locator is found in a handful of instructions, not by a
/// scan of the floor's addresses. A repeated address keeps its first slot.
package struct LocatorSlotTable: Sendable {
    /// Raw addresses by slot.
    private let addresses: [UInt16]
    private let table: [Int32]
    private let mask: Int

    package init(addresses: [UInt16]) {
        self.addresses = addresses
        var size = 16
        while size < 4 * addresses.count { size *= 2 }
        var table = [Int32](repeating: -1, count: size)
        for (slot, address) in addresses.enumerated() {
            var h = Int(address) & (size - 1)
            while table[h] >= 0 {
                if addresses[Int(table[h])] == address { break }
                h = (h + 1) & (size - 1)
            }
            if table[h] < 0 { table[h] = Int32(slot) }
        }
        self.table = table
        mask = size - 1
    }

    /// The slot of the locator with this address, or nil when there is none. Expected O(1): the
    /// table is never full, so every probe sequence ends at an empty entry.
    @inline(__always) package func slot(of address: UInt16) -> Int? {
        var h = Int(address) & mask
        while true {
            let slot = Int(table[h])
            if slot < 0 { return nil }
            if addresses[slot] == address { return slot }
            h = (h + 1) & mask
        }
    }
}
