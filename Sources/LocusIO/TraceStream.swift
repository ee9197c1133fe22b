import LocusCore

/// A range trace read in bounded chunks (SPEC §2): the rows `TraceReader` would read from the whole
/// file, skipped and counted alike (`TraceRowParser`), but never more than a chunk of the input in
/// memory — a recording of any length, from a file, a pipe or gzip data (`ByteSource`).
///
/// Each call of `nextRows(into:)` reads about `chunkBytes` and appends that piece's kept rows, in
/// file order. A piece ends with a whole line; the rest of the bytes (and a quoted record that
/// continues past them) start the next piece.
package struct TraceStream: Sendable {
    /// Where the bytes come from.
    package let source: ByteSource
    private let chunkBytes: Int
    private var parser: TraceRowParser?
    /// Bytes read and not yet parsed are `buffer[0..<filled]`.
    private var buffer: [UInt8]
    private var filled = 0
    private var sourceEnded = false
    /// True once every row was returned.
    package private(set) var isFinished = false

    /// A stream over `source`, reading about `chunkBytes` at a time (1 MiB by default).
    package init(source: ByteSource, chunkBytes: Int = 1 << 20) {
        self.source = source
        self.chunkBytes = max(64, chunkBytes)
        buffer = [UInt8](repeating: 0, count: self.chunkBytes)
    }

    /// Tag ids in order of first appearance (`TraceRow.tagIndex` indexes it); grows as rows come.
    package var tags: [TagID] { parser?.tags ?? [] }
    /// Floor ids named by the rows so far, in order of first appearance.
    package var floors: [FloorID] { parser?.floors ?? [] }
    /// Rows skipped so far, by reason.
    package var skipped: SkipTally { parser?.skipped ?? SkipTally() }

    /// Reads the next piece and appends its kept rows to `rows` (possibly none); false once the
    /// input is exhausted (nothing appended then).
    /// - Throws: `E5004` for a file without a header, `E5003` for a missing required column (naming
    ///   the file and line), `E5001` when the input cannot be read.
    package mutating func nextRows(into rows: inout [TraceRow]) throws(LocusError) -> Bool {
        guard !isFinished else { return false }
        while true {
            try fill()
            if parser == nil {
                // The header needs its whole line (or the whole input).
                let lineEnd = sourceEnded ? filled : Self.firstLineEnd(buffer, filled)
                if lineEnd == 0 && !sourceEnded { try grow(); continue }
                let p = try buffer.withUnsafeBufferPointer { b in
                    Result { () throws(LocusError) in try TraceRowParser(header: UnsafeBufferPointer(rebasing: b[0..<filled]), file: source.name) }
                }.get()
                parser = p
                drop(p.headerEnd)
            }
            let cut = sourceEnded ? filled : buffer.withUnsafeBufferPointer { TraceRowParser.completeLinesEnd(UnsafeBufferPointer(rebasing: $0[0..<filled])) }
            if cut == 0 && !sourceEnded { try grow(); continue }
            let isLast = sourceEnded
            var p = parser!
            let consumed = buffer.withUnsafeBufferPointer { b in
                p.parse(UnsafeBufferPointer(rebasing: b[0..<cut]), isLast: isLast, into: &rows)
            }
            parser = p
            if isLast {
                filled = 0
                isFinished = true
                return true
            }
            if consumed == 0 {
                // One record longer than the buffer (a quoted field across many lines): read more.
                try grow()
                continue
            }
            drop(consumed)
            return true
        }
    }

    /// Reads until the buffer is full or the input ends.
    private mutating func fill() throws(LocusError) {
        while !sourceEnded && filled < buffer.count {
            let n = try buffer.withUnsafeMutableBytes { raw in
                Result { () throws(LocusError) -> Int in
                    try source.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]))
                }
            }.get()
            if n == 0 { sourceEnded = true } else { filled += n }
        }
    }

    /// Doubles the buffer (a line or a record longer than a chunk).
    private mutating func grow() throws(LocusError) {
        guard buffer.count < (1 << 30) else {
            throw LocusError(.malformedCSV, "a line longer than 1 GiB", context: .init(file: source.name))
        }
        buffer.append(contentsOf: repeatElement(0, count: buffer.count))
    }

    /// Moves the bytes after `count` to the front.
    private mutating func drop(_ count: Int) {
        let rest = filled - count
        if rest > 0 {
            buffer.withUnsafeMutableBytes { raw in
                raw.baseAddress!.copyMemory(from: raw.baseAddress! + count, byteCount: rest)
            }
        }
        filled = rest
        // Back to the chunk size after a long record.
        if buffer.count > chunkBytes && filled <= chunkBytes / 2 { buffer.removeLast(buffer.count - chunkBytes) }
    }

    /// The offset just past the first `\n` in `buffer[0..<count]`, or 0.
    private static func firstLineEnd(_ buffer: [UInt8], _ count: Int) -> Int {
        var i = 0
        while i < count {
            if buffer[i] == 0x0A { return i + 1 }
            i += 1
        }
        return 0
    }
}
