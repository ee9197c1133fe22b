import LocusCore

// The trace reader's header: which columns hold what (SPEC §2), and which sets of them a trace has.
extension TraceRowParser {
    /// Reads the header from a span of the input's start (see `init(header:file:)` over a buffer).
    /// - Throws: `E5004` when there is no header line; `E5003` when a required column is missing.
    package init(header bytes: Span<UInt8>, file: String) throws(LocusError) {
        self = try bytes.withUnsafeBufferPointer { b throws(LocusError) in try TraceRowParser(header: b, file: file) }
    }

    /// Reads the header from the start of the input (`bytes` must hold its first line; blank and
    /// comment lines before it are skipped).
    /// - Throws: `E5004` when there is no header line; `E5003` when a required column is missing.
    init(header bytes: UnsafeBufferPointer<UInt8>, file: String) throws(LocusError) {
        self.file = file
        var scanner = CSVScanner(bytes: bytes)
        guard scanner.nextRecord() else {
            throw LocusError(.malformedCSV, "empty file: expected a header line naming t, anchor, range_m",
                             context: .init(file: file, line: 1))
        }
        let header = scanner.fields.map { scanner.text($0).lowercased() }
        func column(_ name: String) -> Int? { header.firstIndex(of: name) }
        let headerLine = scanner.lineNumber
        var missing: [String] = []
        let tColumn = column("t"), anchorColumn = column("anchor"), rangeColumn = column("range_m")
        let aColumn = column("anchor_a"), bColumn = column("anchor_b"), dColumn = column("tdoa_m")
        let differences = aColumn != nil && bColumn != nil && dColumn != nil
        let ranges = anchorColumn != nil && rangeColumn != nil
        if tColumn == nil { missing.append("t") }
        if !ranges && !differences {
            // Neither set complete: a trace with some difference column and no range column is asked
            // for the difference columns, any other for the range ones.
            if (aColumn != nil || bColumn != nil || dColumn != nil) && anchorColumn == nil && rangeColumn == nil {
                if aColumn == nil { missing.append("anchor_a") }
                if bColumn == nil { missing.append("anchor_b") }
                if dColumn == nil { missing.append("tdoa_m") }
            } else {
                if anchorColumn == nil { missing.append("anchor") }
                if rangeColumn == nil { missing.append("range_m") }
            }
        }
        guard let tCol = tColumn, missing.isEmpty else {
            throw LocusError(.csvMissingColumn,
                             "header lacks required column\(missing.count > 1 ? "s" : "") \(missing.joined(separator: ", ")) (found: \(CSVText.printable(header.joined(separator: ","))))",
                             context: .init(file: file, line: headerLine))
        }
        self.tCol = tCol
        self.aCol = ranges ? anchorColumn! : -1
        self.rCol = ranges ? rangeColumn! : -1
        referenceColumn = differences ? aColumn! : -1
        otherColumn = differences ? bColumn! : -1
        differenceColumn = differences ? dColumn! : -1
        hasDifferences = differences
        tagColumn = column("tag") ?? -1
        floorColumn = column("floor") ?? -1
        rangeNeeded = max(tCol, self.aCol, self.rCol) + 1
        needed = differences ? tCol + 1 : rangeNeeded
        fastNeeded = max(needed, tagColumn + 1, floorColumn + 1)
        headerEnd = min(scanner.nextOffset, bytes.count)
        nextLine = scanner.nextLineNumber
    }
}
