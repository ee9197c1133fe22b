import LocusCore
import LocusNumerics
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
/// Storage: a row per tag that sent differences (a tag's 4-byte row index is all a range-only tag
/// costs; an evicted tag's row is recycled), holding the open epoch's entries — emptied keeping their
/// capacity when it closes: steady state allocates nothing — and the tag's last least-squares
/// position (the difference solver's warm start for the next epoch).
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
    /// A tag's differences.
    private struct Row: Sendable {
        var entries: [Entry] = []
        /// The tag's latest least-squares position (a warm start), if any.
        var lastPosition: Point3?
    }
    /// The most differences one epoch holds: a tag's epoch that reaches it is solved first.
    static let capacity = 256

    /// Per tag: its row in `rows`, −1 before its first difference.
    private var rowOfTag: [Int32] = []
    private var rows: [Row] = []
    /// Rows of evicted tags, for the next tag that sends differences.
    private var freeRows: [Int32] = []

    /// Adds a tag (the next index) with no differences.
    mutating func appendTag() { rowOfTag.append(-1) }

    /// Forgets tag `tag` (evicted: its index will name another tag); its row is recycled.
    mutating func clear(_ tag: Int) {
        let r = rowOfTag[tag]
        guard r >= 0 else { return }
        rows[Int(r)].entries.removeAll(keepingCapacity: true)
        rows[Int(r)].lastPosition = nil
        freeRows.append(r)
        rowOfTag[tag] = -1
    }

    /// The number of differences in tag `tag`'s open epoch.
    @inline(__always) func count(_ tag: Int) -> Int {
        let r = rowOfTag[tag]
        return r < 0 ? 0 : rows[Int(r)].entries.count
    }

    /// Appends a difference to tag `tag`'s open epoch.
    @inline(__always)
    mutating func append(_ tag: Int, _ entry: Entry) {
        var r = rowOfTag[tag]
        if r < 0 { r = newRow(tag) }
        rows[Int(r)].entries.append(entry)
    }

    /// A row for tag `tag` (a recycled one when there is).
    @inline(never)
    private mutating func newRow(_ tag: Int) -> Int32 {
        let r: Int32
        if let free = freeRows.popLast() {
            r = free
        } else {
            r = Int32(truncatingIfNeeded: rows.count)
            rows.append(Row())
        }
        rowOfTag[tag] = r
        return r
    }

    /// Empties tag `tag`'s open epoch (keeping its capacity).
    @inline(__always)
    mutating func reset(_ tag: Int) {
        let r = rowOfTag[tag]
        if r >= 0 { rows[Int(r)].entries.removeAll(keepingCapacity: true) }
    }

    /// Tag `tag`'s latest least-squares position, if any.
    func lastPosition(_ tag: Int) -> Point3? {
        let r = rowOfTag[tag]
        return r < 0 ? nil : rows[Int(r)].lastPosition
    }

    /// Forgets tag `tag`'s latest least-squares position (it moved to another floor).
    mutating func forgetPosition(_ tag: Int) {
        let r = rowOfTag[tag]
        if r >= 0 { rows[Int(r)].lastPosition = nil }
    }

    /// Records tag `tag`'s latest least-squares position (the tag has a row: it sent differences).
    mutating func setLastPosition(_ tag: Int, _ p: Point3) {
        let r = rowOfTag[tag]
        if r >= 0 { rows[Int(r)].lastPosition = p }
    }

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
        guard rowOfTag[tag] >= 0 else { return 0 }
        for e in rows[Int(rowOfTag[tag])].entries {
            let a = index(Int(e.referenceSlot)), b = index(Int(e.locatorSlot))
            pairs.append(DifferencePair(reference: a, locator: b, differenceMeters: e.differenceMeters, timeSeconds: e.timeSeconds))
        }
        return locators.count
    }

    /// The pairs of `pairs` (arrival order) that no later pair of the same two locators supersedes,
    /// in their order, into `latest` (emptied first; no allocation once it has grown). What the
    /// least-squares fix of an epoch solves: the engine reports it at the epoch's time, so, as with
    /// ranges (a locator's newer range replaces the older in the epoch table), each locator pair
    /// counts with its newest difference. Solving every blink of a dense epoch as one still position
    /// put the fix at the blinks' mean time, half an epoch late (real ranges turned into differences,
    /// 100 blinks a second at 4 Hz: 0.11–0.13 s; docs/tdoa.md, "Real ranges as differences"). A
    /// blink keeps its run (the kept pairs stay in order). The filter takes every difference (each at
    /// its own time), not these. At most n(n − 1)/2 comparisons, n ≤ `capacity` (one blink: n − 1 pairs, none superseded).
    static func latestOfEachPair(_ pairs: [DifferencePair], into latest: inout [DifferencePair]) {
        latest.removeAll(keepingCapacity: true)
        for k in pairs.indices {
            let p = pairs[k]
            var superseded = false
            for j in (k + 1)..<pairs.count {
                let q = pairs[j]
                if (q.reference == p.reference && q.locator == p.locator) || (q.reference == p.locator && q.locator == p.reference) {
                    superseded = true
                    break
                }
            }
            if !superseded { latest.append(p) }
        }
    }
}
