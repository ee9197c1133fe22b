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
    var source: ByteSource { chunks.source }
    private var chunks: LineChunks
    private var parser: TraceRowParser?

    /// A stream over `source`, reading about `chunkBytes` at a time (1 MiB by default).
    package init(source: ByteSource, chunkBytes: Int = 1 << 20) {
        chunks = LineChunks(source: source, chunkBytes: chunkBytes)
    }

    /// True once every row was returned.
    var isFinished: Bool { chunks.isFinished }
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
        try nextPiece { p, piece, isLast in p.parse(piece, isLast: isLast, into: &rows) }
    }

    /// `nextRows(into:)` appending to a run of rows (the replay's reader: no copy per row).
    package mutating func nextRows(into run: TraceRowRun) throws(LocusError) -> Bool {
        try nextPiece { p, piece, isLast in p.parse(piece, isLast: isLast, into: run) }
    }

    /// Reads the next piece (the header first) and has `parse` take its rows.
    private mutating func nextPiece(_ parse: (inout TraceRowParser, UnsafeBufferPointer<UInt8>, Bool) -> Int) throws(LocusError) -> Bool {
        let name = chunks.source.name
        return try chunks.nextPiece(parser: &parser, makeParser: { (bytes) throws(LocusError) in
            let p = try TraceRowParser(header: bytes, file: name)
            return (p, p.headerEnd)
        }, parse: parse)
    }
}
