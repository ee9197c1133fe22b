import LocusCore

/// Splits CSV bytes into records and fields without creating strings (SPEC §2).
///
/// A record is a line (LF or CRLF). Blank lines and lines whose first non-space byte is `#` are
/// skipped. Fields are separated by commas; a field may be wrapped in double quotes (with `""`
/// for a quote inside), in which case `isQuoted` is set and the caller unescapes it if it needs the
/// text. Field ranges index the caller's buffer, so scanning allocates nothing once `fields` has grown
/// to the widest record.
struct CSVScanner {
    /// One field: `bytes[start..<end]` (without surrounding quotes).
    struct Field: Sendable {
        var start: Int
        var end: Int
        var isQuoted: Bool
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position: Int = 0
    /// 1-based line number of the record last returned.
    private(set) var lineNumber: Int = 0
    private var nextLine: Int = 1
    /// Fields of the record last returned.
    private(set) var fields: [Field] = []

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.init(bytes: bytes, firstLine: 1)
    }

    /// A scanner over a piece of a larger input that starts at a line start: its first line is
    /// number `firstLine`; a UTF-8 byte-order mark is skipped only at the input's start (line 1).
    init(bytes: UnsafeBufferPointer<UInt8>, firstLine: Int) {
        self.bytes = bytes
        nextLine = firstLine
        fields.reserveCapacity(16)
        // A UTF-8 byte-order mark is ignored.
        if firstLine == 1, bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3 }
    }

    /// Byte offset where the search for the next record starts (the start of the next line).
    var nextOffset: Int { position }

    /// The number the next line will get.
    var nextLineNumber: Int { nextLine }

    /// True when the record last returned ran into the end of the bytes without its line's end (a
    /// piece of a larger input then holds only its beginning).
    var lastRecordIsUnterminated: Bool { position > bytes.count }

    /// Where the scanner stands, to come back to with `restore(_:)`.
    var mark: (position: Int, nextLine: Int) { (position, nextLine) }

    /// Goes back to a `mark`.
    mutating func restore(_ mark: (position: Int, nextLine: Int)) {
        position = mark.position
        nextLine = mark.nextLine
    }

    /// Steps over one line the caller has read itself: `offset` is the first byte after its `\n`
    /// (or the end of the input). `lineNumber` becomes that line's number, as if `nextRecord` had
    /// returned it; `fields` is left as it was.
    mutating func skipLine(to offset: Int) {
        position = offset
        lineNumber = nextLine
        nextLine += 1
    }

    /// `nextRecord()` over one piece of a longer input (`LineChunks`): false at the piece's end, and
    /// also — unless the piece is the input's last — when the record runs past it (a quoted field
    /// across the cut): the scanner then stands before that record and `consumed` is its offset, so
    /// that it is read again with the next piece.
    mutating func nextRecord(inPiece isLast: Bool, consumed: inout Int) -> Bool {
        let before = mark
        guard nextRecord() else { return false }
        if !isLast, lastRecordIsUnterminated {
            restore(before)
            consumed = before.position
            return false
        }
        return true
    }

    /// Advances to the next record; false at the end of the input.
    mutating func nextRecord() -> Bool {
        let n = bytes.count
        while position < n {
            let lineStart = position
            lineNumber = nextLine
            nextLine += 1
            // Skip blank and comment lines.
            var k = lineStart
            while k < n, bytes[k] == 0x20 || bytes[k] == 0x09 { k += 1 }
            if k >= n { position = n; return false }
            if bytes[k] == 0x0A || bytes[k] == 0x0D || bytes[k] == UInt8(ascii: "#") {
                while k < n, bytes[k] != 0x0A { k += 1 }
                position = k + 1
                continue
            }
            fields.removeAll(keepingCapacity: true)
            var fieldStart = lineStart
            var i = lineStart
            var quoted = false
            while true {
                if i < n, bytes[i] == UInt8(ascii: "\""), i == fieldStart {
                    // Quoted field: runs to the closing quote (a doubled quote is an escaped quote).
                    quoted = true
                    i += 1
                    let contentStart = i
                    while i < n {
                        if bytes[i] == UInt8(ascii: "\"") {
                            if i + 1 < n, bytes[i + 1] == UInt8(ascii: "\"") { i += 2; continue }
                            break
                        }
                        if bytes[i] == 0x0A { nextLine += 1 }
                        i += 1
                    }
                    let contentEnd = i
                    if i < n { i += 1 }
                    while i < n, bytes[i] != UInt8(ascii: ","), bytes[i] != 0x0A { i += 1 }
                    fields.append(Field(start: contentStart, end: contentEnd, isQuoted: quoted))
                } else {
                    while i < n, bytes[i] != UInt8(ascii: ","), bytes[i] != 0x0A { i += 1 }
                    var end = i
                    if end > fieldStart, bytes[end - 1] == 0x0D, (i >= n || bytes[i] == 0x0A) { end -= 1 }
                    fields.append(Field(start: fieldStart, end: end, isQuoted: false))
                }
                quoted = false
                if i < n, bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    fieldStart = i
                    continue
                }
                break
            }
            position = i + 1
            return true
        }
        return false
    }

    /// The text of a field (quotes unescaped, surrounding spaces trimmed). Allocates: for headers,
    /// ids and messages, not for numbers.
    func text(_ field: Field) -> String {
        var s = String(decoding: UnsafeBufferPointer(rebasing: bytes[field.start..<field.end]), as: UTF8.self)
        if field.isQuoted { s = s.replacingOccurrences(of: "\"\"", with: "\"") }
        return String(s.trimmingASCIIWhitespace())
    }

    /// True when the field's bytes equal `other` (after trimming spaces).
    func fieldEquals(_ field: Field, _ other: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = field.start, j = field.end
        while i < j, bytes[i] == 0x20 { i += 1 }
        while j > i, bytes[j - 1] == 0x20 { j -= 1 }
        guard j - i == other.count else { return false }
        for k in 0..<other.count where bytes[i + k] != other[k] { return false }
        return true
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        result += rest
        return result
    }
}
