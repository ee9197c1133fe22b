#if canImport(Glibc)
import Glibc
#endif
import LocusCore

/// An output written as it is produced: a file, or standard output for `-`.
/// A file is written aside and put in place whole by `close()` (`StagedFile`: a run that fails —
/// it throws, or drops the sink, or calls `discard()` — leaves the file that was there as it was,
/// and no temporary file); a `.live` file (one someone may tail, `locus stream`) is written in place
/// as it comes, an existing one replaced by a new one at the start (`FileReplacement`).
/// Writes go through a buffer of 1 MiB; `flush()` hands it on. Used by one thread at a time.
package final class ByteSink: @unchecked Sendable {
    /// How a file output reaches its path.
    package enum Placement: Sendable {
        /// Written aside, put at the path whole by `close()` (the default).
        case staged
        /// Written at the path as it comes (a live feed).
        case live
    }

    /// The name in messages: the path, or `<stdout>`.
    let name: String
    private var fd: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    private static let capacity = 1 << 20
    /// Pieces of at least this many bytes are written without passing through the buffer.
    private static let directBytes = 1 << 16
    /// Bytes handed on so far.
    private(set) var bytesWritten = 0
    /// A `.live` file's replacement of the file that was at the path (its old file freed on the
    /// side; joined at `close()`).
    private var replacement: FileReplacement?
    /// A `.staged` file: written aside until `close()`. It owns the descriptor.
    private var staged: StagedFile?

    /// Opens `path` for writing (`-`: standard output).
    /// - Throws: `E5005` naming the path when it cannot be created.
    package init(path: String, placement: Placement = .staged) throws(LocusError) {
        if path == "-" {
            name = "<stdout>"
            fd = 1
            ownsDescriptor = false
        } else if placement == .staged {
            name = path
            let staged = try StagedFile(path: path)
            fd = staged.descriptor
            self.staged = staged
            ownsDescriptor = false
        } else {
            name = path
            // An existing regular file is replaced by a new one rather than truncated (`FileReplacement`).
            if let mode = Self.modeOfReplaceableFile(path), let replacement = FileReplacement(path: path, mode: mode) {
                fd = replacement.descriptor
                self.replacement = replacement
            } else {
                fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            }
            ownsDescriptor = true
            guard fd >= 0 else {
                throw LocusError(.fileUnwritable, "cannot write file (\(String(cString: strerror(errno))))", context: .init(file: path))
            }
        }
        buffer.reserveCapacity(Self.capacity)
    }

    /// The permission bits of the file at `path` when it is one a `.live` sink replaces by a new file
    /// with that mode (`FileReplacement`: ext4 writes a truncated-and-rewritten file back to disk at
    /// close): a regular file with no other link (not a symlink); nil otherwise — a symlink, a file
    /// with other links, a FIFO or a device is written through and truncated. The bytes at `path`
    /// are the same either way.
    private static func modeOfReplaceableFile(_ path: String) -> mode_t? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else { return nil }
        return info.st_mode & 0o7777
    }

    deinit {
        if ownsDescriptor, fd >= 0 { Glibc.close(fd) }
        replacement?.wait()
    }

    /// True when what was written can be taken back (`restart()`): a regular file.
    package var canRestart: Bool {
        var info = stat()
        return fd >= 0 && fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && (ownsDescriptor || staged != nil)
    }

    /// Appends bytes.
    /// - Throws: `E5005` when the output cannot take them (disk full, closed pipe).
    func write(_ bytes: UnsafeRawBufferPointer) throws(LocusError) {
        // A large piece (a replay block's positions) goes out as it is, after what is buffered:
        // copying it into the buffer first only moved it once more.
        if bytes.count >= Self.directBytes {
            try flush()
            try Self.writeAll(fd, bytes, name: name)
            bytesWritten += bytes.count
            return
        }
        if buffer.count + bytes.count > Self.capacity { try flush() }
        buffer.append(contentsOf: bytes)
    }

    /// Appends bytes.
    package func write(_ bytes: [UInt8]) throws(LocusError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(LocusError) in try write(raw) } }.get()
    }

    /// Hands the buffered bytes on.
    package func flush() throws(LocusError) {
        guard !buffer.isEmpty else { return }
        let (fd, name) = (self.fd, self.name)
        try buffer.withUnsafeBytes { raw in Result { () throws(LocusError) in try Self.writeAll(fd, raw, name: name) } }.get()
        bytesWritten += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }

    /// Forgets everything written (the file is emptied), for a second pass over the input.
    /// - Throws: `E5005` when the output is not a regular file.
    package func restart() throws(LocusError) {
        buffer.removeAll(keepingCapacity: true)
        guard canRestart, ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
            throw LocusError(.fileUnwritable, "cannot take back what was written", context: .init(file: name))
        }
        bytesWritten = 0
    }

    /// Flushes and closes: a `.staged` file is put at its path now, whole (`StagedFile.commit()`).
    /// - Throws: `E5005` naming the file when it cannot be written or put in place (the old file
    ///   then stays).
    package func close() throws(LocusError) {
        replacement?.wait()
        replacement = nil
        if let staged {
            self.staged = nil
            defer { fd = -1 }
            do throws(LocusError) { try flush() } catch {
                staged.discard()
                throw error
            }
            try staged.commit()
            return
        }
        try flush()
        if ownsDescriptor, fd >= 0 {
            let status = Glibc.close(fd)
            fd = -1
            guard status == 0 else { throw LocusError(.fileUnwritable, "cannot write file", context: .init(file: name)) }
        }
    }

    /// Forgets the output: a `.staged` file's temporary file is removed and the file at the path
    /// stays as it was (a run that failed). Other outputs are only closed.
    package func discard() {
        buffer.removeAll()
        if let staged {
            self.staged = nil
            fd = -1
            staged.discard()
        } else {
            try? close()
        }
    }

    /// `write(2)` until every byte is written.
    /// - Throws: `E5005` naming `name` on an error.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, name: String) throws(LocusError) {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw LocusError(.fileUnwritable, "write failed (\(String(cString: strerror(errno))))", context: .init(file: name))
            }
            offset += n
        }
    }
}

/// Where temporary files go: `$TMPDIR`, else `/tmp`.
package enum TemporaryFiles {
    /// The directory.
    package static var directory: String {
        if let d = getenv("TMPDIR"), d.pointee != 0 { return String(cString: d) }
        return "/tmp"
    }

    /// A new temporary file, open for reading and writing and already unlinked: the system deletes
    /// it when the descriptor is closed, however the process ends.
    /// - Throws: `E5005` naming the directory, with `purpose` ("to sort the trace").
    static func anonymous(purpose: String) throws(LocusError) -> Int32 {
        var template = Array((directory + "/locus-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw LocusError(.fileUnwritable, "cannot create a temporary file \(purpose) in \(directory)", context: .init(file: directory))
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        return fd
    }
}
