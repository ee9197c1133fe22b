import LocusCore

/// The usable rows of a range trace, in file order, stored by column (SPEC §2 `trace.csv`). A row is
/// a range or a range difference (TDoA), told apart as `TraceRow` does: a difference row's
/// `reference` (A) differs from its `locator` (B), and its `rangeMeters` is the difference.
///
/// Tags and floors are interned: rows carry indices into `tags` and `floors`. A row's floor index is
/// −1 when the trace has no `floor` column or the cell is empty (the stream's default floor).
package struct RangeTrace: Sendable {
    package var timeSeconds: [Double] = []
    package var rangeMeters: [Double] = []
    package var locator: [UInt16] = []
    /// A of a difference row; the row's `locator` for a range row.
    package var reference: [UInt16] = []
    package var tagIndex: [Int32] = []
    package var floorIndex: [Int32] = []
    /// 1-based line number of each row in its file.
    package var line: [Int32] = []
    /// Tag ids in order of first appearance.
    package var tags: [TagID] = []
    /// Floor ids named by the trace, in order of first appearance.
    package var floors: [FloorID] = []
    /// Rows skipped while reading, by reason.
    package var skipped = SkipTally()

    init() {}

    /// Number of usable rows.
    package var count: Int { timeSeconds.count }

    /// Whether row `i` is a range difference.
    package func isDifference(_ i: Int) -> Bool { reference[i] != locator[i] }

    /// Row `i` (a difference row) as a value.
    package func difference(_ i: Int) -> RangeDifference {
        RangeDifference(timeSeconds: timeSeconds[i], tag: tags[Int(tagIndex[i])], reference: LocatorAddress(reference[i]),
                        locator: LocatorAddress(locator[i]), differenceMeters: rangeMeters[i],
                        floor: floorIndex[i] < 0 ? nil : floors[Int(floorIndex[i])])
    }

    /// Row `i` (a range row) as a value.
    package func measurement(_ i: Int) -> RangeMeasurement {
        RangeMeasurement(timeSeconds: timeSeconds[i], tag: tags[Int(tagIndex[i])], locator: LocatorAddress(locator[i]),
                         rangeMeters: rangeMeters[i], floor: floorIndex[i] < 0 ? nil : floors[Int(floorIndex[i])])
    }

    /// True when the rows are already in non-decreasing time (then `timeOrder()` is 0..<count):
    /// callers can walk the rows directly without the index array.
    package var isTimeOrdered: Bool {
        timeSeconds.withUnsafeBufferPointer { t in
            var i = 1
            while i < t.count { if t[i] < t[i - 1] { return false }; i += 1 }
            return true
        }
    }

    /// Row indices in non-decreasing time, ties kept in file order (a stable merge of the tags'
    /// already sorted streams): the order a live system would have seen the rows in.
    package func timeOrder() -> [Int] {
        var order = Array(0..<count)
        // Tag streams are each sorted, so the file is a shuffle of sorted runs: a stable sort by
        // time is cheap and keeps file order for ties.
        if !isTimeOrdered {
            let t = timeSeconds
            order.sort { a, b in t[a] < t[b] || (t[a] == t[b] && a < b) }
        }
        return order
    }
}
