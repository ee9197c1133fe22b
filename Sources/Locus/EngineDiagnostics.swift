import LocusCore

/// What the engine counted while running: skipped rows by reason, and epochs that gave no fix by
/// error code (E4001 too few ranges, E4002 degenerate geometry, …). Run-time conditions are
/// reported here, not thrown per fix.
public struct EngineDiagnostics: Sendable, Equatable {
    /// Rows that could not be used, by reason.
    public package(set) var skipped = SkipTally()
    /// Epochs formed.
    public package(set) var epochs = 0
    /// Epochs that gave no fix, by code, in code order.
    public private(set) var failedEpochs: [(code: LocusErrorCode, count: Int)] = []
    /// Rejected (outlier) ranges over all least-squares fixes.
    public package(set) var rejectedRanges = 0
    /// Epochs that gave no fix because the tag's filter had no track yet (it initialises once
    /// enough locators have been ranged).
    public package(set) var epochsBeforeTrack = 0
    /// Tags evicted: idle past `EngineConfiguration.TagLimit.idleSeconds` with nothing in flight,
    /// their state let go (0 without a tag limit).
    public package(set) var tagsEvicted = 0
    /// Range-difference (TDoA) rows offered to the engine (used or skipped).
    public package(set) var differenceRows = 0
    /// Epochs whose fix is the raw least-squares fix although tracking is on (`--filter kalman`):
    /// range-difference (TDoA) epochs on a floor solved in 3-D, where the causal filter (`SpatialTrack`)
    /// takes ranges only; and an epoch on such a floor whose least-squares fix could not seed the track
    /// (covariance not positive definite). 0 without tracking. Reported so that a summary saying
    /// "kalman" does not hide raw fixes (issue #42).
    public package(set) var unfilteredEpochs = 0
    /// Fixes released after the output had passed their time: on a live stream, a tag whose rows
    /// arrived after the clock (other tags' rows) had moved on further than `--max-lag` waits. Such
    /// a fix leaves after later ones and its zone events are judged at the judges' clock, not at its
    /// own time. 0 in a replay (its rows are in time order).
    public package(set) var lateFixes = 0

    /// Nothing counted yet.
    package init() {}

    /// Counts one epoch that failed with `code`.
    mutating func recordFailure(_ code: LocusErrorCode) {
        if let i = failedEpochs.firstIndex(where: { $0.code == code }) {
            failedEpochs[i].count += 1
        } else {
            failedEpochs.append((code, 1))
            failedEpochs.sort { $0.code < $1.code }
        }
    }

    /// Adds another engine's counts (the shards of a `ShardedEngine`).
    mutating func merge(_ other: EngineDiagnostics) {
        skipped.merge(other.skipped)
        epochs += other.epochs
        rejectedRanges += other.rejectedRanges
        epochsBeforeTrack += other.epochsBeforeTrack
        tagsEvicted += other.tagsEvicted
        differenceRows += other.differenceRows
        unfilteredEpochs += other.unfilteredEpochs
        lateFixes += other.lateFixes
        for (code, count) in other.failedEpochs {
            if let i = failedEpochs.firstIndex(where: { $0.code == code }) {
                failedEpochs[i].count += count
            } else {
                failedEpochs.append((code, count))
                failedEpochs.sort { $0.code < $1.code }
            }
        }
    }

    /// Equal counts (failed epochs compared by code and count, in order).
    public static func == (a: EngineDiagnostics, b: EngineDiagnostics) -> Bool {
        a.skipped == b.skipped && a.epochs == b.epochs && a.rejectedRanges == b.rejectedRanges && a.epochsBeforeTrack == b.epochsBeforeTrack
            && a.tagsEvicted == b.tagsEvicted && a.differenceRows == b.differenceRows
            && a.unfilteredEpochs == b.unfilteredEpochs
            && a.failedEpochs.map(\.code) == b.failedEpochs.map(\.code) && a.failedEpochs.map(\.count) == b.failedEpochs.map(\.count)
    }
}
