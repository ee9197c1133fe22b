import LocusCore

/// Rows of `t,x,y` with optional `tag`, `z` and `floor` columns, in file order: the shape shared by
/// truth files and position streams (SPEC §2). Unusable rows are skipped and counted by reason.
struct PointTable: Sendable {
    var timeSeconds: [Double] = []
    var points: [Point3] = []
    var tagIndex: [Int32] = []
    /// −1 when the row names no floor.
    var floorIndex: [Int32] = []
    var line: [Int32] = []
    var tags: [TagID] = []
    var floors: [FloorID] = []
    /// Whether the file had a `z` column (otherwise z is 0).
    var hasZ = false
    var skipped = SkipTally()

    var count: Int { timeSeconds.count }

    /// An empty table.
    init() {}

    /// Forgets the rows, keeping the tags and floors named so far and the skip counts (for a table
    /// filled piece by piece, `PointStream`).
    mutating func removeRows() {
        timeSeconds.removeAll(keepingCapacity: true)
        points.removeAll(keepingCapacity: true)
        tagIndex.removeAll(keepingCapacity: true)
        floorIndex.removeAll(keepingCapacity: true)
        line.removeAll(keepingCapacity: true)
    }

    /// Parses the table from a span of its bytes; `kind` names the file's role in messages ("truth",
    /// "positions").
    /// - Throws: `E5003` when `t`, `x` or `y` is missing; `E5004` on an empty file.
    static func parse(_ bytes: Span<UInt8>, file: String, kind: String) throws(LocusError) -> PointTable {
        try bytes.withUnsafeBufferPointer { b throws(LocusError) in try parse(b, file: file, kind: kind) }
    }

    /// Parses the table; `kind` names the file's role in messages ("truth", "positions").
    /// - Throws: `E5003` when `t`, `x` or `y` is missing; `E5004` on an empty file.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, file: String, kind: String) throws(LocusError) -> PointTable {
        var parser = try PointTableParser(header: bytes, file: file, kind: kind)
        var table = PointTable()
        _ = parser.parse(UnsafeBufferPointer(rebasing: bytes[parser.headerEnd...]), isLast: true, into: &table)
        return table
    }
}

/// The state of a `PointTable` read piece by piece (`PointStream`; one piece: `PointTable.parse`):
/// the header's columns, the tags and floors named so far, the line count.
struct PointTableParser: Sendable {
    /// Where the data rows start in the piece given to `init(header:file:kind:)`.
    let headerEnd: Int
    private let file: String
    private let tCol: Int, xCol: Int, yCol: Int
    private let zCol: Int?, tagCol: Int?, floorCol: Int?
    private let needed: Int
    private var tagLookup: [String: Int32] = [:]
    private var floorLookup: [String: Int32] = [:]
    private var tagCount: Int32 = 0, floorCount: Int32 = 0
    private var nextLine: Int

    /// Reads the header from the start of the input (`bytes` must hold its first line).
    /// - Throws: `E5003` when `t`, `x` or `y` is missing; `E5004` on an empty file.
    init(header bytes: UnsafeBufferPointer<UInt8>, file: String, kind: String) throws(LocusError) {
        self.file = file
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
        (self.tCol, self.xCol, self.yCol) = (tCol, xCol, yCol)
        zCol = header.firstIndex(of: "z")
        tagCol = header.firstIndex(of: "tag")
        floorCol = header.firstIndex(of: "floor")
        needed = max(tCol, xCol, yCol) + 1
        headerEnd = min(scanner.nextOffset, bytes.count)
        nextLine = scanner.nextLineNumber
    }

    /// Parses the rows in `bytes` — the input's next piece, ending with a whole line unless it is the
    /// last (`isLast`) — appending them to `table` (and the tags and floors first named in them, and
    /// the rows skipped). Returns the bytes consumed: all of them, except for a quoted record that
    /// continues past the piece's end.
    mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>, isLast: Bool, into table: inout PointTable) -> Int {
        var scanner = CSVScanner(bytes: bytes, firstLine: nextLine)
        table.hasZ = zCol != nil
        var consumed = bytes.count
        while scanner.nextRecord(inPiece: isLast, consumed: &consumed) {
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
                tag = tagCount
                tagCount += 1
                tagLookup[tagKey] = tag
                table.tags.append(TagID(tagKey))
            }
            var floor: Int32 = -1
            if let fc = floorCol, fc < fields.count {
                let name = scanner.text(fields[fc])
                if !name.isEmpty {
                    if let known = floorLookup[name] { floor = known } else {
                        floor = floorCount
                        floorCount += 1
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
        nextLine = scanner.nextLineNumber
        return consumed
    }
}

/// A `PointTable` read in bounded pieces from any input (`LineChunks`): each `next(into:)` leaves the
/// next piece's rows in the table (its tags, floors and skip counts accumulate).
struct PointStream: Sendable {
    private var chunks: LineChunks
    private var parser: PointTableParser?
    private let kind: String

    /// A stream over `source`; `kind` names the file's role in messages.
    init(source: ByteSource, kind: String, chunkBytes: Int = 1 << 20) {
        chunks = LineChunks(source: source, chunkBytes: chunkBytes)
        self.kind = kind
    }

    /// Replaces the table's rows with the next piece's; false once the input is exhausted.
    /// - Throws: as `PointTableParser.init`; `E5001` when the input cannot be read.
    mutating func next(into table: inout PointTable) throws(LocusError) -> Bool {
        table.removeRows()
        let (name, kind) = (chunks.source.name, self.kind)
        return try chunks.nextPiece(parser: &parser, makeParser: { (bytes) throws(LocusError) in
            let p = try PointTableParser(header: bytes, file: name, kind: kind)
            return (p, p.headerEnd)
        }, parse: { p, piece, isLast in p.parse(piece, isLast: isLast, into: &table) })
    }
}
