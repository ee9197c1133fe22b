import LocusCore
import LocusNumerics
import LocusSolvers

// Prefetching the next tag's state. Ranging rounds repeat in the same order (a TDMA schedule, a
// simulated or recorded site alike), so the tag whose round opened after tag T's last time is most
// likely the one to open after T's this time. When T's round opens, that tag's state — its epoch
// row, its per-row state, its filter (≈ 1 KB), its offset estimator and its zone judge entry — is
// asked for from memory (`CachePrefetch`): it arrives while T's ranges are processed (a round is
// ≈ 8 rows, over a microsecond) instead of one miss after another when that tag's first range
// comes. Below `CachePrefetch.minimumTags` (the state fits in the caches) only the order is
// learnt: two stores per round. A wrong guess costs only memory traffic; outputs do not depend on
// it (a test compares each tag's fixes with an engine that sees that tag alone).
extension PositioningEngine {
    /// `tag`'s round opened (its epoch took its first range, on `floor`): remember the order of
    /// openings and prefetch the state of the tag that followed `tag` last time.
    @inline(__always)
    mutating func roundOpened(_ tag: Int, floor: Int) {
        if lastOpened >= 0 { nextToOpen[lastOpened] = Int32(truncatingIfNeeded: tag) }
        lastOpened = tag
        guard tags.count >= CachePrefetch.minimumTags else { return }
        let next = Int(nextToOpen[tag])
        if next >= 0 { prefetchState(of: next, floor: floor) }
        // This tag's zone entry is cached by now (prefetched when the tag before it opened): the
        // pair states it names can come while the round's ranges are processed.
        judges.prefetchPairs(of: tag, floor: floor)
    }

    /// Prefetches what tag `tag`'s next round touches (its floor guessed: `floor`).
    @inline(__always)
    private mutating func prefetchState(of tag: Int, floor: Int) {
        schedule.prefetch(tag)
        CachePrefetch.element(tag, of: tags)
        CachePrefetch.element(tag, of: nextToOpen)
        if isTight { CachePrefetch.element(tag, of: filters) }
        if floorEstimatesOffset[floor] { CachePrefetch.element(tag, of: offsets) }
        judges.prefetch(tag: tag, floor: floor)
    }
}
