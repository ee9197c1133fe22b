import LocusCore
import LocusSolvers

// Bounded state (issue #41 item 4): a live input trusts no sender, and every new tag id costs the
// engine its per-tag state for good — unless the number of live tags is bounded and idle tags are
// let go. Opt-in (`EngineConfiguration.tagLimit`): unbounded, nothing here runs, and replay, the C
// ABI and every golden keep their bytes.

/// The bound on live tags and the queue of tags to look at for eviction.
///
/// **Limit.** A row of a new tag while `maximumTags` are live is skipped as `tag_limit`; a live tag
/// is never displaced, so a flood of new ids cannot push out the honest tags (it can only be
/// refused until its own ids fall idle).
///
/// **Idle queue.** One entry per live tag, keyed by the data time after which the tag may be
/// evicted: when it registers, the clock then (a tag none of whose rows was admitted holds nothing
/// and goes at the next advance of the clock), later its latest admitted time + `idleSeconds`.
/// Entries are only looked at once the clock has passed the earliest key (one compare per row,
/// `nextCheckSeconds`); an entry whose tag has had rows since is pushed again at its new key. So
/// the work is amortised O(log n) per tag per idle period — never a scan per row, and never per row
/// of a tag at all (the queue is not touched by a tag's rows, only by its idle time running out).
/// A `RunQueue`: keys mostly arrive in time order.
///
/// **Eviction.** A tag past its idle time goes only when nothing of it is in flight: no open epoch,
/// no fix parked in the reorder buffer (the earliest parked fix is later than the tag's latest
/// row), and no zone state that could still matter (`FloorJudges.forget(tag:)`: a zone it is inside
/// exits first, `outPeriod` after its last detection, as for any tag that falls silent). Otherwise
/// it is looked at again one output period (1/rate) later. Then its id leaves the registry, its
/// index goes to the registry's free list, and every per-tag structure at that index is reset (epoch
/// row with a new generation — the schedule's stale entries are dropped by it —, round model,
/// admitted time, clock, offset, filter, zone state), so the next new id starts there as from
/// nothing. The arrays never grow beyond the most tags live at once: memory stays flat.
///
/// Everything is decided by the data's clock at row (or `advance`) boundaries, so which tags are
/// evicted, and when, is the same whatever the batch size. A tag evicted and back later starts
/// afresh: its filter and offset estimate are rebuilt; its first row is admitted unless it is older
/// than the clock less the idle time (`refusal(_:atSeconds:after:)`: from before the eviction, so its
/// fix would go back in time).
struct TagEviction: Sendable {
    let limit: EngineConfiguration.TagLimit
    /// How long a tag that is idle but still in flight waits before it is looked at again, seconds.
    let retrySeconds: Double
    /// Live tags by the data time after which each may be evicted.
    var queue = RunQueue<Entry>()
    /// The earliest key in `queue` (+∞ when empty): the clock passing it is the one compare per row.
    var nextCheckSeconds = Double.infinity

    struct Entry: Sendable, Comparable {
        var key: Double
        var tag: Int32
        static func < (a: Entry, b: Entry) -> Bool { a.key < b.key || (a.key == b.key && a.tag < b.tag) }
    }

    init(limit: EngineConfiguration.TagLimit, rateHertz: Double) {
        self.limit = limit
        retrySeconds = 1 / rateHertz
    }

    mutating func push(_ tag: Int, key: Double) {
        queue.push(Entry(key: key, tag: Int32(truncatingIfNeeded: tag)))
        if key < nextCheckSeconds { nextCheckSeconds = key }
    }
}

extension PositioningEngine {
    /// Checks a tag limit before the engine is made.
    /// - Throws: `E1003` for a limit below 1 or an idle time that is not a positive finite number.
    static func validate(_ limit: EngineConfiguration.TagLimit) throws(LocusError) {
        guard limit.maximumTags >= 1, limit.maximumTags < Int(Int32.max) else {
            throw LocusError(.invalidArgument, "the tag limit must be at least 1, not \(limit.maximumTags)")
        }
        guard limit.idleSeconds > 0, limit.idleSeconds.isFinite else {
            throw LocusError(.invalidArgument, "the tag idle time must be a positive number of seconds, not \(limit.idleSeconds)")
        }
    }

    /// The index of `id` for a row or a fix of it, with the tag limit applied: nil (the row is
    /// skipped as `tag_limit`, counted here) when `id` is new and the limit is reached. Tags idle
    /// past their time are evicted first (as the clock stands before this row), so a slot they
    /// free is there for this row.
    @inline(__always)
    mutating func admittedTagIndex(for id: TagID, line: Int) -> TagIndex? {
        guard eviction != nil else { return tagIndex(for: id) }
        return boundedTagIndex(for: id, line: line)
    }

