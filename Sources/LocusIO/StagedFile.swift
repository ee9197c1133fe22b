#if canImport(Glibc)
import Glibc
#endif
import LocusCore

/// An output file written aside and put in its place only when the run succeeded (`commit()`), so
/// that the file at the path is always a whole one: the old file until the commit, the new one
/// after (SPEC §5: "a run that fails leaves files that existed as they were").
///
/// Why aside, in the target's directory: `rename(2)` is atomic only within one file system, and a
/// reader (or a run that fails half-way, or a truncated `.gz` input) must never see a half-written
/// output. The temporary file is `.NAME.locus-PID-RANDOM` beside the target (hidden; unique:
/// created with `O_EXCL`), removed by `discard()` — which the end of the value calls when no commit
/// came, so every error path that drops the file leaves nothing behind.
///
/// What is at the path decides how:
/// - nothing, or a regular file with no other link: the new file is renamed over it at the commit
///   (with the old one's permission bits; a new file gets 0644 less the umask, as `open` gives);
///   the old file's last descriptor is closed on a thread of its own, so freeing a large old file
///   (tens of MB in the page cache) does not hold up the process (`OldFileRelease`);
/// - a symlink (a chain of them, or one that dangles): the same at the file it leads to — the link
///   stays a link, and its target gets the new bytes;
/// - a regular file with other hard links: renaming would cut them off, so the new bytes are copied
///   into it at the commit (every link sees them; a failure before the commit leaves it as it was);
/// - a FIFO, a device or another non-regular file: written through as it comes (nothing to keep);
/// - an existing file in a directory where nothing can be created (no write permission, immutable):
///   staged in an unlinked file in `$TMPDIR` (`TemporaryFiles`) and copied into it at the commit.
final class StagedFile {
    /// Where the bytes wait until the commit, and how the commit puts them in place.
    private enum Staging {
        /// A hidden file beside the target, renamed over it.
        case renamed(String)
        /// A hidden file beside the target, copied into it (a file with other hard links).
        case copiedFrom(String)
        /// An unlinked file in `$TMPDIR`, copied into the target.
        case copiedFromAnonymous
        /// The target itself (a FIFO, a device).
        case writtenThrough
    }

    /// The descriptor the bytes go to (the temporary file, or the target itself when written through).
    let descriptor: Int32
    /// The path given (for messages).
    let path: String
    /// The file the commit puts the bytes at (symlinks resolved).
    private let target: String
    /// How; nil once committed or discarded.
    private var staging: Staging?
    private var release = OldFileRelease()

    /// Creates the temporary file beside the target (or opens a non-regular target to write through).
    /// - Throws: `E5005` naming `path` when the file cannot be created.
    init(path: String) throws(LocusError) {
        self.path = path
        let target = Self.resolvingSymlinks(path)
        self.target = target
        var info = stat()
        let exists = stat(target, &info) == 0
        if exists && info.st_mode & S_IFMT != S_IFREG {
            // A FIFO, a device (or a directory, which open refuses): written through.
            let fd = open(target, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw Self.unwritable(path, errno) }
            descriptor = fd
            staging = .writtenThrough
            return
        }
        let slash = target.lastIndex(of: "/")
        let directory = slash.map { String(target[...$0]) } ?? ""
        // A hidden name of at most ~230 bytes: a long NAME is cut (the suffix keeps it unique).
        let base = String(decoding: (slash.map { String(target[target.index(after: $0)...]) } ?? target).utf8.prefix(200), as: UTF8.self)
        var fd: Int32 = -1
        var name = ""
        for _ in 0..<100 {
            name = "\(directory).\(base).locus-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
            // Registered before it exists: a signal between the `open` and a registration after it
            // would leave the file behind (seen in CI). The name carries our pid, so the handler
            // unlinking it before `open` made it (or when `open` fails) removes nothing of another's.
            StagedFileCleanup.register(name)
            // Read and write: a copying commit reads the bytes back.
            fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd >= 0 { break }
            let openError = errno
            StagedFileCleanup.unregister(name)
            errno = openError
            if openError != EEXIST { break }
        }
        if fd < 0 {
            let besideError = errno
            // Nothing can be created beside an existing file: staged in $TMPDIR, copied in.
            guard exists else { throw Self.unwritable(path, besideError) }
            let anonymous = try TemporaryFiles.anonymous(purpose: "to stage \(path)")
            _ = fcntl(anonymous, F_SETFD, FD_CLOEXEC)
            descriptor = anonymous
            staging = .copiedFromAnonymous
            return
        }
        if exists { _ = fchmod(fd, info.st_mode & 0o7777) }  // the old file's mode, exactly
        descriptor = fd
        staging = exists && info.st_nlink > 1 ? .copiedFrom(name) : .renamed(name)
    }

