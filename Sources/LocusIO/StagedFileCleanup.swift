#if canImport(Glibc)
import Glibc
#endif

/// The temporary files of outputs being staged (`StagedFile`), removed when a signal ends the
/// process: a `locus replay` stopped by Ctrl-C (SIGINT), SIGTERM or SIGHUP leaves the old outputs as
/// they were (the renames never happened) and no hidden `.NAME.locus-PID-…` file beside them.
///
/// Only the `locus` executable installs the handlers (`installSignalHandlers()`): a library must not
/// take a host's signals (Python's Ctrl-C, an application's own handlers), so staged files of the C
/// ABI are cleaned up by their normal discard only. The handler does only async-signal-safe work —
/// `unlink` of the registered paths, then the default action re-raised —, so the table is a fixed
/// array of C strings written by the program before and after each staging, read by the handler.
package enum StagedFileCleanup {
    /// Room for this many files staged at once (a command stages at most a few); more are not
    /// registered (still removed by their discard, just not on a signal).
    private static let capacity = 32
    /// Each slot: a `strdup`'d temporary path, or nil.
    nonisolated(unsafe) private static let slots: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = {
        let p = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: capacity)
        p.initialize(repeating: nil, count: capacity)
        return p
    }()

    /// Registers a temporary file to remove on a signal.
    static func register(_ path: String) {
        _ = slots  // (made before a handler could read it)
        for i in 0..<capacity where slots[i] == nil {
            slots[i] = strdup(path)
            return
        }
    }

    /// The temporary file was renamed into place or removed: forget it.
    static func unregister(_ path: String) {
        for i in 0..<capacity {
            guard let p = slots[i], String(cString: p) == path else { continue }
            slots[i] = nil
            free(p)
            return
        }
    }

    /// Installs the handler for SIGINT, SIGTERM and SIGHUP: unlink every registered temporary file,
    /// then end as the signal would have (the default action, re-raised). `locus stream` replaces
    /// SIGINT and SIGTERM with its drain; its files are written in place, not staged.
    package static func installSignalHandlers() {
        _ = slots
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { signal in
            for i in 0..<StagedFileCleanup.capacity {
                if let p = StagedFileCleanup.slots[i] { unlink(p) }
            }
            Glibc.signal(signal, SIG_DFL)
            raise(signal)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for s in [SIGINT, SIGTERM, SIGHUP] {
            sigaction(s, &action, nil)
            sigaddset(&unblock, s)
        }
        // A parent may have started us with them blocked (a test runner's threads block SIGTERM,
        // and the mask is inherited): unblocked, or a signal would never end the run.
        sigprocmask(SIG_UNBLOCK, &unblock, nil)
    }
}
