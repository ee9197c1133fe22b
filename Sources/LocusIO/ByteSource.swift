#if canImport(Glibc)
import Glibc
#endif
internal import CZlib
import LocusCore

/// An input read in chunks: a file, or standard input for `-`; gzip data (a `.gz` file or a gzip
/// stream on standard input, recognised by its magic bytes 1f 8b) is inflated as it is read (zlib,
/// concatenated members too).
///
/// Rewindable: a file is read again from its start; standard input is copied to a temporary file as
/// it is read (unlinked at once: deleted with the source; up to `copyLimitBytes`), so that a reader that finds it needs a second
/// pass — a trace that is not in time order — can have one. Used by one thread at a time.
package final class ByteSource: @unchecked Sendable {
    /// The name in messages: the path, or `<stdin>`.
    package let name: String
    private let path: String
    private var fd: Int32
    /// Standard input's copy (a temporary file), while reading it the first time.
    private var tee: Int32 = -1
    /// Bytes in the copy, and whether it was given up (past `copyLimitBytes`).
    private var teeBytes = 0
    private var teeAbandoned = false
    /// The most of standard input kept for a second reading (16 GiB): a longer stream can be read
    /// once only (a time-ordered trace needs no more).
    var copyLimitBytes = 16 << 30
    /// After a rewind of standard input: the copy is read first, then the rest of the pipe.
    private var replayingTee = false
    /// gzip state (nil: plain bytes), and its read buffer.
    private var inflater: Inflater?
    private var compressed = [UInt8](repeating: 0, count: 1 << 16)
    private var sniffed = false

    /// Opens `path` (`-`: standard input).
    /// - Throws: `E5001` naming the path when it cannot be opened.
    package init(path: String) throws(LocusError) {
        self.path = path
        if path == "-" {
            name = "<stdin>"
            fd = dup(0)
            guard fd >= 0 else { throw LocusError(.fileUnreadable, "cannot read standard input", context: .init(file: name)) }
        } else {
            name = path
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let reason = errno == ENOENT ? "no such file" : "cannot read file (\(String(cString: strerror(errno))))"
                throw LocusError(.fileUnreadable, reason, context: .init(file: path))
            }
            var info = stat()
            if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                // Closed here and marked closed: a class whose init throws after its properties are
                // set still runs `deinit`, which would close the number again — by then perhaps
                // another thread's file (a test in parallel read EBADF from it).
                close(fd)
                fd = -1
                throw LocusError(.fileUnreadable, "is a directory, not a file", context: .init(file: path))
            }
        }
    }

    deinit {
        if fd >= 0 { Glibc.close(fd) }
        if tee >= 0 { Glibc.close(tee) }
    }

    /// True when the input is standard input.
    var isStandardInput: Bool { path == "-" }

    /// Reads up to `bytes.count − offset` bytes (plain, or inflated) into `bytes[offset...]`; 0 at
    /// the end of the input (or when no room is left). The face for other modules: a safe buffer.
    /// - Throws: `E5001` on a read error; `E5004` for corrupt or truncated gzip data.
    package func read(into bytes: inout [UInt8], at offset: Int) throws(LocusError) -> Int {
        precondition(offset >= 0 && offset <= bytes.count, "read offset out of the buffer")
        guard offset < bytes.count else { return 0 }
        // `withUnsafeMutableBytes` rethrows untyped errors: the typed one is carried out by hand.
        var result: Result<Int, LocusError> = .success(0)
        bytes.withUnsafeMutableBytes { raw in
            do throws(LocusError) {
                result = .success(try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[offset...])))
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    /// Reads up to `buffer.count` bytes (plain, or inflated); 0 at the end of the input.
    /// - Throws: `E5001` on a read error; `E5004` for corrupt or truncated gzip data.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(LocusError) -> Int {
        guard buffer.count > 0 else { return 0 }
        if !sniffed {
            sniffed = true
            // gzip's magic bytes decide (the file name does not): read a first piece and look.
            let n = try readRaw(into: buffer)
            if n >= 2, buffer[0] == 0x1F, buffer[1] == 0x8B {
                let z = try Inflater(name: name)
                z.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                inflater = z
                return try inflate(into: buffer)
            }
            return n
        }
        if inflater != nil { return try inflate(into: buffer) }
        return try readRaw(into: buffer)
    }

    /// Every remaining byte (plain, or inflated): for inputs read whole (positions, truth).
    /// - Throws: as `read(into:)`.
    func readAll() throws(LocusError) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = try chunk.withUnsafeMutableBytes { raw in Result { () throws(LocusError) in try read(into: raw) } }.get()
            if n == 0 { return out }
            out.append(contentsOf: chunk[..<n])
        }
    }

    /// Starts again from the first byte.
    /// - Throws: `E5001` when the file cannot be read again.
    package func rewind() throws(LocusError) {
        if isStandardInput {
            guard !teeAbandoned else {
                throw LocusError(.fileUnreadable, "standard input is too long to be read twice (its copy stopped at "
                                 + "\(copyLimitBytes >> 20) MiB): sort the trace by time first, or give it as a file",
                                 context: .init(file: name))
            }
            // Keep reading the pipe after the copy; the copy is read from its start.
            if !replayingTee, tee >= 0 {
                replayingTee = true
            }
            if tee >= 0, lseek(tee, 0, SEEK_SET) < 0 {
                throw LocusError(.fileUnreadable, "cannot read the copy of standard input again", context: .init(file: name))
            }
        } else if lseek(fd, 0, SEEK_SET) < 0 {
            throw LocusError(.fileUnreadable, "cannot read the file again (\(String(cString: strerror(errno))))", context: .init(file: name))
        }
        sniffed = false
        inflater = nil
    }

    /// The next raw bytes: standard input is copied to the temporary file as it is read; after a
    /// rewind the copy is read first.
    private func readRaw(into buffer: UnsafeMutableRawBufferPointer) throws(LocusError) -> Int {
        if replayingTee {
            let n = try Self.readRetrying(tee, buffer, name: name)
            if n > 0 { return n }
            // The copy is exhausted: the pipe goes on (and is copied again, after what is there).
            replayingTee = false
        }
        let n = try Self.readRetrying(fd, buffer, name: name)
        if isStandardInput, n > 0 { try copyToTee(UnsafeRawBufferPointer(rebasing: buffer[0..<n])) }
        return n
    }

    private func copyToTee(_ bytes: UnsafeRawBufferPointer) throws(LocusError) {
        guard !teeAbandoned else { return }
        teeBytes += bytes.count
        if teeBytes > copyLimitBytes {
            // Disk bounded: the copy is given up (a second reading would fail, see `rewind`).
            teeAbandoned = true
            if tee >= 0 { Glibc.close(tee); tee = -1 }
            return
        }
        if tee < 0 { tee = try TemporaryFiles.anonymous(purpose: "for a copy of standard input") }
        // Appended at the end whatever was read back from it.
        guard lseek(tee, 0, SEEK_END) >= 0 else {
            throw LocusError(.fileUnwritable, "cannot extend the copy of standard input", context: .init(file: TemporaryFiles.directory))
        }
        try ByteSink.writeAll(tee, bytes, name: TemporaryFiles.directory + " (the copy of standard input)")
    }

    /// Inflated bytes into `buffer`; 0 at the end of the last gzip member.
    private func inflate(into buffer: UnsafeMutableRawBufferPointer) throws(LocusError) -> Int {
        guard let z = inflater else { return 0 }
        while true {
            if z.isFinished {
                // Another member may follow (concatenated gzip), or the input ends.
                if !z.hasInput, try fill(z) == 0 { return 0 }
                try z.restart()
            }
            if !z.hasInput, try fill(z) == 0 {
                throw LocusError(.malformedCSV, "the gzip data stops before its end (a truncated file?)", context: .init(file: name))
            }
            let n = try z.inflate(into: buffer)
            if n > 0 { return n }
        }
    }

    /// Feeds the inflater the next compressed bytes; their count (0 at the end of the input).
    private func fill(_ z: Inflater) throws(LocusError) -> Int {
        // Moved out while in use (a copy would be made otherwise: the buffer is also `self`'s).
        var scratch: [UInt8] = []
        swap(&scratch, &compressed)
        defer { swap(&scratch, &compressed) }
        return try scratch.withUnsafeMutableBytes { b in
            Result { () throws(LocusError) -> Int in
                let got = try readRaw(into: b)
                if got > 0 { z.feed(UnsafeRawBufferPointer(rebasing: b[0..<got])) }
                return got
            }
        }.get()
    }

    /// `read(2)` until it gives bytes, the end, or a real error.
    private static func readRetrying(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, name: String) throws(LocusError) -> Int {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw LocusError(.fileUnreadable, "read failed (\(String(cString: strerror(errno))))", context: .init(file: name))
        }
    }
}

