import LocusCore

/// The trace reader's state across the pieces of one input, so that a recording of any length can
/// be read in bounded chunks (`TraceStream`) — and a whole file as one piece (`TraceReader`): one
/// code path, so both read the same rows, skip the same rows and count them alike.
///
/// Columns are found by name in the header (any order, extra columns ignored); `t` is required, and
/// `anchor` and `range_m` (ranges) or `anchor_a`, `anchor_b` and `tdoa_m` (range differences) or both
/// sets (a hybrid trace: each row fills one kind); `tag` and `floor` are optional. A difference row
/// is skipped as `same_locator` when A = B; its other checks are a range row's (a negative
/// difference is of course kept). A trace with difference columns is read by the scanner path. Each data row is checked and either kept or
/// skipped and counted by reason (`SkipReason`): an empty required field, an unparseable number, an
/// anchor that is not a 16-bit address, a non-finite time or range, a negative range, a time earlier
/// than the tag's previous kept row, an unconfirmed jump far forward (`TagClock`), or a tag id that
/// is not one (`TagIDRule`: over 128 bytes, not UTF-8, a control character) — in file order.
/// Numbers are parsed from bytes (`CSVNumberParser`) and tags interned, so a row costs no allocation.
/// Unknown anchors and floors are the engine's to judge: it knows the site.
///
/// A plain row (no quotes, no comment, all columns present, numbers that parse) is split and
/// converted in one pass over its bytes; any other row goes through `CSVScanner` (`fastRows: false`:
/// every row; the tests compare the two).
package struct TraceRowParser: Sendable {
    /// The file name errors and skips refer to.
    let file: String
    /// Tag ids in order of first appearance (`TraceRow.tagIndex` indexes it).
    package private(set) var tags: [TagID] = []
    /// Floor ids named by the rows, in order of first appearance.
    package private(set) var floors: [FloorID] = []
    /// Rows skipped so far, by reason.
    package private(set) var skipped = SkipTally()
    /// Where the data rows start in the piece given to `init(header:file:)`.
    package let headerEnd: Int

    let tCol: Int, aCol: Int, rCol: Int
    /// The difference columns A, B and tdoa_m (−1: none); `hasDifferences` when all three are there.
    let referenceColumn: Int, otherColumn: Int, differenceColumn: Int
    let hasDifferences: Bool
    /// Fields a range row must have (`needed` of a trace without difference columns).
    let rangeNeeded: Int
    /// Columns a row must have (the required ones), and a fast row must reach (tag and floor too).
    let needed: Int, fastNeeded: Int
    /// The tag and floor columns (−1: none).
    let tagColumn: Int, floorColumn: Int
    private var tagNames = CSVFieldInterner()
    private var floorNames = CSVFieldInterner()
    private var clocks: [TagClock] = []
    private var singleTag: Int32? = nil
    /// The number of the next line to parse.
    var nextLine: Int
    /// A live stream's future-time check (`locus stream`'s `StreamClock`, issue #41 item 3), applied
    /// once a row's numbers are read and before its tag is interned or its tag's clock admits it —
    /// so a forged row far ahead neither registers a tag nor moves that tag's clock (which would
    /// silence its honest rows as `time_backwards`). The stream sets all three before each piece (`limitFuture`):
    /// `futureHorizonSeconds` (0: off, as in replay), `futureLatestSeconds` (its latest accepted
    /// data time) and `futureLimitSeconds` (its clock + horizon; +∞ before the first row). A row with
    /// t > limit is skipped as `future_time`; a kept row with t > latest becomes the latest and moves
    /// the limit to t + horizon — within a piece the stream's clock is its latest data time.
    var futureHorizonSeconds = 0.0
    var futureLatestSeconds = -Double.infinity
    var futureLimitSeconds = Double.infinity

    /// Sets the future-time check for the next piece: `horizonSeconds` (0: off),
    /// `latestSeconds` (the stream's latest accepted data time), `limitSeconds` (its clock + horizon).
    package mutating func limitFuture(horizonSeconds: Double, latestSeconds: Double, limitSeconds: Double) {
        futureHorizonSeconds = horizonSeconds
        futureLatestSeconds = latestSeconds
        futureLimitSeconds = limitSeconds
    }

    /// Forgets every tag and floor id met so far, and the tags' clocks: the parser then reads on as
    /// if from the start of a file with the same header (line numbers go on). For a reader that
    /// never ends (`locus stream`): its id tables would otherwise grow with every new id a sender
    /// invents. The rows' `tagIndex` and `floorIndex` given before refer to the ids forgotten.
    /// (The per-tag clocks go with them: the engine keeps each tag's clock as well.)
    package mutating func forgetIDs() {
        tags = []
        floors = []
        clocks = []
        tagNames = CSVFieldInterner()
        floorNames = CSVFieldInterner()
        singleTag = nil
    }

    /// Parses the rows in `bytes` — the input's next piece, starting where the previous one stopped
    /// and ending with a whole line unless it is the input's last (`isLast`) — and appends the kept
    /// ones to `rows`. Returns the bytes consumed: all of them, except for a quoted record that
    /// continues past the piece's end (its bytes start the next piece).
    package mutating func parse(_ bytes: Span<UInt8>, isLast: Bool, fastRows: Bool = true,
                                into rows: inout [TraceRow]) -> Int {
        bytes.withUnsafeBufferPointer { parse($0, isLast: isLast, fastRows: fastRows, into: &rows) }
    }

    /// `parse(_:isLast:fastRows:into:)` over the piece's buffer (the readers in this module).
    mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>, isLast: Bool, fastRows: Bool = true,
                        into rows: inout [TraceRow]) -> Int {
        // Through a run of up to 1,024 rows (fewer for a small piece: a live datagram), copied into
        // the array in bulk whenever it is full and at the end: not an `Array.append` per row, and
        // no more memory than the array's own.
        let run = TraceRowRun(capacity: min(1024, bytes.count / 8 + 1))
        let consumed = parse(bytes, isLast: isLast, fastRows: fastRows, into: run) { full in
            rows.append(contentsOf: full)
            return true
        }
        rows.append(contentsOf: run.rows)
        return consumed
    }

    /// `parse(_:isLast:fastRows:into:)` appending the kept rows to `run` (which grows as needed).
    mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>, isLast: Bool, fastRows: Bool = true,
                                into run: TraceRowRun) -> Int {
        parse(bytes, isLast: isLast, fastRows: fastRows, into: run) { _ in false }
    }

    /// The parser: kept rows go to `run`; when it is full they are offered to `spill`, and the run is
    /// emptied when it took them (true), or grows.
    private mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>, isLast: Bool, fastRows: Bool, into run: TraceRowRun,
                                spill: (UnsafeBufferPointer<TraceRow>) -> Bool) -> Int {
        // The field cache remembers offsets into the previous piece.
        tagNames.forgetBytes()
        floorNames.forgetBytes()
        var scanner = CSVScanner(bytes: bytes, firstLine: nextLine)
        // The state as locals for the row loop (the closures below capture them).
        let (tCol, aCol, rCol, fastNeeded) = (self.tCol, self.aCol, self.rCol, self.fastNeeded)
        let rangeNeeded = self.rangeNeeded
        let (tagColumn, floorColumn) = (self.tagColumn, self.floorColumn)
        // Moved out (not copied: a copy would make the first write copy every tag's state — per
        // piece, which a live stream's datagram is) and moved back when done.
        var tagNames = CSVFieldInterner(), floorNames = CSVFieldInterner()
        var clocks: [TagClock] = [], tags: [TagID] = [], floors: [FloorID] = [], skipped = self.skipped
        swap(&tagNames, &self.tagNames); swap(&floorNames, &self.floorNames)
        swap(&clocks, &self.clocks); swap(&tags, &self.tags); swap(&floors, &self.floors)
        var singleTag = self.singleTag
        let futureHorizon = futureHorizonSeconds
        var futureLatest = futureLatestSeconds, futureLimit = futureLimitSeconds
        // The run's memory as locals (the closures below capture them; a class's stored properties
        // would be checked for exclusive access at run time on every row).
        var out = run.base, outCount = run.count, outCapacity = run.capacity
        defer {
            run.adopt(base: out, count: outCount, capacity: outCapacity)
            self.tagNames = tagNames; self.floorNames = floorNames
            self.clocks = clocks; self.tags = tags; self.floors = floors; self.skipped = skipped
            self.singleTag = singleTag
            futureLatestSeconds = futureLatest; futureLimitSeconds = futureLimit
        }

        func isEmpty(_ start: Int, _ end: Int) -> Bool {
            var i = start
            while i < end { if bytes[i] != 0x20 && bytes[i] != 0x09 && bytes[i] != 0x0D { return false }; i += 1 }
            return true
        }
        func isEmpty(_ f: CSVScanner.Field) -> Bool { isEmpty(f.start, f.end) }
        /// The index of a non-empty tag field (quoted fields bypass the byte cache); −1 for an id
        /// `TagIDRule` refuses (never interned: bytes that are not UTF-8 must not become U+FFFD and
        /// merge with another id). The raw bytes are checked, trimmed as `CSVScanner.text` trims
        /// (UTF-8 and controls read the same before and after a quoted field's `""` is unescaped);
        /// a quoted field's length is checked on its text. Ids of ≤ 8 bytes seen before never get
        /// here on the fast paths (the short-field cache holds valid ids only).
        func tagIndex(_ f: CSVScanner.Field) -> Int32 {
            var start = f.start, end = f.end
            while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 || bytes[start] == 0x0D { start += 1 }
            while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 || bytes[end - 1] == 0x0D { end -= 1 }
            guard TagIDRule.isValid(bytes.span, start, end, maximumBytes: f.isQuoted ? Int.max : TagIDRule.maximumBytes) else { return -1 }
            if f.isQuoted, end - start > TagIDRule.maximumBytes, scanner.text(f).utf8.count > TagIDRule.maximumBytes { return -1 }
            let (index, isNew) = tagNames.index(bytes, f, text: scanner.text(f))
            if isNew {
                tags.append(TagID(tagNames.names[Int(index)]))
                clocks.append(TagClock())
            }
            return index
        }
        /// The index of the tag of rows without one (`TagID.single`).
        func defaultTagIndex() -> Int32 {
            if let known = singleTag { return known }
            let (index, isNew) = tagNames.index(named: TagID.single.rawValue)
            if isNew {
                tags.append(.single)
                clocks.append(TagClock())
            }
            singleTag = index
            return index
        }
        func floorIndex(_ f: CSVScanner.Field) -> Int32 {
            let (index, isNew) = floorNames.index(bytes, f, text: scanner.text(f))
            if isNew { floors.append(FloorID(floorNames.names[Int(index)])) }
            return index
        }
        /// Keeps a checked row unless its tag's clock refuses it.
        /// (`reference` ≠ `a`: a difference row, A = `reference`, B = `a`, `r` its difference.)
        func commit(_ t: Double, _ r: Double, _ a: UInt64, _ tag: Int32, _ floor: Int32, line: Int, reference: UInt64) {
            if tag < 0 { skipped.record(.invalidTag, line: line); return }
            if let reason = clocks[Int(tag)].admit(t) { skipped.record(reason, line: line); return }
            if t > futureLatest {
                futureLatest = t
                if futureHorizon > 0 { futureLimit = t + futureHorizon }
            }
            if outCount == outCapacity {
                if spill(UnsafeBufferPointer(start: out, count: outCount)) {
                    outCount = 0
                } else {
                    (out, outCapacity) = out.doubled(count: outCount, capacity: outCapacity)
                }
            }
            (out + outCount).initialize(to: TraceRow(timeSeconds: t, differenceMeters: r, tagIndex: tag, floorIndex: floor,
                                                     line: Int32(truncatingIfNeeded: line), reference: UInt16(truncatingIfNeeded: reference),
                                                     locator: UInt16(truncatingIfNeeded: a)))
            outCount += 1
        }

        let count = bytes.count
        let comma = UInt8(ascii: ","), newline: UInt8 = 0x0A, quote = UInt8(ascii: "\"")
        /// One plain row at the scanner's next offset, in a single pass; false (nothing consumed)
        /// when the row needs the scanner or is to be skipped (the scanner path then says why).
        /// A range row reads `t` and `range_m` (≥ 0) as plain decimals and `anchor` as plain decimal
        /// digits while scanning; a trace with difference columns reads a plain difference row the
        /// same way (`t`, `tdoa_m`; `anchor_a`, `anchor_b` as digits, A ≠ B; its range cells, if the
        /// trace has them, empty). A byte they do not expect (space, exponent, hex, quote…) hands
        /// the row over. The rows it keeps are the scanner's (tests compare the paths).
        let (referenceColumn, otherColumn, differenceColumn) = (self.referenceColumn, self.otherColumn, self.differenceColumn)
        let hasDifferences = self.hasDifferences
        // The value and the address(es) of a row: r and B = `anchor`, or z and B = `anchor_b` (A = `anchor_a`).
        let valueColumn = hasDifferences ? differenceColumn : rCol
        let locatorColumn = hasDifferences ? otherColumn : aCol
        let lastRequiredColumn = hasDifferences ? max(tCol, referenceColumn, otherColumn, differenceColumn) : -1
        func fastRow() -> Bool {
            let lineStart = scanner.nextOffset
            guard lineStart < count else { return false }
            let first = bytes[lineStart]
            if first == 0x20 || first == 0x09 || first == newline || first == 0x0D || first == UInt8(ascii: "#") { return false }
            var t = 0.0, value = 0.0
            var locator: UInt64 = 0, reference: UInt64 = 0
            var tagField = CSVScanner.Field(start: 0, end: 0, isQuoted: false)
            var floorField = tagField
            var i = lineStart
            var columnIndex = 0
            while true {
                let fieldStart = i
                if columnIndex == tCol || columnIndex == valueColumn {
                    guard let (number, end) = CSVNumberParser.scanPlainDecimal(bytes, from: i, limit: count), number.isFinite,
                          columnIndex == tCol || hasDifferences || number >= 0 else { return false }
                    if columnIndex == tCol { t = number } else { value = number }
                    i = end
                } else if columnIndex == locatorColumn || columnIndex == referenceColumn {
                    var address: UInt64 = 0, digits = 0
                    while i < count {
                        let digit = bytes[i] &- 0x30
                        guard digit < 10 else { break }
                        address = address &* 10 &+ UInt64(digit)
                        digits += 1
                        i += 1
                    }
                    guard digits > 0, digits <= 5, address <= 0xFFFF else { return false }
                    if columnIndex == locatorColumn { locator = address } else { reference = address }
                } else {
                    while i < count {
                        let c = bytes[i]
                        if c == comma || c == newline { break }
                        if c == quote { return false }
                        i += 1
                    }
                    // A difference trace's range cell that holds something: a range row (the scanner's).
                    if (columnIndex == rCol || columnIndex == aCol) && i > fieldStart && !(i == fieldStart + 1 && bytes[fieldStart] == 0x0D) {
                        return false
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
            guard columnIndex >= fastNeeded, columnIndex > lastRequiredColumn else { return false }
            if !hasDifferences { reference = locator } else if reference == locator { return false }
            if t > futureLimit {  // before its ids are interned: a refused row registers nothing
                scanner.skipLine(to: i + 1)
                skipped.record(.futureTime, line: scanner.lineNumber)
                return true
            }
            let tag = tagColumn >= 0 && !isEmpty(tagField) ? tagIndex(tagField) : defaultTagIndex()
            let floor = floorColumn >= 0 && !isEmpty(floorField) ? floorIndex(floorField) : -1
            scanner.skipLine(to: i + 1)
            commit(t, value, locator, tag, floor, line: scanner.lineNumber, reference: reference)
            return true
        }

        /// `fastRow` eight bytes at a time, for a line of at most 64 bytes with 32 more readable after
        /// it (any other line, and one it declines, is left to `fastRow`). Bytes below `-` (0x2D) are
        /// flagged a word at a time (`ByteWords.below`): the separators `,` and newline, and every
        /// byte a plain row does not hold in a field it takes this way (quote, CR, space, tab, `#`,
        /// `+`…), which sends the line to `fastRow`. Fields are then the spans between separators:
        /// numbers by `CSVNumberParser.parsePlainDecimalWide`, the anchor by `ByteWords.digits`.
        /// The rows it keeps, their values and lines are `fastRow`'s (tests compare the paths).
        let base = bytes.baseAddress
        func wideRow() -> Bool {
            let lineStart = scanner.nextOffset
            guard let base, lineStart + 96 <= count else { return false }
            var t = 0.0, r = 0.0
            var a: UInt64 = 0
            var tagStart = 0, tagEnd = 0, floorStart = 0, floorEnd = 0
            var column = 0
            var fieldStart = lineStart
            var wordStart = lineStart
            var flags = ByteWords.below(ByteWords.load(base, wordStart), 0x2D)
            while true {
                while flags == 0 {
                    wordStart += 8
                    guard wordStart < lineStart + 64 else { return false }
                    flags = ByteWords.below(ByteWords.load(base, wordStart), 0x2D)
                }
                let at = wordStart + flags.trailingZeroBitCount >> 3
                flags &= flags &- 1
                let separator = base[at]
                guard separator == comma || separator == newline else { return false }
                if column == tCol {
                    guard let value = CSVNumberParser.parsePlainDecimalWide(base, bytes, fieldStart, at) else { return false }
                    t = value
                } else if column == rCol {
                    guard let value = CSVNumberParser.parsePlainDecimalWide(base, bytes, fieldStart, at), value >= 0 else { return false }
                    r = value
                } else if column == aCol {
                    let length = at - fieldStart
                    guard length > 0, length <= 5, let value = ByteWords.digits(ByteWords.load(base, fieldStart), count: length),
                          value <= 0xFFFF else { return false }
                    a = value
                } else if column == tagColumn {
                    tagStart = fieldStart; tagEnd = at
                } else if column == floorColumn {
                    floorStart = fieldStart; floorEnd = at
                }
                column += 1
                fieldStart = at + 1
                if separator == newline { break }
            }
            guard column >= fastNeeded else { return false }
            if t > futureLimit {  // before its ids are interned: a refused row registers nothing
                scanner.skipLine(to: fieldStart)
                skipped.record(.futureTime, line: scanner.lineNumber)
                return true
            }
            // (A field of spaces would have been declined: empty means no bytes.)
            // Ids of up to 8 bytes are looked up by their bytes as one word (`CSVFieldInterner`'s
            // cache, without building a field). (No `??`: its autoclosure would capture the row
            // state; see the row loop.)
            var tag: Int32 = -1, floor: Int32 = -1
            if tagColumn < 0 || tagEnd == tagStart {
                tag = defaultTagIndex()
            } else if tagEnd - tagStart <= 8, let known = tagNames.cachedIndex(word: ByteWords.load(base, tagStart), length: tagEnd - tagStart) {
                tag = known
            } else {
                tag = tagIndex(CSVScanner.Field(start: tagStart, end: tagEnd, isQuoted: false))
            }
            if floorColumn >= 0 && floorEnd > floorStart {
                if floorEnd - floorStart <= 8, let known = floorNames.cachedIndex(word: ByteWords.load(base, floorStart), length: floorEnd - floorStart) {
                    floor = known
                } else {
                    floor = floorIndex(CSVScanner.Field(start: floorStart, end: floorEnd, isQuoted: false))
                }
            }
            scanner.skipLine(to: fieldStart)
            commit(t, r, a, tag, floor, line: scanner.lineNumber, reference: a)
            return true
        }

        /// A row of a trace with difference columns whose `range_m` cell is empty (or absent): a
        /// difference row — `anchor_a`, `anchor_b`, `tdoa_m` and `t` required — checked as a range
        /// row is, and A = B skipped as `same_locator`.
        func differenceRow(_ fields: [CSVScanner.Field], line: Int) {
            let (aColumn, bColumn, dColumn) = (referenceColumn, otherColumn, differenceColumn)
            guard fields.count > max(tCol, aColumn, bColumn, dColumn), !isEmpty(fields[tCol]), !isEmpty(fields[aColumn]),
                  !isEmpty(fields[bColumn]), !isEmpty(fields[dColumn]) else {
                skipped.record(.missingField, line: line); return
            }
            guard let t = CSVNumberParser.parseDouble(bytes, fields[tCol].start, fields[tCol].end),
                  let d = CSVNumberParser.parseDouble(bytes, fields[dColumn].start, fields[dColumn].end) else {
                skipped.record(.unparseableNumber, line: line); return
            }
            guard let a = CSVNumberParser.parseUnsigned(bytes, fields[aColumn].start, fields[aColumn].end), a <= 0xFFFF,
                  let b = CSVNumberParser.parseUnsigned(bytes, fields[bColumn].start, fields[bColumn].end), b <= 0xFFFF else {
                skipped.record(.invalidAnchor, line: line); return
            }
            guard t.isFinite, d.isFinite else { skipped.record(.nonFinite, line: line); return }
            guard a != b else { skipped.record(.sameLocator, line: line); return }
            if t > futureLimit { skipped.record(.futureTime, line: line); return }  // before its ids are interned
            let tag = tagColumn >= 0 && tagColumn < fields.count && !isEmpty(fields[tagColumn]) ? tagIndex(fields[tagColumn]) : defaultTagIndex()
            let floor = floorColumn >= 0 && floorColumn < fields.count && !isEmpty(fields[floorColumn]) ? floorIndex(fields[floorColumn]) : -1
            commit(t, d, b, tag, floor, line: line, reference: a)
        }

        var consumed = count
        while true {
            // (Two ifs, not `||`: its autoclosure would capture the row state and make every access
            // to it an exclusivity check at run time.)
            if fastRows {
                if !hasDifferences {
                    if wideRow() { continue }
                }
                if fastRow() { continue }
            }
            // A quoted field running past this piece is read again with the next one.
            guard scanner.nextRecord(inPiece: isLast, consumed: &consumed) else { break }
            let line = scanner.lineNumber
            let fields = scanner.fields
            if hasDifferences && !(rCol >= 0 && rCol < fields.count && !isEmpty(fields[rCol])) {
                differenceRow(fields, line: line)
                continue
            }
            if fields.count < rangeNeeded || aCol < 0 || isEmpty(fields[tCol]) || isEmpty(fields[aCol]) || isEmpty(fields[rCol]) {
                skipped.record(.missingField, line: line); continue
            }
            guard let t = CSVNumberParser.parseDouble(bytes, fields[tCol].start, fields[tCol].end),
                  let r = CSVNumberParser.parseDouble(bytes, fields[rCol].start, fields[rCol].end) else {
                skipped.record(.unparseableNumber, line: line); continue
            }
            guard let a = CSVNumberParser.parseUnsigned(bytes, fields[aCol].start, fields[aCol].end), a <= 0xFFFF else {
                skipped.record(.invalidAnchor, line: line); continue
            }
            guard t.isFinite, r.isFinite else { skipped.record(.nonFinite, line: line); continue }
            guard r >= 0 else { skipped.record(.negativeRange, line: line); continue }
            if t > futureLimit { skipped.record(.futureTime, line: line); continue }  // before its ids are interned
            let tag = tagColumn >= 0 && tagColumn < fields.count && !isEmpty(fields[tagColumn]) ? tagIndex(fields[tagColumn]) : defaultTagIndex()
            let floor = floorColumn >= 0 && floorColumn < fields.count && !isEmpty(fields[floorColumn]) ? floorIndex(fields[floorColumn]) : -1
            commit(t, r, a, tag, floor, line: line, reference: a)
        }
        nextLine = scanner.nextLineNumber
        return consumed
    }
}
