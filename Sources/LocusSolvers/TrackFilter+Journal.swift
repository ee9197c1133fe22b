import LocusCore

/// One range an offline pass handed a filter, and what the filter made of it (`TrackFilter.journal`).
///
/// Why a journal: the engine hands a tag's filter each epoch's ranges in one call, and while the track is
/// young that call judges the round as a whole (`TrackFilter.updateRound`: a start its round gates is
/// taken from the whole round instead; the next round, if any of it is gated, again without what the
/// robust solve rejects). The offline smoother must see the ranges the live track kept and the starts it
/// made, so it hands its own filter the same rounds — and learns from the journal which ranges each call
/// kept, and where a track started, since a judged round keeps only one of the ways it tried.
struct TrackJournalEntry: Sendable {
    /// What the filter made of the range.
    enum Kind: Sendable {
        /// An EKF update.
        case accepted
        /// The track (re-)started here, at this state (the round's start, or a whole round's).
        case started(KalmanState)
        /// Gated, buffered or unusable while a track is held.
        case refused
    }

    /// The range's time, seconds.
    var timeSeconds: Double
    /// The range's locator.
    var address: LocatorAddress
    /// What became of it.
    var kind: Kind
    /// The filter's IMM model probabilities μ right after it ((¼, ¼, ¼, ¼) without models).
    var modeProbabilities: SIMD4<Double>
}

extension TrackFilter {
    /// Starts (or empties) the journal: from now on every range taken is written to it, through the
    /// per-range path (a round's accepted ranges are not batched into one kernel call: the same state,
    /// bit for bit, at the cost of a call each). For offline passes only.
    mutating func startJournal() {
        let box = uniqueExtras()
        if box.journal == nil { box.journal = [] } else { box.journal!.removeAll(keepingCapacity: true) }
    }

    /// Writes a range's outcome to the journal, if one is kept: nothing while there is no track (a range
    /// buffered before the start); `started` when it (re-)started the track.
    mutating func record(rangeAtSeconds t: Double, address: LocatorAddress, outcome: TrackUpdateOutcome, started: Bool) {
        guard journal != nil, isTracking else { return }
        let kind: TrackJournalEntry.Kind
        if started, let s = state {
            kind = .started(s)
        } else if outcome == .accepted {
            kind = .accepted
        } else {
            kind = .refused
        }
        let entry = TrackJournalEntry(timeSeconds: t, address: address, kind: kind, modeProbabilities: modeProbabilities)
        uniqueExtras().journal?.append(entry)
    }

    /// Journals the range at t (s) to `address` — a round's last range, already journalled as taken or
    /// refused — as the start of the track that a check after the round has just (re)started
    /// (`mirrorIfReflectionFits`, `scoreUncheckedRound`): its entry, when it is the last one, is replaced
    /// by the start, so that the smoother's node builder names each range once. A no-op without a journal.
    mutating func journalRestart(atSeconds t: Double, address: LocatorAddress) {
        if let last = journal?.last, last.timeSeconds == t, last.address == address { uniqueExtras().journal?.removeLast() }
        record(rangeAtSeconds: t, address: address, outcome: .initialized, started: true)
    }
}
