import LocusCore

/// One `ZoneJudge` per floor of a site on one clock (SPEC §4.6): a fix is judged on its floor and
/// moves the other floors' clocks to its time; released events come out merged across floors in
/// §4.7 order. For every consumer of a position stream: the engine (`PositioningEngine`), `locus
/// zones`, the reference events of a replay judged against truth.
///
/// Judging and moving the clocks leave the released events in per-floor scratch arrays until
/// `flush(into:)`, so that a caller can judge a batch of fixes and merge once (with one floor,
/// `flush(into:)` appends without merging). Steady state allocates nothing per fix beyond the growth
/// of the scratch and the caller's arrays.
package struct FloorJudges: Sendable {
    package private(set) var judges: [ZoneJudge]
    /// The released events, by floor, waiting for `flush(into:)`.
    private var scratch: [[ZoneEvent]]

    /// Judges for `floors` with `options`.
    /// - Throws: `ZoneJudge.init`'s errors for an invalid zone.
    package init(floors: [Floor], options: ZoneJudgeOptions) throws(LocusError) {
        var judges: [ZoneJudge] = []
        for floor in floors { judges.append(try ZoneJudge(floor: floor, options: options)) }
        self.judges = judges
        scratch = Array(repeating: [], count: judges.count)
    }

    /// Judges `fix` on floor `floor` (nil: no floor's — only the clocks move) and appends what
    /// becomes final to `events`.
    /// - Throws: `ZoneJudge.judge`'s errors (see `judge(_:tag:floor:)`).
    package mutating func judge(_ fix: ZoneFix, tag: TagIndex, floor: Int?, into events: inout [ZoneEvent]) throws(LocusError) {
        try judge(fix, tag: tag, floor: floor)
        flush(into: &events)
    }

    /// Judges `fix` on floor `floor` (nil: no floor's — only the clocks move); what becomes final
    /// waits for `flush(into:)`.
    /// - Throws: the first of the judges' errors (`ZoneJudge.judge`, `ZoneJudge.advance`), once
    ///   every other floor has been judged or moved all the same.
    package mutating func judge(_ fix: ZoneFix, tag: TagIndex, floor: Int?) throws(LocusError) {
        var failure: LocusError? = nil
        for f in judges.indices {
            do throws(LocusError) {
                if f == floor {
                    try judges[f].judge(fix, tag: tag, into: &scratch[f])
                } else {
                    try judges[f].advance(toSeconds: fix.timeSeconds, into: &scratch[f])
                }
            } catch {
                if failure == nil { failure = error }
            }
        }
        if let failure { throw failure }
    }

    /// Moves every floor's clock to `t` (if later), as judging a fix at `t` on no floor would; what
    /// becomes final waits for `flush(into:)`.
    /// - Throws: the first of the judges' errors (`ZoneJudge.advance`), once every other floor has
    ///   moved all the same.
    package mutating func advance(toSeconds t: Double) throws(LocusError) {
        var failure: LocusError? = nil
        for f in judges.indices {
            do throws(LocusError) {
                try judges[f].advance(toSeconds: t, into: &scratch[f])
            } catch {
                if failure == nil { failure = error }
            }
        }
        if let failure { throw failure }
    }

    /// Ends judgement on every floor (no synthetic exit, SPEC §4.6) and appends the rest.
    package mutating func finish(into events: inout [ZoneEvent]) {
        finish(clockSeconds: -.infinity)
        flush(into: &events)
    }

    /// Ends judgement on every floor (no synthetic exit, SPEC §4.6), each floor's clock first moved
    /// to `clockSeconds` when that is finite (the stream's clock: its latest time seen); what is
    /// released waits for `flush(into:)`.
    package mutating func finish(clockSeconds: Double) {
        for f in judges.indices {
            if clockSeconds.isFinite { try? judges[f].advance(toSeconds: clockSeconds, into: &scratch[f]) }
            judges[f].finish(into: &scratch[f])
        }
    }

    /// Moves the released events to `events`, merged across floors in §4.7 order (with one floor,
    /// appended as they are).
    package mutating func flush(into events: inout [ZoneEvent]) {
        if scratch.count == 1 {
            // Most fixes raise no event.
            guard !scratch[0].isEmpty else { return }
            events.append(contentsOf: scratch[0])
            scratch[0].removeAll(keepingCapacity: true)
            return
        }
        guard scratch.contains(where: { !$0.isEmpty }) else { return }
        events.append(contentsOf: ZoneJudge.merge(scratch))
        for f in scratch.indices { scratch[f].removeAll(keepingCapacity: true) }
    }

    /// No event released from now on is earlier than this, seconds, as far as the judges know: the
    /// earliest clock of a floor that holds events or pairs (their exits and dwells come at or after
    /// it); +∞ when none does. Events of fixes still to come are another matter (the caller's).
    package var eventFrontier: Double {
        var frontier = Double.infinity
        for j in judges where j.activePairCount > 0 || j.heldEventCount > 0 {
            frontier = min(frontier, j.clockSeconds ?? -.infinity)
        }
        return frontier
    }

    /// Forgets tag `tag` on every floor (a bounded engine evicts it) when no floor's judge holds
    /// state of it that could still matter (`ZoneJudge.holdsState(of:)`: an open zone waits for its
    /// exit, per `outPeriod`); returns whether it did.
    package mutating func forget(tag: TagIndex) -> Bool {
        guard !judges.contains(where: { $0.holdsState(of: tag) }) else { return false }
        for f in judges.indices { judges[f].forget(tag: tag) }
        return true
    }

    /// The configuration warnings of every floor's zones (SPEC §4.2), in floor order.
    package var configurationWarnings: [ZoneConfigurationWarning] { judges.flatMap(\.configurationWarnings) }

    /// Prefetches tag `tag`'s entry in floor `floor`'s judge (`ZoneJudge.prefetch(tag:)`).
    @inline(__always)
    package mutating func prefetch(tag: Int, floor: Int) {
        judges[floor].prefetch(tag: tag)
    }

    /// Prefetches the pair states of tag `tag` in floor `floor`'s judge (`ZoneJudge.prefetchPairs(of:)`).
    @inline(__always)
    package mutating func prefetchPairs(of tag: Int, floor: Int) {
        judges[floor].prefetchPairs(of: tag)
    }
}