    @inline(never)
    private mutating func boundedTagIndex(for id: TagID, line: Int) -> TagIndex? {
        if clockSeconds > eviction!.nextCheckSeconds { evictIdleTags() }
        if registry.liveCount >= eviction!.limit.maximumTags, registry.index(of: id) == nil {
            diagnostics.skipped.record(.tagLimit, line: line)
            return nil
        }
        let (index, isNew) = registry.register(id)
        if isNew {
            if index.rawValue == tags.count { addTag(id) }  // else a recycled index, reset at eviction
            eviction!.push(index.rawValue, key: clockSeconds)
        }
        return index
    }

    /// Evicts the tags idle past their time with nothing in flight (see `TagEviction`), as the
    /// clock stands; the others are queued again at the time to look at them next.
    @inline(never)
    mutating func evictIdleTags() {
        guard var ev = eviction else { return }
        eviction = nil  // (taken out while it changes: no copy of its queue on write)
        let idle = ev.limit.idleSeconds
        while let top = ev.queue.top, top.key < clockSeconds {
            ev.queue.pop()
            let tag = Int(top.tag)
            let latest = schedule.epochs.latestAdmittedSeconds(tag)
            if latest + idle >= clockSeconds {
                ev.queue.push(TagEviction.Entry(key: latest + idle, tag: top.tag))  // rows came since
                continue
            }
            let parkedEarlier = reorder.earliestSeconds.map { $0 <= latest } ?? false
            if schedule.epochs.isOpen(tag) || parkedEarlier || !judges.forget(tag: TagIndex(tag)) {
                ev.queue.push(TagEviction.Entry(key: clockSeconds + ev.retrySeconds, tag: top.tag))
                continue
            }
            evict(tag)
        }
        ev.nextCheckSeconds = ev.queue.top?.key ?? .infinity
        eviction = ev
    }

    /// Lets tag `tag` go (its zone state already forgotten): the id leaves the registry, the index
    /// goes to the free list, and every per-tag structure at that index is reset.
    private mutating func evict(_ tag: Int) {
        registry.unregister(TagIndex(tag))
        schedule.reset(tag, ending: nil)  // no epoch is open: only a new generation
        schedule.forgetRounds(tag)
        schedule.admit(tag, atSeconds: -.infinity)
        tags[tag] = TagState(floorIndex: defaultFloor.rawValue)
        offsets[tag] = nil
        clearLocatorBiases(tag)
        differenceEpochs.clear(tag)
        nextToOpen[tag] = -1
        if isTracking {
            // A placeholder (as `addTag`'s): `startFilter` builds the next tag's on its first range.
            let floor = floors[defaultFloor.rawValue].floor
            filters[tag] = TrackFilter(shared: sharedFilterConfiguration, tag: TagID(""), floor: floor.id,
                                       tagHeightMeters: floor.tagHeightMeters)
        }
        if tracksSpatialFloors { spatialTracks[tag] = SpatialTrack(shared: sharedFilterConfiguration) }
        diagnostics.tagsEvicted += 1
    }

    /// Evicts the tags idle past their time, as `ingest(_:)` does first for each row: for a caller
    /// that keeps indices of its own (`locus stream`'s `LiveRouting`) and routes most rows without an
    /// id — it calls this before each row, then checks its index against `tagsEvicted`.
    @inline(__always)
    mutating func evictIdleTagsIfDue() {
        // (The field read in place: binding `eviction` would copy it, retaining its queue, per row.)
        if clockSeconds > eviction?.nextCheckSeconds ?? .infinity { evictIdleTags() }
    }

    /// The number of tags holding state now (registered, not evicted).
    var liveTagCount: Int { registry.liveCount }

    /// Why a row of tag `tag` at `t` is refused, for a row its clock does not admit directly (the
    /// slow path of every row's admission; nil: admitted, the clock updated): the tag's clock
    /// (`TagClock`: `time_backwards`, `clock_jump`) — and, with a tag limit, a fresh tag's first row
    /// (a new id, or an id back after its eviction: no admitted time, `latest` −∞) earlier than the
    /// engine's clock by more than the idle time, skipped as `time_backwards`.
    ///
    /// Why: an evicted tag keeps nothing, not even its latest time, so its clock would admit a row
    /// from before its eviction (a late or replayed datagram) and its next fix would go back before
    /// fixes and zone events already out (fuzzing found it, docs/robustness.md). Every row an evicted
    /// tag had is older than the eviction's clock less the idle time, so the engine's clock less the
    /// idle time is a bound for all of them at once, kept without any per-id memory; and an honest
    /// new tag's rows are never that far behind the stream (such a tag would be idle at once).
    @inline(never)
    mutating func refusal(_ tag: Int, atSeconds t: Double, after latest: Double) -> SkipReason? {
        if latest == -.infinity, let idle = eviction?.limit.idleSeconds, t < clockSeconds - idle { return .timeBackwards }
        return tags[tag].clock.admit(t, after: latest)
    }
}
