import LocusCore

/// An input (`ByteSource`) cut into pieces of whole lines, about `chunkBytes` at a time, for the
/// parsers that read a CSV file of any length in bounded memory (`TraceStream`, `PointStream`).
///
/// `header(_:)` hands the parser the first piece (at least the first whole line, or the whole
/// input) and drops what it consumed; each `next(_:)` hands the next piece, ending with a whole
/// line unless it is the input's last. The parser returns the bytes it consumed: all of them, or
/// fewer when a quoted record continues past the piece (its bytes start the next piece, which
/// grows as needed).
struct LineChunks: Sendable {
    /// Where the bytes come from.
    let source: ByteSource
    private let chunkBytes: Int
    /// Bytes read and not yet consumed are `buffer[0..<filled]`.
    private var buffer: [UInt8]
    private var filled = 0
    private var sourceEnded = false
    /// True once the last piece was handed out.
    private(set) var isFinished = false

    /// Pieces of `source`, about `chunkBytes` each (1 MiB by default).
    init(source: ByteSource, chunkBytes: Int = 1 << 20) {
        self.source = source
        self.chunkBytes = max(64, chunkBytes)
        buffer = [UInt8](repeating: 0, count: self.chunkBytes)
    }

    /// Hands `parse` the input's first piece (it holds the first line whole); drops the bytes it
    /// returns as consumed.
    /// - Throws: `parse`'s errors; `E5001` when the input cannot be read.
    mutating func header(_ parse: (UnsafeBufferPointer<UInt8>) throws(LocusError) -> Int) throws(LocusError) {
        while true {
            try fill()
            if sourceEnded || Self.firstLineEnd(buffer, filled) > 0 { break }
            try grow()
        }
        let consumed = try buffer.withUnsafeBufferPointer { b in
            Result { () throws(LocusError) in try parse(UnsafeBufferPointer(rebasing: b[0..<filled])) }
        }.get()
        drop(consumed)
    }

    /// Hands `parse` the next piece and whether it is the input's last; false (nothing handed) once
    /// the input is exhausted.
    /// - Throws: `E5001` when the input cannot be read; `E5004` for a line longer than 1 GiB.
    mutating func next(_ parse: (UnsafeBufferPointer<UInt8>, _ isLast: Bool) -> Int) throws(LocusError) -> Bool {
        guard !isFinished else { return false }
        while true {
            try fill()
            let cut = sourceEnded ? filled : buffer.withUnsafeBufferPointer { Self.completeLinesEnd(UnsafeBufferPointer(rebasing: $0[0..<filled])) }
            if cut == 0 && !sourceEnded { try grow(); continue }
            let isLast = sourceEnded
            let consumed = buffer.withUnsafeBufferPointer { b in parse(UnsafeBufferPointer(rebasing: b[0..<cut]), isLast) }
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

    /// The reading step of a stream of parsed pieces: the parser made from the header on first use
    /// (`makeParser` returns it and the header's length), then the next piece given to `parse`.
    /// Returns false once the input is exhausted.
    /// - Throws: `makeParser`'s errors; as `next(_:)`.
    mutating func nextPiece<Parser>(parser: inout Parser?,
                                            makeParser: (UnsafeBufferPointer<UInt8>) throws(LocusError) -> (Parser, Int),
                                            parse: (inout Parser, UnsafeBufferPointer<UInt8>, Bool) -> Int) throws(LocusError) -> Bool {
        if parser == nil {
            var made: Parser? = nil
            try header { (bytes) throws(LocusError) -> Int in
                let (p, headerEnd) = try makeParser(bytes)
                made = p
                return headerEnd
            }
            parser = made
        }
        guard var p = parser else { return false }
        defer { parser = p }
        return try next { piece, isLast in parse(&p, piece, isLast) }
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

    /// The offset just past the last `\n` of `bytes` (0 when it has none: the piece must grow).
    private static func completeLinesEnd(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var i = bytes.count
        while i > 0 {
            if bytes[i - 1] == 0x0A { return i }
            i -= 1
        }
        return 0
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