    deinit {
        discard()
        release.wait()
    }

    /// Puts the file at the path and closes it: renamed over what was there (or its bytes copied
    /// into the file there). After it, `discard()` does nothing.
    /// - Throws: `E5005` naming the path when the file cannot be closed or put in place (then the
    ///   old file is as it was — but for a copy that failed half-way — and the temporary file is
    ///   removed).
    func commit() throws(LocusError) {
        guard let staging else { return }
        self.staging = nil
        switch staging {
        case .writtenThrough:
            guard Glibc.close(descriptor) == 0 else { throw Self.unwritable(path, errno) }
        case .copiedFromAnonymous:
            let copied = Self.copy(from: descriptor, to: target), copyError = errno
            Glibc.close(descriptor)
            guard copied else { throw Self.unwritable(path, copyError) }
        case .copiedFrom(let temporary):
            let copied = Self.copy(from: descriptor, to: target), copyError = errno
            Glibc.close(descriptor)
            unlink(temporary)
            StagedFileCleanup.unregister(temporary)
            guard copied else { throw Self.unwritable(path, copyError) }
        case .renamed(let temporary):
            guard Glibc.close(descriptor) == 0 else {
                let closeError = errno
                unlink(temporary)
                StagedFileCleanup.unregister(temporary)
                throw Self.unwritable(path, closeError)
            }
            // The old file stays open across the rename, so that its freeing happens on the side.
            let old = open(target, O_RDONLY | O_CLOEXEC)
            guard rename(temporary, target) == 0 else {
                let renameError = errno
                if old >= 0 { Glibc.close(old) }
                unlink(temporary)
                StagedFileCleanup.unregister(temporary)
                throw Self.unwritable(path, renameError)
            }
            StagedFileCleanup.unregister(temporary)
            if old >= 0 { release.close(old) }
        }
    }

    /// Closes and removes the temporary file (the old file stays as it was); nothing after a commit.
    func discard() {
        guard let staging else { return }
        self.staging = nil
        Glibc.close(descriptor)
        switch staging {
        case .renamed(let temporary), .copiedFrom(let temporary):
            unlink(temporary)
            StagedFileCleanup.unregister(temporary)
        case .copiedFromAnonymous, .writtenThrough: break
        }
    }

    /// `path` with its symlinks followed (up to 40, as the kernel does) to the file they lead to,
    /// which may not exist yet (a dangling link: the file is created at its target, as `open` would).
    /// A relative link is resolved from its own directory. Not a symlink: `path` itself.
    static func resolvingSymlinks(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(current, &buffer, buffer.count - 1)
            guard n > 0 else { return current }
            let link = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if link.hasPrefix("/") {
                current = link
            } else {
                let directory = current.lastIndex(of: "/").map { String(current[...$0]) } ?? ""
                current = directory + link
            }
        }
        return current
    }

    /// Copies everything written to `source` (from its start) into the existing file `target`
    /// (truncated first); false on an error.
    private static func copy(from source: Int32, to target: String) -> Bool {
        guard lseek(source, 0, SEEK_SET) == 0 else { return false }
        let output = open(target, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard output >= 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var ok = true
        while ok {
            let n = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { ok = n == 0; break }
            let written = buffer.withUnsafeBytes { raw in
                Result { () throws(LocusError) in try ByteSink.writeAll(output, UnsafeRawBufferPointer(rebasing: raw[..<n]), name: target) }
            }
            if case .failure = written { ok = false }
        }
        return Glibc.close(output) == 0 && ok
    }

    /// `E5005` naming `path`, with the system's words for `error` (an `errno` taken where it failed).
    private static func unwritable(_ path: String, _ error: Int32) -> LocusError {
        LocusError(.fileUnwritable, "cannot write file (\(String(cString: strerror(error))))", context: .init(file: path))
    }
}

/// The old file's last descriptor, closed (and so the file freed) on a thread of its own; `wait()`
/// joins it. Why: freeing a file of tens of MB whose pages are in the page cache takes the process
/// ~20 ms (docs/benchmarks.md, "Figures behind the code"), on a core that is otherwise idle.
struct OldFileRelease {
    private var thread = pthread_t()
    private var running = false

    /// Closes `fd` on the side (here, when no thread can be started).
    mutating func close(_ fd: Int32) {
        wait()
        let started = pthread_create(&thread, nil, { argument in
            Glibc.close(Int32(Int(bitPattern: argument)))
            return nil
        }, UnsafeMutableRawPointer(bitPattern: Int(fd)))
        if started == 0 { running = true } else { Glibc.close(fd) }
    }

    /// Returns when the old file is freed.
    mutating func wait() {
        guard running else { return }
        pthread_join(thread, nil)
        running = false
    }
}