/// zlib's inflate over bytes fed to it (gzip header auto-detected: windowBits 15 + 32).
private final class Inflater {
    private let stream: UnsafeMutablePointer<z_stream>
    /// Compressed bytes not yet consumed (zlib reads them in place during `inflate`).
    private var pending: [UInt8] = []
    private var pendingOffset = 0
    private let name: String
    private(set) var isFinished = false

    init(name: String) throws(LocusError) {
        self.name = name
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard inflateInit2_(stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deallocate()
            throw LocusError(.fileUnreadable, "cannot start zlib", context: .init(file: name))
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    var hasInput: Bool { pendingOffset < pending.count }

    func feed(_ bytes: UnsafeRawBufferPointer) {
        if pendingOffset >= pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingOffset = 0
        }
        pending.append(contentsOf: bytes)
    }

    /// Starts the next gzip member.
    func restart() throws(LocusError) {
        guard inflateReset(stream) == Z_OK else { throw LocusError(.malformedCSV, "corrupt gzip data", context: .init(file: name)) }
        isFinished = false
    }

    /// Inflates into `buffer` from the pending input; 0 when it needs more input or the member ended.
    /// - Throws: `E5004` for corrupt data.
    func inflate(into buffer: UnsafeMutableRawBufferPointer) throws(LocusError) -> Int {
        guard !isFinished, hasInput else { return 0 }
        let capacity = min(buffer.count, Int(UInt32.max))
        let status: Int32 = pending.withUnsafeMutableBufferPointer { input in
            stream.pointee.next_in = input.baseAddress! + pendingOffset
            stream.pointee.avail_in = UInt32(input.count - pendingOffset)
            stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            stream.pointee.avail_out = UInt32(capacity)
            let status = CZlib.inflate(stream, Z_NO_FLUSH)
            pendingOffset = input.count - Int(stream.pointee.avail_in)
            stream.pointee.next_in = nil
            return status
        }
        let produced = capacity - Int(stream.pointee.avail_out)
        switch status {
        case Z_OK, Z_BUF_ERROR: return produced
        case Z_STREAM_END:
            isFinished = true
            return produced
        default:
            throw LocusError(.malformedCSV, "corrupt gzip data (zlib status \(status))", context: .init(file: name))
        }
    }
}
