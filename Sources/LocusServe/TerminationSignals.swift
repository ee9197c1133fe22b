#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// SIGINT and SIGTERM as a request to drain (`locus stream`): the handler only sets a flag, which
/// the stream's loop reads between waits (every wait is bounded, and a signal cuts `poll` short).
enum TerminationSignals {
    /// Set by the handler; read by `requested`.
    private static let flag = Atomic<Int32>(0)

    /// Installs the handler for SIGINT and SIGTERM (without SA_RESTART: a blocked `poll` or `read`
    /// returns EINTR at once) and unblocks both.
    static func install() {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { signal in TerminationSignals.flag.store(signal, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        // A parent may have started us with them blocked (a test runner's threads block SIGTERM, and
        // the mask is inherited): unblock them, or a stream could never be told to drain.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        sigprocmask(SIG_UNBLOCK, &unblock, nil)
    }

    /// The signal received (SIGINT or SIGTERM), or nil.
    static var requested: Int32? {
        let s = flag.load(ordering: .relaxed)
        return s == 0 ? nil : s
    }
}
