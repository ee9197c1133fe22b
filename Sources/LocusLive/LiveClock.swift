#if canImport(Glibc)
import Glibc
#endif

/// The clocks of the live edges: `CLOCK_MONOTONIC` for arrivals, deadlines and pacing (wall-clock
/// changes do not move them), `CLOCK_REALTIME` for a JSON row that names no time.
package enum LiveClock {
    /// `CLOCK_MONOTONIC`, seconds.
    package static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    /// `CLOCK_REALTIME`, seconds since the Unix epoch: a JSON row's time when it names none.
    static func realtimeSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }
}
