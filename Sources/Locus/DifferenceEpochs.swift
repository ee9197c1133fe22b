import LocusCore
import LocusSolvers

/// The range differences (TDoA) of every tag's open epoch, beside the epoch table that times them.
///
/// A difference joins its tag's epoch as a range would — the epoch table (`EpochScheduler`) opens,
/// times, completes and closes it under the same rules, with the difference's B locator as the
/// slot —, and its payload (the two slots, the difference less the locators' biases, its time) is
/// kept here, in arrival order, so that every pair of the epoch is solved (two differences of one B
/// with different references are both kept; a blink's differences stay one run: one group of
/// `DifferencePair`s). An epoch holds either ranges or differences (`PositioningEngine.ingest`:
/// a row of the other kind closes it first).
///
/// Storage: one array per tag, empty (no allocation) for a tag that never sends a difference,
/// emptied keeping its capacity when the epoch closes: steady state allocates nothing.
struct DifferenceEpochs: Sendable {
    /// One difference as the engine holds it until its epoch closes: 24 bytes.
    struct Entry: Sendable {
        /// z − (b_B − b_A), metres.
        var differenceMeters: Double
        var timeSeconds: Double
        /// The floor slots of A and B.
        var referenceSlot: UInt16
        var locatorSlot: UInt16
    }
    /// The most differences one epoch holds: a tag's epoch that reaches it is solved first.
    static let capacity = 256

    private var entries: [[Entry]] = []

    /// Adds a tag (the next index) with no differences.
    mutating func appendTag() { entries.append([]) }

    /// Empties tag `tag`'s row for a new tag with the same index (an evicted tag's index recycled).
    mutating func clear(_ tag: Int) { entries[tag] = [] }

    /// The number of differences in tag `tag`'s open epoch.
    @inline(__always) func count(_ tag: Int) -> Int { entries[tag].count }

    /// Appends a difference to tag `tag`'s open epoch.
    @inline(__always)
    mutating func append(_ tag: Int, _ entry: Entry) { entries[tag].append(entry) }

    /// Empties tag `tag`'s open epoch (keeping its capacity).
    @inline(__always)
    mutating func reset(_ tag: Int) { entries[tag].removeAll(keepingCapacity: true) }

    /// Writes tag `tag`'s open epoch as an epoch of the solvers: its distinct locators' positions (by
    /// first appearance, as A or B) into `locators` with their floor slots into `slots`, and its
    /// pairs (indices into `locators`) into `pairs`; returns the number of locators. The arrays are
    /// emptied first and keep their capacity (no allocation once they reached the epoch's size).
    func gather(_ tag: Int, positions: [Point3], locators: inout [Point3], slots: inout [Int],
                pairs: inout [DifferencePair]) -> Int {
        locators.removeAll(keepingCapacity: true)
        slots.removeAll(keepingCapacity: true)
        pairs.removeAll(keepingCapacity: true)
        func index(_ slot: Int) -> Int {
            if let k = slots.firstIndex(of: slot) { return k }
            slots.append(slot)
            locators.append(positions[slot])
            return slots.count - 1
        }
        for e in entries[tag] {
            let a = index(Int(e.referenceSlot)), b = index(Int(e.locatorSlot))
            pairs.append(DifferencePair(reference: a, locator: b, differenceMeters: e.differenceMeters, timeSeconds: e.timeSeconds))
        }
        return locators.count
    }
}
