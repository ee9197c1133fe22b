import Foundation
import LocusCore

/// Reads a whole range trace (`trace.csv`, SPEC §2) into memory (`RangeTrace`): the rules
/// are `TraceRowParser`'s, with the whole input as one piece. Streamed replay reads the same rows in
/// bounded chunks (`TraceStream`).
public enum TraceReader {
    /// Reads and parses the file at `path`.
    /// - Throws: `E5001` when the file can't be read; `E5003` when a required column is missing;
    ///   `E5004` when there is no header.
    public static func read(path: String) throws(LocusError) -> RangeTrace {
        let data = try FileBytes.read(path: path)
        let result = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Result<RangeTrace, LocusError> in
            Result { () throws(LocusError) -> RangeTrace in try parse(raw.bindMemory(to: UInt8.self), file: path) }
        }
        return try result.get()
    }

    /// Reads the whole trace from `source` (a file, standard input, gzip data) in chunks.
    /// - Throws: as `TraceStream.nextRows(into:)`.
    package static func read(source: ByteSource) throws(LocusError) -> RangeTrace {
        var stream = TraceStream(source: source)
        var rows: [TraceRow] = []
        while try stream.nextRows(into: &rows) {}
        return trace(rows, tags: stream.tags, floors: stream.floors, skipped: stream.skipped)
    }

    /// `parse(_:file:fastRows:)` over a span of the bytes (the face other modules use: the benchmark,
    /// the fuzzer, which also reads with `fastRows` false); `file` names the source in errors.
    /// - Throws: as `parse(_:file:fastRows:)`.
    package static func parse(_ bytes: Span<UInt8>, file: String, fastRows: Bool = true) throws(LocusError) -> RangeTrace {
        try bytes.withUnsafeBufferPointer { b throws(LocusError) in try parse(b, file: file, fastRows: fastRows) }
    }

    /// Parses trace bytes; `file` names the source in errors.
    /// - Throws: `E5003` when a required column is missing; `E5004` when there is no header.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, file: String) throws(LocusError) -> RangeTrace {
        try parse(bytes, file: file, fastRows: true)
    }

    /// Parses trace bytes. With `fastRows` a plain row (no quotes, no comment, all columns present,
    /// numbers that parse) is split and converted in one pass over its bytes; any other row, and
    /// every row when `fastRows` is false, goes through `CSVScanner`. Both paths give the same trace
    /// (the tests and the trace fuzzer compare them).
    /// - Throws: `E5003` when a required column is missing; `E5004` when there is no header.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, file: String, fastRows: Bool) throws(LocusError) -> RangeTrace {
        var parser = try TraceRowParser(header: bytes, file: file)
        var rows: [TraceRow] = []
        rows.reserveCapacity(bytes.count / 16)
        let rest = UnsafeBufferPointer(rebasing: bytes[parser.headerEnd...])
        _ = parser.parse(rest, isLast: true, fastRows: fastRows, into: &rows)
        return trace(rows, tags: parser.tags, floors: parser.floors, skipped: parser.skipped)
    }

    /// The parsed rows and the parser's tables as a trace.
    private static func trace(_ rows: [TraceRow], tags: [TagID], floors: [FloorID], skipped: SkipTally) -> RangeTrace {
        var trace = RangeTrace()
        trace.rows = rows
        trace.tags = tags
        trace.floors = floors
        trace.skipped = skipped
        return trace
    }
}
