#if canImport(Glibc)
import Glibc
#endif
import LocusCore

/// `locus stream --input -`: standard input read as it comes — `poll` with the stream's timeout,
/// then whatever is there (never waiting to fill a buffer, so a slow pipe's rows are solved as they
/// arrive) — and handed on in whole lines: the CSV header first (or JSON Lines when the first byte
/// is `{`), then rows. A partial last line waits for the rest; at the end of the input it is
/// completed with a newline.
final class StandardInputRows {
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)
    private var filled = 0
    private var mode: Mode = .unknown
    private(set) var ended = false
    /// Reads that returned bytes (or the end).
    private(set) var reads = 0

    private enum Mode { case unknown, csv, jsonLines }

    /// Waits up to `timeoutMilliseconds` for input and feeds what came to `stream`; false once
    /// standard input has ended (and everything was fed).
    /// - Throws: E5001 when standard input cannot be read; the CSV header's errors (E5004, E5003).
    func wait(timeoutMilliseconds: Int32, into stream: inout LiveStream, receivedSeconds: () -> Double) throws(LocusError) -> Bool {
        guard !ended else { return false }
        var p = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        let ready = poll(&p, 1, timeoutMilliseconds)
        if ready < 0 {
            if errno == EINTR { return true }
            throw LocusError(.fileUnreadable, "cannot wait for standard input (\(String(cString: strerror(errno))))", context: .init(file: "<stdin>"))
        }
        guard ready > 0 else { return true }
        if filled == buffer.count { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
        let n = buffer.withUnsafeMutableBytes { raw in read(0, raw.baseAddress! + filled, raw.count - filled) }
        if n < 0 {
            if errno == EINTR || errno == EAGAIN { return true }
            throw LocusError(.fileUnreadable, "cannot read standard input (\(String(cString: strerror(errno))))", context: .init(file: "<stdin>"))
        }
        reads += 1
        if n == 0 {
            ended = true
            if filled > 0, buffer[filled - 1] != 0x0A {
                if filled == buffer.count { buffer.append(0) }
                buffer[filled] = 0x0A
                filled += 1
            }
        } else {
            filled += n
        }
        try feedLines(into: &stream, receivedSeconds: receivedSeconds())
        return !ended
    }

    /// Feeds the whole lines buffered; keeps the partial last one.
    private func feedLines(into stream: inout LiveStream, receivedSeconds: Double) throws(LocusError) {
        var end = filled
        while end > 0 && buffer[end - 1] != 0x0A { end -= 1 }
        guard end > 0 else { return }
        var consumed = 0
        try buffer.withUnsafeBufferPointer { b throws(LocusError) in
            let lines = UnsafeBufferPointer(rebasing: b[0..<end])
            if mode == .unknown {
                switch LiveStream.looksLikeJSON(lines) {
                case nil: consumed = end; return  // blank lines only so far
                case true?: mode = .jsonLines
                case false?:
                    consumed = try stream.readHeader(lines)
                    mode = .csv
                }
            }
            let rest = UnsafeBufferPointer(rebasing: lines[consumed...])
            switch mode {
            case .csv: stream.ingestCSVLines(rest)
            case .jsonLines: stream.ingestJSONLines(rest, receivedSeconds: receivedSeconds)
            case .unknown: break
            }
            consumed = end
        }
        let rest = filled - consumed
        if rest > 0 {
            buffer.withUnsafeMutableBytes { raw in raw.baseAddress!.copyMemory(from: raw.baseAddress! + consumed, byteCount: rest) }
        }
        filled = rest
        if buffer.count > 1 << 20 && filled <= 1 << 19 { buffer.removeLast(buffer.count - (1 << 20)) }
    }
}
