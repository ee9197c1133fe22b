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
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>, file: String) throws(LocusError) -> RangeTrace {
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

        var trace = RangeTrace()
        let estimate = bytes.count / 16
        trace.timeSeconds.reserveCapacity(estimate)
        trace.rangeMeters.reserveCapacity(estimate)
        trace.locator.reserveCapacity(estimate)
        trace.tagIndex.reserveCapacity(estimate)
        trace.floorIndex.reserveCapacity(estimate)
        trace.line.reserveCapacity(estimate)
        var tagLookup: [String: Int32] = [:]
        var floorLookup: [String: Int32] = [:]
        var clocks: [TagClock] = []
        var previousTag: (start: Int, end: Int, index: Int32)? = nil
        var previousFloor: (start: Int, end: Int, index: Int32)? = nil

        func sameBytes(_ a: CSVScanner.Field, _ start: Int, _ end: Int) -> Bool {
            guard a.end - a.start == end - start else { return false }
            var i = 0
            while i < end - start { if bytes[a.start + i] != bytes[start + i] { return false }; i += 1 }
            return true
        }
        func isEmpty(_ f: CSVScanner.Field) -> Bool {
            var i = f.start
            while i < f.end { if bytes[i] != 0x20 && bytes[i] != 0x09 && bytes[i] != 0x0D { return false }; i += 1 }
            return true
        }

        while scanner.nextRecord() {
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

            // Tag: the previous row's tag is reused without a string when the bytes match.
            var tag: Int32 = 0
            if let tc = tagCol, tc < fields.count, !isEmpty(fields[tc]) {
                let f = fields[tc]
                if let p = previousTag, sameBytes(f, p.start, p.end) {
                    tag = p.index
                } else {
                    let name = scanner.text(f)
                    if let known = tagLookup[name] { tag = known } else {
                        tag = Int32(trace.tags.count)
                        tagLookup[name] = tag
                        trace.tags.append(TagID(name))
                        clocks.append(TagClock())
                    }
                    previousTag = (f.start, f.end, tag)
                }
            } else {
                if let known = tagLookup[TagID.single.rawValue] { tag = known } else {
                    tag = Int32(trace.tags.count)
                    tagLookup[TagID.single.rawValue] = tag
                    trace.tags.append(.single)
                    clocks.append(TagClock())
                }
            }
            var floor: Int32 = -1
            if let fc = floorCol, fc < fields.count, !isEmpty(fields[fc]) {
                let f = fields[fc]
                if let p = previousFloor, sameBytes(f, p.start, p.end) {
                    floor = p.index
                } else {
                    let name = scanner.text(f)
                    if let known = floorLookup[name] { floor = known } else {
                        floor = Int32(trace.floors.count)
                        floorLookup[name] = floor
                        trace.floors.append(FloorID(name))
                    }
                    previousFloor = (f.start, f.end, floor)
                }
            }
            if let reason = clocks[Int(tag)].admit(t) { trace.skipped.record(reason, line: line); continue }
            trace.timeSeconds.append(t)
            trace.rangeMeters.append(r)
            trace.locator.append(UInt16(a))
            trace.tagIndex.append(tag)
            trace.floorIndex.append(floor)
            trace.line.append(Int32(truncatingIfNeeded: line))
        }
        return trace
    }
}
