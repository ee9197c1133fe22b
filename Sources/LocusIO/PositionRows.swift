import LocusCore

/// A positions CSV (`t,x,y`; `tag`, `z` and `floor` optional; e.g. what `locus replay
/// --positions` writes) read row by row for zone judgement (`locus zones`): in pieces as it is
/// read, or whole and sorted by time. Each kept row is handed on as a `Row`; unusable rows are
/// skipped and counted by reason (the `PointTable` underneath).
package enum PositionRows {
    /// One kept row: its time (s); its tag and the reader's number for it (0, 1, 2, … by first
    /// appearance); its horizontal position (m); the reader's number for its floor (−1: the row
    /// names none) and that floor; its line in the file.
    package typealias Row = (timeSeconds: Double, tagIndex: Int, tag: TagID, x: Double, y: Double,
                             floorIndex: Int, floor: FloorID?, line: Int)

    /// True when the kept rows of `source` are in non-decreasing time (a reading pass).
    /// - Throws: as `PointStream.next(into:)`.
    package static func isTimeOrdered(_ source: ByteSource) throws(LocusError) -> Bool {
        var stream = PointStream(source: source, kind: "positions")
        var table = PointTable()
        var last = -Double.infinity
        while try stream.next(into: &table) {
            for t in table.timeSeconds {
                if t < last { return false }
                last = t
            }
        }
        return true
    }

    /// Reads `source` in pieces, handing each kept row to `row` in file order and, after each
    /// piece, the rows it kept and every skip so far to `piece`; false (stopped) at the first row
    /// earlier than the one before it.
    /// - Throws: as `PointStream.next(into:)`; what `row` and `piece` throw.
    package static func streamed(_ source: ByteSource, row: (Row) throws(LocusError) -> Void,
                                 piece: (_ keptRows: Int, _ skipped: SkipTally) throws(LocusError) -> Void) throws(LocusError) -> Bool {
        var stream = PointStream(source: source, kind: "positions")
        var table = PointTable()
        var last = -Double.infinity
        while try stream.next(into: &table) {
            for i in 0..<table.count {
                if table.timeSeconds[i] < last { return false }
                last = table.timeSeconds[i]
                try row(table.row(i))
            }
            try piece(table.count, table.skipped)
        }
        return true
    }

    /// Reads `source` whole and hands each kept row to `row` in time order (ties in file order);
    /// returns how many rows were kept and the skips.
    /// - Throws: `E5003`/`E5004` as `PointTable.parse`; `E5001` when the input cannot be read; what
    ///   `row` throws.
    package static func sorted(_ source: ByteSource, row: (Row) throws(LocusError) -> Void) throws(LocusError) -> (keptRows: Int, skipped: SkipTally) {
        let data = try source.readAll()
        let table = try PointTable.parse(data.span, file: source.name, kind: "positions")
        var order = Array(0..<table.count)
        order.sort { a, b in table.timeSeconds[a] < table.timeSeconds[b] || (table.timeSeconds[a] == table.timeSeconds[b] && a < b) }
        for i in order { try row(table.row(i)) }
        return (table.count, table.skipped)
    }
}

extension PointTable {
    /// Row `i` as `PositionRows` hands it on.
    fileprivate func row(_ i: Int) -> PositionRows.Row {
        let floor = Int(floorIndex[i])
        return (timeSeconds[i], Int(tagIndex[i]), tags[Int(tagIndex[i])], points[i].x, points[i].y,
                floor, floor >= 0 ? floors[floor] : nil, Int(line[i]))
    }
}
