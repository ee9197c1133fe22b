import LocusCore

/// The open epochs of every tag in flat storage: the engine's form of `EpochAssembler` (the
/// epoch rules are documented there and live here, once).
///
/// Row r (a tag) owns `stride` range cells (−1 marks a slot absent from the epoch; ranges are ≥ 0)
/// and `stride` slot cells (the present slots, in order of first appearance), plus a plain
/// `Row` of scalars. No per-row arrays: a row costs `24 + 12·stride` bytes, reading a row's
/// scalars retains nothing, and adding a range or closing an epoch allocates nothing.
package struct EpochTable: Sendable {
    /// Cut period, seconds (1/rate).
    package let periodSeconds: Double
    /// A gap longer than this closes the epoch, seconds.
    package let pauseSeconds: Double
    /// Cells per row: the most locators of any floor.
    package let stride: Int

    private struct Row: Sendable {
        var epochStart = 0.0
        var lastTime = -Double.infinity
        var count: Int32 = 0
    }
    private var rows: [Row] = []
    private var ranges: [Double] = []
    private var slots: [Int32] = []

    /// - Parameters:
    ///   - stride: slots per row (the widest floor's locator count).
    ///   - rateHertz: output rate; the period is 1/rate.
    ///   - pauseSeconds: the gap that separates bursts; default half the period.
    package init(stride: Int, rateHertz: Double, pauseSeconds: Double? = nil) {
        precondition(rateHertz > 0 && rateHertz.isFinite, "EpochTable: rate must be positive")
        precondition(stride >= 0, "EpochTable: stride must not be negative")
        periodSeconds = 1 / rateHertz
        self.pauseSeconds = pauseSeconds ?? 0.5 / rateHertz
        self.stride = stride
    }

    /// The number of rows.
    package var count: Int { rows.count }

    /// Adds a row with no open epoch; returns its index. Amortised O(stride).
    @discardableResult
    package mutating func appendRow() -> Int {
        rows.append(Row())
        ranges.append(contentsOf: repeatElement(-1, count: stride))
        slots.append(contentsOf: repeatElement(0, count: stride))
        return rows.count - 1
    }

    /// True when row r has an open epoch.
    @inline(__always) package func isOpen(_ r: Int) -> Bool { rows[r].count > 0 }

    /// The open epoch's time: its latest range's time.
    @inline(__always) package func epochTimeSeconds(_ r: Int) -> Double { rows[r].lastTime }

    /// The earliest clock time at which row r's open epoch is due if no range joins it:
    /// min(last + pause, start + period).
    @inline(__always) package func dueSeconds(_ r: Int) -> Double {
        min(rows[r].lastTime + pauseSeconds, rows[r].epochStart + periodSeconds)
    }

    /// True when a range at `t` would close row r's open epoch first: a gap of `pauseSeconds` or
    /// more since its latest range, or `periodSeconds` or more since its first. Decided by comparing
    /// with `dueSeconds` itself, so that a clock standing exactly on the due time (the key of the
    /// engine's due heap) always closes the epoch — never an endless re-queue.
    @inline(__always) package func closes(_ r: Int, at t: Double) -> Bool {
        rows[r].count > 0 && t >= dueSeconds(r)
    }

    /// True when, with the clock at `now`, no range can still join row r's open epoch.
    @inline(__always) package func isDue(_ r: Int, at now: Double) -> Bool { closes(r, at: now) }

    /// Adds a range (≥ 0) of `slot` (< stride) at `t` to row r's epoch, opening one if none is open.
    @inline(__always)
    package mutating func add(_ r: Int, slot: Int, rangeMeters range: Double, timeSeconds t: Double) {
        precondition(range >= 0 && slot >= 0 && slot < stride, "EpochTable: ranges are ≥ 0 and slots < stride")
        let base = r * stride
        if rows[r].count == 0 { rows[r].epochStart = t }
        if ranges[base + slot] < 0 {
            slots[base + Int(rows[r].count)] = Int32(truncatingIfNeeded: slot)
            rows[r].count += 1
        }
        ranges[base + slot] = range
        rows[r].lastTime = t
    }

    /// The number of slots in row r's open epoch.
    @inline(__always) package func presentCount(_ r: Int) -> Int { Int(rows[r].count) }

    /// The k-th present slot of row r (order of first appearance).
    @inline(__always) package func presentSlot(_ r: Int, _ k: Int) -> Int { Int(slots[r * stride + k]) }

    /// Row r's latest range of `slot` in the open epoch, metres (−1 when absent).
    @inline(__always) package func rangeMeters(_ r: Int, slot: Int) -> Double { ranges[r * stride + slot] }

    /// Copies row r's open epoch into `locators` and `ranges` (k-th present slot: its position from
    /// `positions`, by slot, and its range) and returns the count. Both arrays must hold at least
    /// `presentCount(r)` elements. No allocation; one uniqueness check per array, not per element.
    package func gather(_ r: Int, positions: [Point3], locators: inout [Point3], ranges: inout [Double]) -> Int {
        let n = Int(rows[r].count)
        precondition(n <= locators.count && n <= ranges.count, "EpochTable.gather: scratch too small")
        let base = r * stride
        locators.withUnsafeMutableBufferPointer { lp in
            ranges.withUnsafeMutableBufferPointer { rp in
                slots.withUnsafeBufferPointer { sp in
                    self.ranges.withUnsafeBufferPointer { cells in
                        for k in 0..<n {
                            let slot = Int(sp[base + k])
                            lp[k] = positions[slot]
                            rp[k] = cells[base + slot]
                        }
                    }
                }
            }
        }
        return n
    }

    /// Empties row r's open epoch (after it was solved).
    package mutating func reset(_ r: Int) {
        let base = r * stride
        for k in 0..<Int(rows[r].count) { ranges[base + Int(slots[base + k])] = -1 }
        rows[r].count = 0
    }
}
