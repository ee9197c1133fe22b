import Foundation
import LocusCore

/// Reads a range trace (`trace.csv`, SPEC §2) straight from bytes.
///
/// Columns are found by name in the header (any order, extra columns ignored); `t`, `anchor` and
/// `range_m` are required, `tag` and `floor` optional. Each data row is checked and either kept or
/// skipped and counted by reason (`SkipReason`): an empty required field, an unparseable number, an
/// anchor that is not a 16-bit address, a non-finite time or range, a negative range, a time
/// earlier than the tag's previous kept row, or an unconfirmed jump far forward (`TagClock`). Numbers are parsed from bytes (`CSVNumberParser`) and
/// tags interned, so a row costs no allocation. Unknown anchors and floors are the engine's to judge:
/// it knows the site.
package enum TraceReader {
    /// Reads and parses the file at `path`.
    /// - Throws: `E5001` when the file can't be read; `E5003` when a required column is missing;
    ///   `E5004` when there is no header.
    package static func read(path: String) throws(LocusError) -> RangeTrace {
        let data = try FileBytes.read(path: path)
        let result = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Result<RangeTrace, LocusError> in
            Result { () throws(LocusError) -> RangeTrace in try parse(raw.bindMemory(to: UInt8.self), file: path) }
        }
        return try result.get()
    }

    /// Parses trace bytes; `file` names the source in errors.
    /// - Throws: `E5003` when a required column is missing; `E5004` when there is no header.
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>, file: String) throws(LocusError) -> RangeTrace {
        try parse(bytes, file: file, fastRows: true)
    }

    /// Parses trace bytes. With `fastRows` a plain row (no quotes, no comment, all columns present,
    /// numbers that parse) is split and converted in one pass over its bytes; any other row, and
    /// every row when `fastRows` is false, goes through `CSVScanner`. Both paths give the same trace
    /// (the tests compare them).
    /// - Throws: `E5003` when a required column is missing; `E5004` when there is no header.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, file: String, fastRows: Bool) throws(LocusError) -> RangeTrace {
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
        if tColumn == nil { missing.append("t") }
        if anchorColumn == nil { missing.append("anchor") }
        if rangeColumn == nil { missing.append("range_m") }
        guard let tCol = tColumn, let aCol = anchorColumn, let rCol = rangeColumn else {
            throw LocusError(.csvMissingColumn,
                             "header lacks required column\(missing.count > 1 ? "s" : "") \(missing.joined(separator: ", ")) (found: \(CSVText.printable(header.joined(separator: ","))))",
                             context: .init(file: file, line: headerLine))
        }
        let tagCol = column("tag"), floorCol = column("floor")
        let needed = max(tCol, aCol, rCol) + 1
        // Columns a fast row must reach (−1: no such column).
        let tagColumn = tagCol ?? -1, floorColumn = floorCol ?? -1
        let fastNeeded = max(needed, tagColumn + 1, floorColumn + 1)

        var trace = RangeTrace()
        // Kept rows are collected as one array of records (one capacity and uniqueness check per
        // row instead of six) and split into the trace's columns at the end.
        var rows: [Row] = []
        rows.reserveCapacity(bytes.count / 16)
        var tagNames = CSVFieldInterner()
        var floorNames = CSVFieldInterner()
        var clocks: [TagClock] = []
        var singleTag: Int32? = nil

        func isEmpty(_ start: Int, _ end: Int) -> Bool {
            var i = start
            while i < end { if bytes[i] != 0x20 && bytes[i] != 0x09 && bytes[i] != 0x0D { return false }; i += 1 }
            return true
        }
        func isEmpty(_ f: CSVScanner.Field) -> Bool { isEmpty(f.start, f.end) }
        /// The index of a non-empty tag field (quoted fields bypass the byte cache).
        func tagIndex(_ f: CSVScanner.Field) -> Int32 {
            let (index, isNew) = tagNames.index(bytes, f, text: scanner.text(f))
            if isNew {
                trace.tags.append(TagID(tagNames.names[Int(index)]))
                clocks.append(TagClock())
            }
            return index
        }
        /// The index of the tag of rows without one (`TagID.single`).
        func defaultTagIndex() -> Int32 {
            if let known = singleTag { return known }
            let (index, isNew) = tagNames.index(named: TagID.single.rawValue)
            if isNew {
                trace.tags.append(.single)
                clocks.append(TagClock())
            }
            singleTag = index
            return index
        }
        func floorIndex(_ f: CSVScanner.Field) -> Int32 {
            let (index, isNew) = floorNames.index(bytes, f, text: scanner.text(f))
            if isNew { trace.floors.append(FloorID(floorNames.names[Int(index)])) }
            return index
        }
        /// Keeps a checked row unless its tag's clock refuses it.
        func commit(_ t: Double, _ r: Double, _ a: UInt64, _ tag: Int32, _ floor: Int32, line: Int) {
            if let reason = clocks[Int(tag)].admit(t) { trace.skipped.record(reason, line: line); return }
            rows.append(Row(timeSeconds: t, rangeMeters: r, tagIndex: tag, floorIndex: floor,
                            line: Int32(truncatingIfNeeded: line), locator: UInt16(truncatingIfNeeded: a)))
        }

        let count = bytes.count
        let comma = UInt8(ascii: ","), newline: UInt8 = 0x0A, quote = UInt8(ascii: "\"")
        /// One plain row at the scanner's next offset, in a single pass; false (nothing consumed)
        /// when the row needs the scanner or is to be skipped (the scanner path then says why).
        /// `t` and `range_m` are read as plain decimals and `anchor` as plain decimal digits while
        /// scanning; a byte they do not expect (space, exponent, hex, quote…) hands the row over.
        func fastRow() -> Bool {
            let lineStart = scanner.nextOffset
            guard lineStart < count else { return false }
            let first = bytes[lineStart]
            if first == 0x20 || first == 0x09 || first == newline || first == 0x0D || first == UInt8(ascii: "#") { return false }
            var t = 0.0, r = 0.0
            var a: UInt64 = 0
            var tagField = CSVScanner.Field(start: 0, end: 0, isQuoted: false)
            var floorField = tagField
            var i = lineStart
            var columnIndex = 0
            while true {
                let fieldStart = i
                if columnIndex == tCol || columnIndex == rCol {
                    guard let (value, end) = CSVNumberParser.scanPlainDecimal(bytes, from: i, limit: count),
                          value.isFinite, columnIndex == tCol || value >= 0 else { return false }
                    if columnIndex == tCol { t = value } else { r = value }
                    i = end
                } else if columnIndex == aCol {
                    var digits = 0
                    while i < count {
                        let d = bytes[i] &- 0x30
                        guard d < 10 else { break }
                        a = a &* 10 &+ UInt64(d)
                        digits += 1
                        i += 1
                    }
                    guard digits > 0, digits <= 5, a <= 0xFFFF else { return false }
                } else {
                    while i < count {
                        let c = bytes[i]
                        if c == comma || c == newline { break }
                        if c == quote { return false }
                        i += 1
                    }
                }
                // The field must end here: a comma, the line's end, or CR LF at the line's end.
                var end = i
                if i < count, bytes[i] == 0x0D, i + 1 >= count || bytes[i + 1] == newline { i += 1 }
                let atLineEnd = i >= count || bytes[i] == newline
                guard atLineEnd || bytes[i] == comma else { return false }
                if atLineEnd, end > fieldStart, bytes[end - 1] == 0x0D { end -= 1 }
                if columnIndex == tagColumn { tagField = CSVScanner.Field(start: fieldStart, end: end, isQuoted: false) }
                if columnIndex == floorColumn { floorField = CSVScanner.Field(start: fieldStart, end: end, isQuoted: false) }
                columnIndex += 1
                if atLineEnd { break }
                i += 1
            }
            guard columnIndex >= fastNeeded else { return false }
            let tag = tagColumn >= 0 && !isEmpty(tagField) ? tagIndex(tagField) : defaultTagIndex()
            let floor = floorColumn >= 0 && !isEmpty(floorField) ? floorIndex(floorField) : -1
            scanner.skipLine(to: i + 1)
            commit(t, r, a, tag, floor, line: scanner.lineNumber)
            return true
        }

        while true {
            if fastRows, fastRow() { continue }
            guard scanner.nextRecord() else { break }
            let line = scanner.lineNumber
            let fields = scanner.fields
            if fields.count < needed || isEmpty(fields[tCol]) || isEmpty(fields[aCol]) || isEmpty(fields[rCol]) {
                trace.skipped.record(.missingField, line: line); continue
            }
            guard let t = CSVNumberParser.parseDouble(bytes, fields[tCol].start, fields[tCol].end),
                  let r = CSVNumberParser.parseDouble(bytes, fields[rCol].start, fields[rCol].end) else {
                trace.skipped.record(.unparseableNumber, line: line); continue
            }
            guard let a = CSVNumberParser.parseUnsigned(bytes, fields[aCol].start, fields[aCol].end), a <= 0xFFFF else {
                trace.skipped.record(.invalidAnchor, line: line); continue
            }
            guard t.isFinite, r.isFinite else { trace.skipped.record(.nonFinite, line: line); continue }
            guard r >= 0 else { trace.skipped.record(.negativeRange, line: line); continue }
            let tag = tagColumn >= 0 && tagColumn < fields.count && !isEmpty(fields[tagColumn]) ? tagIndex(fields[tagColumn]) : defaultTagIndex()
            let floor = floorColumn >= 0 && floorColumn < fields.count && !isEmpty(fields[floorColumn]) ? floorIndex(fields[floorColumn]) : -1
            commit(t, r, a, tag, floor, line: line)
        }
        rows.withUnsafeBufferPointer { rows in
            trace.timeSeconds = Self.split(rows) { $0.timeSeconds }
            trace.rangeMeters = Self.split(rows) { $0.rangeMeters }
            trace.locator = Self.split(rows) { $0.locator }
            trace.tagIndex = Self.split(rows) { $0.tagIndex }
            trace.floorIndex = Self.split(rows) { $0.floorIndex }
            trace.line = Self.split(rows) { $0.line }
        }
        return trace
    }

    /// One field of every row, as a column (a plain copy loop into uninitialised storage).
    @inline(__always)
    private static func split<T>(_ rows: UnsafeBufferPointer<Row>, _ field: (Row) -> T) -> [T] {
        [T](unsafeUninitializedCapacity: rows.count) { column, initialized in
            for k in 0..<rows.count { column.initializeElement(at: k, to: field(rows[k])) }
            initialized = rows.count
        }
    }

    /// One kept row while reading.
    private struct Row {
        var timeSeconds: Double
        var rangeMeters: Double
        var tagIndex: Int32
        var floorIndex: Int32
        var line: Int32
        var locator: UInt16
    }
}

