import LocusCore

/// Rows of `t,x,y` with optional `tag`, `z` and `floor` columns, in file order: the shape shared by
/// truth files and position streams (SPEC §2). Unusable rows are skipped and counted by reason.
package struct PointTable: Sendable {
    package var timeSeconds: [Double] = []
    package var points: [Point3] = []
    package var tagIndex: [Int32] = []
    /// −1 when the row names no floor.
    package var floorIndex: [Int32] = []
    package var line: [Int32] = []
    package var tags: [TagID] = []
    package var floors: [FloorID] = []
    /// Whether the file had a `z` column (otherwise z is 0).
    package var hasZ = false
    package var skipped = SkipTally()

    package var count: Int { timeSeconds.count }

    /// Parses the table; `kind` names the file's role in messages ("truth", "positions").
    /// - Throws: `E5003` when `t`, `x` or `y` is missing; `E5004` on an empty file.
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>, file: String, kind: String) throws(LocusError) -> PointTable {
        var scanner = CSVScanner(bytes: bytes)
        guard scanner.nextRecord() else {
            throw LocusError(.malformedCSV, "empty \(kind) file: expected a header line naming t, x, y",
                             context: .init(file: file, line: 1))
        }
        let header = scanner.fields.map { scanner.text($0).lowercased() }
        let missing = ["t", "x", "y"].filter { !header.contains($0) }
        guard missing.isEmpty, let tCol = header.firstIndex(of: "t"), let xCol = header.firstIndex(of: "x"),
              let yCol = header.firstIndex(of: "y") else {
            throw LocusError(.csvMissingColumn, "\(kind) header lacks required column\(missing.count > 1 ? "s" : "") \(missing.joined(separator: ", "))",
                             context: .init(file: file, line: scanner.lineNumber))
        }
        let zCol = header.firstIndex(of: "z"), tagCol = header.firstIndex(of: "tag"), floorCol = header.firstIndex(of: "floor")
        let needed = max(tCol, xCol, yCol) + 1
        var table = PointTable()
        table.hasZ = zCol != nil
        var tagLookup: [String: Int32] = [:]
        var floorLookup: [String: Int32] = [:]
        while scanner.nextRecord() {
            let line = scanner.lineNumber
            let fields = scanner.fields
            guard fields.count >= needed else { table.skipped.record(.missingField, line: line); continue }
            guard let t = CSVNumberParser.parseDouble(bytes, fields[tCol].start, fields[tCol].end),
                  let x = CSVNumberParser.parseDouble(bytes, fields[xCol].start, fields[xCol].end),
                  let y = CSVNumberParser.parseDouble(bytes, fields[yCol].start, fields[yCol].end) else {
                table.skipped.record(.unparseableNumber, line: line); continue
            }
            var z = 0.0
            if let zc = zCol, zc < fields.count, fields[zc].end > fields[zc].start {
                guard let v = CSVNumberParser.parseDouble(bytes, fields[zc].start, fields[zc].end) else {
                    table.skipped.record(.unparseableNumber, line: line); continue
                }
                z = v
            }
            guard t.isFinite, x.isFinite, y.isFinite, z.isFinite else { table.skipped.record(.nonFinite, line: line); continue }
            var tag: Int32
            let tagName = tagCol.flatMap { $0 < fields.count ? scanner.text(fields[$0]) : nil } ?? ""
            let tagKey = tagName.isEmpty ? TagID.single.rawValue : tagName
            if let known = tagLookup[tagKey] { tag = known } else {
                tag = Int32(table.tags.count)
                tagLookup[tagKey] = tag
                table.tags.append(TagID(tagKey))
            }
            var floor: Int32 = -1
            if let fc = floorCol, fc < fields.count {
                let name = scanner.text(fields[fc])
                if !name.isEmpty {
                    if let known = floorLookup[name] { floor = known } else {
                        floor = Int32(table.floors.count)
                        floorLookup[name] = floor
                        table.floors.append(FloorID(name))
                    }
                }
            }
            table.timeSeconds.append(t)
            table.points.append(Point3(x: x, y: y, z: z))
            table.tagIndex.append(tag)
            table.floorIndex.append(floor)
            table.line.append(Int32(truncatingIfNeeded: line))
        }
        return table
    }
}
