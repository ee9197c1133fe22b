import LocusCore

// A confirmed track's round that refused ranges and kept too few to check the track (docs/tracking.md,
// "A round that cannot check the track").
extension TrackFilter {
    /// A round that keeps at most this many ranges checks nothing: a planar track has two unknowns, and
    /// two ranges fit every position on their circles' intersection — the track slides along it.
    static let uncheckedRoundMostAccepted = 2

    /// What the unchecked-round rule needs from before a round: the gate's score, the track's starts and
    /// the epoch's accepted ranges.
    struct RoundMark: Sendable {
        var score: Int
        var starts: Int
        var accepted: Int
    }

    /// The mark before a round (`scoreUncheckedRound`).
    var roundMark: RoundMark { RoundMark(score: rejectionScore, starts: initializationCount, accepted: epoch.rangesUsed) }

    /// After a confirmed track's round that refused `gated` ranges (`mark` taken before it): when the
    /// round kept at most `uncheckedRoundMostAccepted` of its ranges (a round as the engine hands it
    /// over — an epoch, or its part when a locator came twice —, which the smoother's pass hands its
    /// filter alike; not the epoch's running count, which that pass never closes), its accepted ones do not count
    /// against the gate's score (score = the mark's + `gated`, not + `gated` − accepted), and at
    /// `gateOpenScore` the track is re-seeded from its buffer (the latest range of each locator, the
    /// robust solve of `initializeFromBuffer`), journalled as a start at the round's last range
    /// (`lastSeconds`, `lastAddress`).
    ///
    /// Why: the per-range score (+1 refused, −1 accepted) never opens the gate of a track that refuses
    /// two ranges of four every round and accepts the other two — and those two fit it wherever it is on
    /// their intersection. On a 4-locator room whose locators read 0.42 / −0.05 / 0.64 / 0.12 m long
    /// (Bielefeld's static-4hnm2 pattern, walks), a track ran 4.8 m off that way for 5 s, refusing the two
    /// right ranges; with dropouts (two ranges left) the same. Rounds that keep three or more are not
    /// touched: the rule changes nothing on floors with ranges to spare. Nothing allocated.
    mutating func scoreUncheckedRound(since mark: RoundMark, gated: Int, lastSeconds t: Double, lastAddress: LocatorAddress) {
        guard configuration.gateCountsUncheckedRounds, gated > 0, isTracking, initializationCount == mark.starts,
              epoch.rangesUsed - mark.accepted <= Self.uncheckedRoundMostAccepted else { return }
        rejectionScore = mark.score + gated
        guard rejectionScore >= configuration.gateOpenScore, initializeFromBuffer(at: t) == .initialized else { return }
        journalRestart(atSeconds: t, address: lastAddress)
    }
}
