import LocusCore

/// The usable rows of a range trace, in file order (SPEC §2 `trace.csv`). A row is a range or a
/// range difference (TDoA), told apart by `TraceRow.isDifference`: a difference row's `reference` (A)
/// differs from its `locator` (B), and its `rangeMeters` is the difference.
///
/// Tags and floors are interned: rows carry indices into `tags` and `floors`. A row's floor index is
/// −1 when the trace has no `floor` column or the cell is empty (the stream's default floor). The
/// rows are the parser's `TraceRow`s as parsed (32 bytes each), not copied into columns.
public struct RangeTrace: Sendable {
    /// The rows, in file order.
    package var rows: [TraceRow] = []
    /// Tag ids in order of first appearance.
    public package(set) var tags: [TagID] = []
    /// Floor ids named by the trace, in order of first appearance.
    public package(set) var floors: [FloorID] = []
    /// Rows skipped while reading, by reason.
    public package(set) var skipped = SkipTally()

    init() {}

    /// Usable rows.
    public var count: Int { rows.count }

    /// Row `i` as a value: a range or a range difference (what `FloorSession.ingest` takes).
    public subscript(i: Int) -> Measurement {
        rows[i].isDifference ? .difference(difference(i)) : .range(measurement(i))
    }

    /// Every usable row as a value, in file order (`self[i]` for each). Allocates the array; the
    /// engine's own replay reads `rows` in place.
    public var measurements: [Measurement] { rows.indices.map { self[$0] } }

    /// Row `i` (a difference row) as a value.
    package func difference(_ i: Int) -> RangeDifference {
        let row = rows[i]
        return RangeDifference(timeSeconds: row.timeSeconds, tag: tags[Int(row.tagIndex)], reference: LocatorAddress(row.reference),
                               locator: LocatorAddress(row.locator), differenceMeters: row.differenceMeters,
                               floor: row.floorIndex < 0 ? nil : floors[Int(row.floorIndex)])
    }

    /// Row `i` (a range row) as a value.
    package func measurement(_ i: Int) -> RangeMeasurement {
        let row = rows[i]
        return RangeMeasurement(timeSeconds: row.timeSeconds, tag: tags[Int(row.tagIndex)], locator: LocatorAddress(row.locator),
                                rangeMeters: row.rangeMeters, floor: row.floorIndex < 0 ? nil : floors[Int(row.floorIndex)])
    }

    /// True when the rows are already in non-decreasing time (then `timeOrder()` is `rows.indices`):
    /// callers can walk the rows directly without the index array.
    package var isTimeOrdered: Bool {
        rows.withUnsafeBufferPointer { r in
            var i = 1
            while i < r.count { if r[i].timeSeconds < r[i - 1].timeSeconds { return false }; i += 1 }
            return true
        }
    }

    /// Row indices in non-decreasing time, ties kept in file order (a stable merge of the tags'
    /// already sorted streams): the order a live system would have seen the rows in.
    package func timeOrder() -> [Int] {
        var order = Array(rows.indices)
        // Tag streams are each sorted, so the file is a shuffle of sorted runs: a stable sort by
        // time is cheap and keeps file order for ties.
        if !isTimeOrdered {
            rows.withUnsafeBufferPointer { r in
                order.sort { a, b in r[a].timeSeconds < r[b].timeSeconds || (r[a].timeSeconds == r[b].timeSeconds && a < b) }
            }
        }
        return order
    }
}
