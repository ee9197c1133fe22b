#if canImport(Glibc)
import Glibc
#endif

/// A new file put in the place of an existing one, without making the caller wait for the old one
/// to be freed: the old file is opened (so that it outlives its name), a new file is created beside
/// it under a hidden name (`.NAME.locus-XXXXXX`, with the old one's permission bits) and renamed
/// over it — at every moment `path` names the old file or the new one — and the old file's last
/// descriptor is closed on a thread of its own, which frees it; `wait()` (or the end of the value)
/// joins that thread.
///
/// Why: truncating a file of tens of MB whose pages are in the page cache, or unlinking it, frees
/// them there and then, and ext4 (`auto_da_alloc`, on by default) writes a file that was truncated
/// to length 0 and written again back to disk when it is closed, which the process waited for (most
/// of it at its very end; the figure: docs/benchmarks.md, "Figures behind the code"). A new file's data is written back later like any other's, and the old one is
/// freed on a core that is idle at the process's start. (A `.live` `ByteSink` replaces an existing
/// output this way; a staged one, `StagedFile`, renames its new file over the old one at its end.)
final class FileReplacement {
    /// The new file, open for writing (the caller closes it).
    let descriptor: Int32
    private var release = OldFileRelease()

    /// Replaces the file at `path` by a new, empty one with permission bits `mode`; nil when any
    /// step fails (then nothing changed: the old file is where it was).
    init?(path: String, mode: mode_t) {
        let old = open(path, O_RDONLY | O_CLOEXEC)
        guard old >= 0 else { return nil }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        // A fresh name beside it, as `TemporaryFiles` makes them (mkstemp: created, unique).
        var template = Array("\(directory).\(base).locus-XXXXXX".utf8CString)
        let new = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard new >= 0 else { close(old); return nil }
        _ = fcntl(new, F_SETFD, FD_CLOEXEC)
        _ = fchmod(new, mode)  // exactly the old mode (mkstemp made it 0600)
        let renamed = template.withUnsafeBufferPointer { temporary in
            if rename(temporary.baseAddress!, path) == 0 { return true }
            unlink(temporary.baseAddress!)
            return false
        }
        guard renamed else {
            close(new)
            close(old)
            return nil
        }
        descriptor = new
        // The old file's last descriptor, closed (and so the file freed) on the side.
        release.close(old)
    }

    /// Returns when the old file is freed.
    func wait() { release.wait() }

    deinit { wait() }
}
