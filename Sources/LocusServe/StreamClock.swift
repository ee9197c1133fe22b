/// `locus stream`'s one clock, the same for every input (standard input, UDP, MQTT), and the per-row
/// check that keeps a row from the future off it (issue #41 items 1 and 3).
///
/// Arrival. Every batch — a standard-input read, a datagram, a set of MQTT messages — is stamped with
/// its CLOCK_MONOTONIC arrival `a` once, by `LiveStream`, before any of its rows is looked at. A row
/// whose time `t` is the latest accepted data time so far records (t, a). The stream's clock at a
/// monotonic instant `w` is then
///
///     clock(w) = t_latest + (w − a_latest)        (seconds; −∞ before the first accepted row)
///
/// — the data's own time, run on by the wall time since the row that carried it arrived. It never
/// counts from process start (an idle stream's first event is not late by the idle time), and a
/// batch of older rows (another tag lagging) does not pull it back.
///
/// Future rows. A row with t > clock(a) + horizon (`--future-horizon`, seconds; 0 = off) is refused
/// as `future_time` before it reaches the engine and leaves the clock untouched: one sender's
/// `t: 1e9` can no longer move every tag's zone deadlines. A row without `t` is stamped with the
/// Unix receive time (~1.7·10⁹ s); on a stream of relative times it is refused by the same rule, and
/// it is checked with `missingTimeHorizon` even where the horizon is off (a receive time is never a
/// recording's time, so no replayed pipe can need it). The first accepted row sets the clock: there
/// is nothing to check it against.
///
/// CSV rows are checked by `TraceRowParser` with this clock's limit (`futureLimitSeconds`), before
/// the row's tag clock admits it: a forged row 10 s ahead for an honest tag must not make that tag's
/// later rows read as `time_backwards`. JSON rows are checked here (`isFuture`), before the engine's
/// tag clock sees them. Same rule, same numbers.
///
/// Not a Sendable concern: owned by the stream's one thread. No allocation.
struct StreamClock {
    /// How far ahead of the clock a row may be, seconds (0: not checked).
    let horizonSeconds: Double
    /// The horizon for rows stamped with the receive time (no `t`): `horizonSeconds`, or the live
    /// default when the horizon is off.
    let missingTimeHorizonSeconds: Double
    /// The live default horizon, seconds: a few seconds covers a sender's clock drift and network
    /// delay, while a real forward jump of a recording (a tag back after a pause) is small beside a
    /// hostile 10⁹.
    static let defaultHorizonSeconds = 5.0

    /// The latest accepted data time, seconds.
    private(set) var latestDataSeconds = -Double.infinity
    /// When the row that carried `latestDataSeconds` arrived (CLOCK_MONOTONIC seconds).
    private(set) var latestArrivalSeconds = 0.0
    /// The current batch's arrival (CLOCK_MONOTONIC seconds).
    private(set) var batchArrivalSeconds = 0.0

    init(horizonSeconds: Double) {
        self.horizonSeconds = horizonSeconds
        missingTimeHorizonSeconds = horizonSeconds > 0 ? horizonSeconds : Self.defaultHorizonSeconds
    }

    /// A batch arrived at `monotonicSeconds`: its rows are checked against the clock at that instant.
    mutating func beginBatch(arrivedAt monotonicSeconds: Double) { batchArrivalSeconds = monotonicSeconds }

    /// The clock at `monotonicSeconds` (−∞ before the first accepted row).
    func seconds(at monotonicSeconds: Double) -> Double {
        latestDataSeconds + (monotonicSeconds - latestArrivalSeconds)
    }

    /// True when a row at `t` of the current batch is too far ahead (`hasTime`: the row named its
    /// time; false: `t` is the receive time). Checked before the row is fed; a refused row leaves the
    /// clock as it was.
    @inline(__always)
    func isFuture(_ t: Double, hasTime: Bool) -> Bool {
        t > limit(horizonSeconds: hasTime ? horizonSeconds : missingTimeHorizonSeconds)
    }

    /// The latest time a row of the current batch may have before it is from the future: clock +
    /// horizon at the batch's arrival; +∞ when the horizon is off or no row was accepted yet. For
    /// `TraceRowParser`'s own check (its `futureLimitSeconds`), which applies this rule to CSV rows
    /// before their tag's clock sees them.
    var futureLimitSeconds: Double { limit(horizonSeconds: horizonSeconds) }

    /// Clock + `horizon` at the current batch's arrival; +∞ when the horizon is off or no row was
    /// accepted yet.
    @inline(__always)
    private func limit(horizonSeconds horizon: Double) -> Double {
        guard horizon > 0, latestDataSeconds.isFinite else { return .infinity }
        return seconds(at: batchArrivalSeconds) + horizon
    }

    /// A row at `t` of the current batch was fed to the engine.
    @inline(__always)
    mutating func accept(_ t: Double) {
        if t > latestDataSeconds, t.isFinite {
            latestDataSeconds = t
            latestArrivalSeconds = batchArrivalSeconds
        }
    }
}
