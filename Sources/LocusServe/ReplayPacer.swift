import LocusCore
import LocusIO

/// `locus serve --replay`: a trace file handed on in whole lines as their time comes — a row of data
/// time t is due once the wall clock has run (t − t₀)/speed seconds since the start (t₀ the first
/// row's time; speed 0: everything at once) — so the engine meets the rows as a live stream would,
/// only faster or slower. Lines go on in file order: a row stamped later holds back the rows after
/// it until it is due (a trace is expected in time order, SPEC §2). A line whose time cannot be read
/// (a comment, a bad number) goes with the rows before it; the reader skips and counts it.
///
/// Memory is bounded: the file is read 1 MiB at a time (`ByteSource`: plain or gzip).
struct ReplayPacer {
    private let source: ByteSource
    /// Unconsumed bytes are `buffer[start..<filled]`.
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)
    private var start = 0, filled = 0
    private var ended = false
    /// The header's bytes: everything up to and including the header line (comments, blank lines).
    private(set) var header: [UInt8] = []
    /// The `t` column's position among the header's fields.
    private var timeColumn = 0
    /// The first row's time (nil before any row was read with a readable time).
    private(set) var firstSeconds: Double?
    /// The latest row time handed on.
    private var lastSeconds = -Double.infinity
    /// Bytes of the file consumed so far (of the decompressed text).
    private(set) var consumedBytes = 0

    /// Opens `path` and reads its header.
    /// - Throws: E5001 when the file cannot be read; E5004 when it has no header line, E5003 when the
    ///   header has no `t` column (naming the file).
    init(path: String) throws(LocusError) {
        source = try ByteSource(path: path)
        var headerEnd: Int? = nil
        var column: Int? = nil
        while headerEnd == nil {
            guard try fill() else { break }
            var lineStart = 0
            while let newline = buffer[lineStart..<filled].firstIndex(of: 0x0A) {
                let line = buffer[lineStart..<newline]
                let first = line.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }
                if let first, first != UInt8(ascii: "#") {
                    column = Self.fields(line).firstIndex { $0 == "t" }
                    headerEnd = newline + 1
                    break
                }
                lineStart = newline + 1
            }
            if headerEnd == nil && ended { break }
        }
        guard let headerEnd else {
            throw LocusError(.malformedCSV, "the trace has no header line", context: .init(file: path))
        }
        guard let column else {
            throw LocusError(.csvMissingColumn, "the trace's header has no t column", context: .init(file: path, line: 1))
        }
        timeColumn = column
        header = Array(buffer[0..<headerEnd])
        start = headerEnd
        consumedBytes = headerEnd
    }

    /// True once every line was handed on.
    var isFinished: Bool { ended && start == filled }

    /// The time of the next line to hand on, if it has one (nil: due at once, or nothing left).
    mutating func nextSeconds() throws(LocusError) -> Double? {
        try nextLine()?.1
    }

    /// Appends to `out` the whole lines due by data time `dueSeconds` (all of them for +∞), at most
    /// about `maximumBytes`.
    mutating func take(dueSeconds: Double, maximumBytes: Int = 1 << 20, into out: inout [UInt8]) throws(LocusError) {
        var taken = 0
        while taken < maximumBytes, let (end, t) = try nextLine() {
            if let t {
                if t > dueSeconds { return }
                if firstSeconds == nil { firstSeconds = t }
                lastSeconds = max(lastSeconds, t)
            }
            out.append(contentsOf: buffer[start..<end])
            taken += end - start
            consumedBytes += end - start
            start = end
        }
    }

    /// The next whole line's end (after its newline) and its time (nil when unreadable); nil at the
    /// end of the input. Reads more when the buffer holds no whole line.
    private mutating func nextLine() throws(LocusError) -> (Int, Double?)? {
        while true {
            if let newline = buffer[start..<filled].firstIndex(of: 0x0A) {
                return (newline + 1, Self.time(buffer[start..<newline], column: timeColumn))
            }
            if ended {
                guard start < filled else { return nil }
                // The last line without its newline: completed.
                if filled == buffer.count { buffer.append(0) }
                buffer[filled] = 0x0A
                filled += 1
                continue
            }
            guard try fill() else { continue }
        }
    }

    /// Reads more bytes after `filled`, moving the unconsumed ones to the front first (and growing
    /// the buffer for a line longer than it); false at the end of the input (`ended` set).
    private mutating func fill() throws(LocusError) -> Bool {
        if start > 0 {
            buffer.withUnsafeMutableBytes { raw in
                raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: filled - start)
            }
            filled -= start
            start = 0
        }
        if filled == buffer.count { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
        let from = filled
        let n = try source.read(into: &buffer, at: from)
        if n == 0 { ended = true; return false }
        filled += n
        return true
    }

    /// The header's field names: split at commas, spaces and quotes trimmed.
    private static func fields(_ line: ArraySlice<UInt8>) -> [String] {
        line.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map { field in
            var text = String(decoding: field, as: UTF8.self).trimmingASCIIWhitespace()
            if text.count >= 2, text.first == "\"", text.last == "\"" { text = text.dropFirst().dropLast() }
            return String(text)
        }
    }

    /// The `column`th field of a row as a number, or nil.
    private static func time(_ line: ArraySlice<UInt8>, column: Int) -> Double? {
        var index = 0, fieldStart = line.startIndex
        for i in line.indices where line[i] == UInt8(ascii: ",") {
            if index == column { return number(line[fieldStart..<i]) }
            index += 1
            fieldStart = i + 1
        }
        return index == column ? number(line[fieldStart...]) : nil
    }

    private static func number(_ field: ArraySlice<UInt8>) -> Double? {
        let text = String(decoding: field, as: UTF8.self).trimmingASCIIWhitespace()
        guard let t = Double(String(text)), t.isFinite else { return nil }
        return t
    }
}
