#if canImport(Glibc)
import Glibc
#endif

/// Removes a file without making the caller wait for the file system: the name is moved aside at
/// once (`rename` to a hidden name beside it, `.NAME.locus-replaced-PID-N`) and the file unlinked
/// on a thread of its own, which `wait()` (or the end of the value) joins.
///
/// Why: unlinking (or truncating) a file of tens of MB whose pages are still in the page cache
/// frees them there and then — ~12 ms for the 38 MB of positions `locus replay` writes on the
/// bench recording — while the process has a core to spare at its start. (`ByteSink` replaces an
/// existing output this way.)
final class FileSetAside {
    private var thread = pthread_t()
    private var running = false

    /// Moves `path` aside and starts unlinking it; nil when the rename fails (nothing was done).
    init?(path: String) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let aside = "\(directory).\(base).locus-replaced-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard rename(path, aside) == 0 else { return nil }
        guard let copy = strdup(aside) else { unlink(aside); return }
        let started = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            unlink(argument.assumingMemoryBound(to: CChar.self))
            free(argument)
            return nil
        }, copy)
        if started == 0 {
            running = true
        } else {
            // No thread: unlinked here.
            unlink(copy)
            free(copy)
        }
    }

    /// Returns when the file is unlinked.
    func wait() {
        guard running else { return }
        pthread_join(thread, nil)
        running = false
    }

    deinit { wait() }
}
