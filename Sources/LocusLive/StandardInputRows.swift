#if canImport(Glibc)
import Glibc
#endif
import LocusCore

/// `--input -`: standard input read as it comes — `poll` with the stream's timeout, then whatever
/// is there (never waiting to fill a buffer, so a slow pipe's rows are solved as they arrive) — and
/// handed on in whole lines (`LiveRowConsumer.ingestLines`; the consumer tells a CSV header from
/// JSON Lines). A partial last line waits for the rest; at the end of the input it is completed
/// with a newline.
final class StandardInputRows {
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)
    private var filled = 0
    private(set) var ended = false
    /// Reads that returned bytes (or the end).
    private(set) var reads = 0

    /// Waits up to `timeoutMilliseconds` for input and feeds what came to `consumer`; false once
    /// standard input has ended (and everything was fed).
    /// - Throws: E5001 when standard input cannot be read; the consumer's (the CSV header's) errors.
    func wait<Consumer: LiveRowConsumer>(timeoutMilliseconds: Int32, into consumer: inout Consumer,
                                         receivedSeconds: () -> Double) throws(LocusError) -> Bool {
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
        try feedLines(into: &consumer, receivedSeconds: receivedSeconds())
        return !ended
    }

    /// Feeds the whole lines buffered; keeps the partial last one.
    private func feedLines<Consumer: LiveRowConsumer>(into consumer: inout Consumer, receivedSeconds: Double) throws(LocusError) {
        var end = filled
        while end > 0 && buffer[end - 1] != 0x0A { end -= 1 }
        guard end > 0 else { return }
        try buffer.withUnsafeBufferPointer { (b: UnsafeBufferPointer<UInt8>) throws(LocusError) in
            try consumer.ingestLines(UnsafeBufferPointer(rebasing: b[0..<end]).span, receivedSeconds: receivedSeconds)
        }
        let rest = filled - end
        if rest > 0 {
            buffer.withUnsafeMutableBytes { raw in raw.baseAddress!.copyMemory(from: raw.baseAddress! + end, byteCount: rest) }
        }
        filled = rest
        if buffer.count > 1 << 20 && filled <= 1 << 19 { buffer.removeLast(buffer.count - (1 << 20)) }
    }
}
