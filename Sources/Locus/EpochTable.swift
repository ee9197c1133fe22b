import LocusCore

/// The open epochs of every tag in flat storage: the engine's form of `EpochAssembler` (the
/// epoch rules are documented there and live here, once).
///
/// One array of 16-byte cells, `stride + 3` per row (a tag; more with range times, below): cell 0 holds the epoch's start time
/// and its count of present slots, cell 1 its latest range's time and the tag's round model (below),
/// cell 2 the tag's latest admitted time (kept across epochs: the tag's clock, see
/// `PositioningEngine.ingest`) and its recent round sizes, and cell 3 + j the range of slot j (−1 when
/// absent from the epoch; ranges are ≥ 0) together with the k = j-th present slot (order of first
/// appearance). A row costs `48 + 16·stride` bytes; adding a range touches one array (one uniqueness
/// check), reading a row retains nothing, and nothing allocates.
///
/// Rounds close when complete: cells 1 and 2 also hold the tag's `RoundModel` in their spare
/// words, and `isComplete` tells the engine it can solve a round without waiting for the pause.
///
/// With `keepsRangeTimes`, each slot's range time is kept too, two to a cell after the range cells
/// (⌈stride/2⌉ more cells a row: 8·stride bytes for an even stride): the tightly coupled filter takes
/// an epoch's ranges when it closes, each at its own time (`PositioningEngine.applyPendingRanges`).
/// In the row, not in an array of their own: adding a range writes one array (one uniqueness check,
/// one row of cache lines), not two.
package struct EpochTable: Sendable {
    /// Cut period, seconds (1/rate).
    package let periodSeconds: Double
    /// A gap longer than this closes the epoch, seconds.
    package let pauseSeconds: Double
    /// Cells per row: the most locators of any floor.
    package let stride: Int

    /// A range (or a time) and a slot (or a count) — or, after the range cells, two range times. Two
    /// words: `value` is the first as a Double, `index` the second's low 32 bits; a time cell's times
    /// are the two words as Doubles (bit casts, no conversion).
    private struct Cell: Sendable {
        var first: UInt64
        var second: UInt64
        init(value: Double, index: Int32) {
            first = value.bitPattern
            second = UInt64(UInt32(bitPattern: index))
        }
        var value: Double {
            @inline(__always) get { Double(bitPattern: first) }
            @inline(__always) set { first = newValue.bitPattern }
        }
        var index: Int32 {
            @inline(__always) get { Int32(truncatingIfNeeded: second) }
            @inline(__always) set { second = UInt64(UInt32(bitPattern: newValue)) }
        }
    }
    /// Cells per row: `stride` range cells after the `header` cells, then (with `keepsRangeTimes`)
    /// ⌈stride/2⌉ time cells.
    private let width: Int
    /// Where a row's time cells start: `header + stride`.
    private let timesOffset: Int
    /// Header cells per row (start and count, latest range time, latest admitted time).
    private static let header = 3
    private var cells: [Cell] = []
    private var rows = 0
    /// Whether each slot's range time is kept (in the row's time cells: meaningful for the slots
    /// present in the open epoch).
    let keepsRangeTimes: Bool

    /// How an epoch ended, for the round model.
    package enum Ending: Sendable {
        /// A gap of `pauseSeconds` passed after its latest range, or it was complete: a round.
        case round
        /// Cut by the period rule while ranges kept coming: a continuous stream, no rounds.
        case period
    }

    /// - Parameters:
    ///   - stride: slots per row (the widest floor's locator count).
    ///   - rateHertz: output rate; the period is 1/rate.
    ///   - pauseSeconds: the gap that separates bursts; default half the period.
    ///   - keepsRangeTimes: keep each slot's range time (for `gatherRanges`).
    package init(stride: Int, rateHertz: Double, pauseSeconds: Double? = nil, keepsRangeTimes: Bool = false) {
        precondition(rateHertz > 0 && rateHertz.isFinite, "EpochTable: rate must be positive")
        precondition(stride >= 0, "EpochTable: stride must not be negative")
        periodSeconds = 1 / rateHertz
        self.pauseSeconds = pauseSeconds ?? 0.5 / rateHertz
        self.stride = stride
        timesOffset = Self.header + stride
        width = timesOffset + (keepsRangeTimes ? (stride + 1) / 2 : 0)
        self.keepsRangeTimes = keepsRangeTimes
    }

    /// The number of rows.
    package var count: Int { rows }

    /// Adds a row with no open epoch; returns its index. Amortised O(stride).
    @discardableResult
    package mutating func appendRow() -> Int {
        cells.append(Cell(value: 0, index: 0))
        cells.append(Cell(value: -.infinity, index: 0))  // latest range time; round model
        cells.append(Cell(value: -.infinity, index: 0))  // latest admitted time; recent round sizes
        cells.append(contentsOf: repeatElement(Cell(value: -1, index: 0), count: stride))
        cells.append(contentsOf: repeatElement(Cell(value: 0, index: 0), count: width - timesOffset))  // range times
        rows += 1
        return rows - 1
    }

    /// Prefetches row r's cells (`CachePrefetch`): its epoch is about to take ranges.
    @inline(__always) package func prefetchRow(_ r: Int) {
        guard r < rows else { return }
        cells.withUnsafeBufferPointer { c in
            CachePrefetch.bytes(UnsafeRawPointer(c.baseAddress! + r &* width), count: width * MemoryLayout<Cell>.stride)
        }
    }

    /// Header cell k (< `header`) of row r: one check that the row exists, then the cell addressed
    /// with wrapping arithmetic (`cells[r * width + k]` checked the multiplication, the addition and
    /// the index, on every read of the per-range path).
    @inline(__always) private func headerCell(_ r: Int, _ k: Int) -> Cell {
        precondition(UInt(bitPattern: r) < UInt(bitPattern: rows), "EpochTable: no such row")
        return cells.withUnsafeBufferPointer { $0.baseAddress![r &* width &+ k] }
    }

    /// Range cell j (< `stride`: slot j's range, and the j-th present slot) of row r.
    @inline(__always) private func rangeCell(_ r: Int, _ j: Int) -> Cell {
        precondition(UInt(bitPattern: r) < UInt(bitPattern: rows) && UInt(bitPattern: j) < UInt(bitPattern: stride),
                     "EpochTable: no such row or slot")
        return cells.withUnsafeBufferPointer { $0.baseAddress![r &* width &+ Self.header &+ j] }
    }

    /// True when row r has an open epoch.
    @inline(__always) package func isOpen(_ r: Int) -> Bool { headerCell(r, 0).index > 0 }

    /// The tag's latest admitted time (−∞ before its first): the time of its latest range (`add`)
    /// or of a fix taken as it is (`admit(_:atSeconds:)`), whether or not an epoch is open.
    @inline(__always) package func latestAdmittedSeconds(_ r: Int) -> Double { headerCell(r, 2).value }

    /// Records a time admitted without a range (a ready fix): the tag's latest admitted time.
    package mutating func admit(_ r: Int, atSeconds t: Double) { cells[r * width + 2].value = t }

    /// The open epoch's start: its first range's time.
    @inline(__always) package func startSeconds(_ r: Int) -> Double { headerCell(r, 0).value }

    /// The open epoch's time: its latest range's time.
    @inline(__always) package func epochTimeSeconds(_ r: Int) -> Double { headerCell(r, 1).value }

    /// The earliest clock time at which row r's open epoch is due if no range joins it:
    /// min(last + pause, start + period).
    @inline(__always) package func dueSeconds(_ r: Int) -> Double {
        min(headerCell(r, 1).value + pauseSeconds, headerCell(r, 0).value + periodSeconds)
    }

    /// True when a range at `t` would close row r's open epoch first: a gap of `pauseSeconds` or
    /// more since its latest range, or `periodSeconds` or more since its first. Decided by comparing
    /// with `dueSeconds` itself, so that a clock standing exactly on the due time (the key of the
    /// engine's due heap) always closes the epoch — never an endless re-queue.
    @inline(__always) package func closes(_ r: Int, at t: Double) -> Bool {
        isOpen(r) && t >= dueSeconds(r)
    }

    /// True when, with the clock at `now`, no range can still join row r's open epoch.
    @inline(__always) package func isDue(_ r: Int, at now: Double) -> Bool { closes(r, at: now) }

    /// Adds a range (≥ 0) of `slot` (< stride) at `t` to row r's epoch, opening one if none is open.
    /// Returns true when the range opened the epoch.
    @inline(__always) @discardableResult
    package mutating func add(_ r: Int, slot: Int, rangeMeters range: Double, timeSeconds t: Double) -> Bool {
        precondition(range >= 0 && slot >= 0 && slot < stride && r >= 0 && r < rows,
                     "EpochTable: ranges are ≥ 0, slots < stride, rows exist")
        // r < rows and slot < stride (just checked), and the count of present slots is < stride: every
        // cell below is in row r, addressed with wrapping arithmetic (no overflow branches).
        let base = r &* width
        let opened = cells.withUnsafeMutableBufferPointer { c in
            let row = c.baseAddress! + base, ranges = row + Self.header
            let count = Int(row[0].index)
            if count == 0 {
                row[0].value = t
            }
            var model = Self.roundModel(row)
            if count == 0 { model.opened(sinceLatestSeconds: t - row[2].value, pauseSeconds: pauseSeconds, slot: slot) }
            let isRepeat = ranges[slot].value >= 0
            if !isRepeat {
                ranges[count].index = Int32(truncatingIfNeeded: slot)
                row[0].index = Int32(truncatingIfNeeded: count &+ 1)
            }
            model.added(slot: slot, count: Int(row[0].index), isRepeat: isRepeat)
            Self.store(model, row)
            ranges[slot].value = range
            row[1].value = t
            row[2].value = t
            if keepsRangeTimes { Self.setRangeTime(t, slot: slot, times: row + timesOffset) }
            return count == 0
        }
        return opened
    }

    /// True when row r's open epoch is a complete round (`RoundModel`): no range is expected to
    /// join it, so it can be solved now.
    @inline(__always) package func isComplete(_ r: Int) -> Bool {
        RoundModel(slots: UInt32(bitPattern: headerCell(r, 1).index), sizes: UInt32(bitPattern: headerCell(r, 2).index)).isComplete
    }

    /// The way row r's open epoch would end if closed with the clock at `now`: complete or past its
    /// pause — a round —, or cut by the period rule.
    @inline(__always) package func ending(_ r: Int, at now: Double) -> Ending {
        isComplete(r) || now >= headerCell(r, 1).value + pauseSeconds ? .round : .period
    }

    /// Forgets row r's round model (the tag moved to another floor: other locators).
    package mutating func forgetRounds(_ r: Int) {
        cells[r * width + 1].index = 0
        cells[r * width + 2].index = 0
    }

    /// Slot `slot`'s range time in a row's time cells (`times`: its first), two to a cell: the
    /// slot-th 8-byte word from there (raw bytes: a Double stored in a cell's UInt64 word).
    @inline(__always)
    private static func setRangeTime(_ t: Double, slot: Int, times: UnsafeMutablePointer<Cell>) {
        UnsafeMutableRawPointer(times).storeBytes(of: t, toByteOffset: slot &* 8, as: Double.self)
    }

    /// Slot `slot`'s range time from a row's time cells (`times`: its first).
    @inline(__always)
    private static func rangeTime(slot: Int, times: UnsafePointer<Cell>) -> Double {
        UnsafeRawPointer(times).loadUnaligned(fromByteOffset: slot &* 8, as: Double.self)
    }

    /// The round model in the spare words of a row's cells 1 and 2 (`row`: its first cell).
    @inline(__always)
    private static func roundModel(_ row: UnsafeMutablePointer<Cell>) -> RoundModel {
        RoundModel(slots: UInt32(bitPattern: row[1].index), sizes: UInt32(bitPattern: row[2].index))
    }

    @inline(__always)
    private static func store(_ model: RoundModel, _ row: UnsafeMutablePointer<Cell>) {
        row[1].index = Int32(bitPattern: model.slots)
        row[2].index = Int32(bitPattern: model.sizes)
    }

    /// The number of slots in row r's open epoch.
    @inline(__always) package func presentCount(_ r: Int) -> Int { Int(headerCell(r, 0).index) }

    /// The k-th present slot of row r (order of first appearance).
    @inline(__always) package func presentSlot(_ r: Int, _ k: Int) -> Int { Int(rangeCell(r, k).index) }

    /// Row r's latest range of `slot` in the open epoch, metres (−1 when absent).
    @inline(__always) package func rangeMeters(_ r: Int, slot: Int) -> Double { rangeCell(r, slot).value }

    /// Copies row r's open epoch into `locators` and `ranges` (k-th present slot: its position from
    /// `positions`, by slot, and its range) and returns the count. Both arrays must hold at least
    /// `presentCount(r)` elements. No allocation; one uniqueness check per array, not per element.
    package func gather(_ r: Int, positions: [Point3], locators: inout [Point3], ranges: inout [Double]) -> Int {
        let base = r &* width, n = presentCount(r)
        precondition(n <= locators.count && n <= ranges.count, "EpochTable.gather: scratch too small")
        // Slots are < stride (checked when added): the cells are addressed from the row's first range
        // cell with wrapping arithmetic (no overflow branch per range).
        locators.withUnsafeMutableBufferPointer { lp in
            ranges.withUnsafeMutableBufferPointer { rp in
                cells.withUnsafeBufferPointer { c in
                    let row = c.baseAddress! + (base &+ Self.header)
                    for k in 0..<n {
                        let slot = Int(row[k].index)
                        lp[k] = positions[slot]
                        rp[k] = row[slot].value
                    }
                }
            }
        }
        return n
    }

    /// Row r's open epoch from its k = `first`-th present slot on, in order of first appearance: the
    /// locator positions (from `positions`, by slot), addresses (`addresses`, by slot), ranges and range
    /// times, written to the four buffers from index 0 (each with room for `presentCount(r) − first`);
    /// returns the count. Needs `keepsRangeTimes`. No allocation.
    package func gatherRanges(_ r: Int, from first: Int, positions: [Point3], addresses: [LocatorAddress],
                              locators: UnsafeMutableBufferPointer<Point3>, addressesOut: UnsafeMutableBufferPointer<LocatorAddress>,
                              ranges: UnsafeMutableBufferPointer<Double>, times: UnsafeMutableBufferPointer<Double>) -> Int {
        precondition(keepsRangeTimes, "EpochTable.gatherRanges: range times are not kept")
        let base = r &* width, n = presentCount(r) - first
        guard n > 0 else { return 0 }
        precondition(n <= locators.count && n <= addressesOut.count && n <= ranges.count && n <= times.count,
                     "EpochTable.gatherRanges: scratch too small")
        // Slots are < stride (checked when added) and, the row's ranges being of one floor, < that
        // floor's locator count (the sizes of `positions` and `addresses`): the indices below stay in
        // bounds, so they are formed with wrapping arithmetic (no overflow branch per range).
        cells.withUnsafeBufferPointer { c in
            positions.withUnsafeBufferPointer { pp in
                addresses.withUnsafeBufferPointer { ap in
                    let row = c.baseAddress! + (base &+ Self.header), rowTimes = c.baseAddress! + (base &+ timesOffset)
                    for k in 0..<n {
                        let slot = Int(row[first &+ k].index)
                        assert(slot < pp.count && slot < ap.count, "EpochTable.gatherRanges: a slot beyond its floor")
                        locators[k] = pp[slot]
                        addressesOut[k] = ap[slot]
                        ranges[k] = row[slot].value
                        times[k] = Self.rangeTime(slot: slot, times: rowTimes)
                    }
                }
            }
        }
        return n
    }

    /// Empties row r's open epoch (after it was solved), learning from how it ended (`ending(_:at:)`
    /// with the clock at its closing; nil: neither, e.g. the end of the stream — nothing learnt).
    @inline(__always)
    package mutating func reset(_ r: Int, ending: Ending? = nil) {
        precondition(r >= 0 && r < rows, "EpochTable.reset: no such row")
        let base = r &* width
        cells.withUnsafeMutableBufferPointer { c in
            // The row exists (just checked): its cells are addressed from its first with wrapping
            // arithmetic, and its present slots and count are < stride, so the range cells are in it
            // too (no overflow branch per slot).
            let row = c.baseAddress! + base
            if let ending {
                var model = Self.roundModel(row)
                switch ending {
                case .round: model.closedRound(count: Int(row[0].index))
                case .period: model.forget()
                }
                Self.store(model, row)
            }
            // The present slots' range cells back to −1 (absent).
            let ranges = row + Self.header
            for k in 0..<Int(row[0].index) { ranges[Int(ranges[k].index)].value = -1 }
            row[0].index = 0
        }
    }
}