/// Interns the text of CSV fields (tag and floor ids) without building a `String` for bytes it has
/// seen before.
///
/// A field's id is a pure function of its raw bytes (`CSVScanner.text`: trimmed, quotes unescaped),
/// so an unquoted field whose bytes equal an earlier unquoted field's has that field's index. The
/// previous field and a 4096-slot table indexed by the `FNV1a` hash of the bytes remember where such
/// bytes were seen; on a miss the text is built and looked up by name. Quoted fields always go by name.
struct CSVFieldInterner {
    private struct Slot {
        var start: Int
        var end: Int
        var index: Int32
    }
    private static let slotMask = 4095
    private var slots: [Slot] = []
    private var previous = Slot(start: 0, end: 0, index: -1)
    private var indexByName: [String: Int32] = [:]
    /// Interned names in order of first appearance.
    private(set) var names: [String] = []

    /// The index of the field `f` of `bytes` whose text is `text` (evaluated only on a cache miss),
    /// and whether it is new.
    mutating func index(_ bytes: UnsafeBufferPointer<UInt8>, _ f: CSVScanner.Field,
                        text: @autoclosure () -> String) -> (index: Int32, isNew: Bool) {
        if f.isQuoted { return index(named: text()) }
        if previous.index >= 0, Self.same(bytes, f.start, f.end, previous.start, previous.end) { return (previous.index, false) }
        var h = FNV1a()
        var i = f.start
        while i < f.end { h.combine(bytes[i]); i += 1 }
        let slot = Int(truncatingIfNeeded: h.value) & Self.slotMask
        if slots.isEmpty { slots = Array(repeating: Slot(start: 0, end: 0, index: -1), count: Self.slotMask + 1) }
        let cached = slots[slot]
        if cached.index >= 0, Self.same(bytes, f.start, f.end, cached.start, cached.end) {
            previous = cached
            return (cached.index, false)
        }
        let result = index(named: text())
        slots[slot] = Slot(start: f.start, end: f.end, index: result.index)
        previous = slots[slot]
        return result
    }

    /// The index of `name`, and whether it is new.
    mutating func index(named name: String) -> (index: Int32, isNew: Bool) {
        if let known = indexByName[name] { return (known, false) }
        let index = Int32(names.count)
        indexByName[name] = index
        names.append(name)
        return (index, true)
    }

    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ s1: Int, _ e1: Int, _ s2: Int, _ e2: Int) -> Bool {
        guard e1 - s1 == e2 - s2 else { return false }
        var k = 0
        while k < e1 - s1 { if bytes[s1 + k] != bytes[s2 + k] { return false }; k += 1 }
        return true
    }
}
