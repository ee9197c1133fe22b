import LocusCore
import LocusNumerics

/// The zone judgement engine of SPEC §4 for one floor: fixes in, `enter`/`dwell`/`exit` events out,
/// in the final order of §4.7, whatever the batch sizes or timer ticks.
///
/// **State per (tag, zone)** — outside (no state kept), counting (count c, previous detection
/// t₋), inside (t_enter, t_last, next dwell index k). Only counting and inside pairs are stored,
/// in a slab of slots listed per tag; inside pairs have one deadline in a min-heap.
///
/// **Clock.** c = max(all fix times, all `advance(toSeconds:)` targets). A fix whose time is before
/// the clock (another tag already reported later) is judged at the clock's time: t ← max(t, c).
/// This keeps every event time ≥ every time already released, so the output stays sorted.
///
/// **Per fix at time t** (after raising it to the clock):
/// 1. advance the clock to t: every inside pair emits `dwell` at t_enter + k·T_dwell for each such
///    time ≤ c and < t_last + T_out, and exits at t_last + T_out once that is < c;
/// 2. detection: the zones whose polygon lies within `inDist` of p (grid lookup), keeping only those
///    of the highest priority;
/// 3. entry counting per detected zone: c ← c + 1 if t − t₋ ≤ `inCountInterval`, else 1; enter when
///    c ≥ `inCount` (never when `inCount` = 0); inside: t_last ← t;
/// 4. release.
///
/// **Release rule.** Decided events wait in a sorted buffer. Events with time < c are final (any
/// later event has time ≥ c) and are appended to the caller's array in §4.7 order; events at
/// time = c wait until the clock moves past c (an exit at c or an enter at c could still precede
/// them). `finish()` releases those at c too, and ends the stream (no synthetic exit).
///
/// Per fix: O(candidates in the fix's grid cell × polygon vertices + active pairs of the tag +
/// log(heap)), independent of the number of zones; no allocation in steady state.
package struct ZoneJudge: Sendable {
    /// A zone with its validated polygon.
    struct CompiledZone: Sendable {
        var zone: Zone
        var polygon: ZonePolygon
    }

    /// A decided event waiting for release. `isInstantExit`: an exit at the very time of its own
    /// enter (`outPeriod` 0, or a reload at the entry time), which sorts right after that enter.
    struct HeldEvent: Sendable {
        var event: ZoneEvent
        var isInstantExit: Bool
    }

    /// The release order: SPEC §4.7 (time; exit < enter < dwell; tag; zone), except that an exit at
    /// the same time as its own enter ranks with the enters, right after that enter — otherwise a
    /// visit of zero length would read "exit, enter" and leave a consumer believing the tag inside.
    static func releasePrecedes(_ a: ZoneEvent, isInstantExit aInstant: Bool,
                                        _ b: ZoneEvent, isInstantExit bInstant: Bool) -> Bool {
        if a.timeSeconds != b.timeSeconds { return a.timeSeconds < b.timeSeconds }
        func rank(_ e: ZoneEvent, _ instant: Bool) -> Int {
            switch e.kind { case .exit: instant ? 1 : 0; case .enter: 1; case .dwell: 2 }
        }
        let ra = rank(a, aInstant), rb = rank(b, bInstant)
        if ra != rb { return ra < rb }
        if a.tag != b.tag { return a.tag < b.tag }
        if a.zone != b.zone { return a.zone < b.zone }
        if a.kind != b.kind { return a.kind == .enter }
        return a.floor < b.floor
    }

    /// A tag (by `TagIndex`): its id (empty until the judge first sees it) and the slots of its
    /// counting or inside pairs.
    struct TagState: Sendable {
        var id: TagID
        var activeSlots = PairSlotList()
    }

    /// The floor whose zones are judged; carried in every event.
    let floor: FloorID
    private var clock = -Double.infinity
    /// True once `finish(into:)` has been called.
    private(set) var isFinished = false
    private var zones: [CompiledZone]
    private var grid: ZoneGrid
    /// Rules per zone index (read by the state machine for detected and active zones only).
    private var zoneRules: [ZoneRules]
    private var edgeTable: [ZonePolygon.Edge]
    private var tags: [TagState] = []
    private var slots: [PairState] = []
    private var freeSlots: [Int32] = []
    private var heap = MinHeap<ZoneDeadline>()
    private var pending: [HeldEvent] = []

    /// What the judge holds, by kind (for tests of bounded state): tags seen, (tag, zone) pair slots in
    /// use, deadlines queued, events held back.
    package var retainedCounts: (tags: Int, pairs: Int, deadlines: Int, heldEvents: Int) {
        (tags.count, slots.count - freeSlots.count, heap.count, pending.count)
    }
    /// Scratch: the zones detected by the current fix are `detected[0..<detectedCount]`.
    private var detected: [Int32] = []
    private var detectedCount = 0

    /// Settings for the configuration warnings (judgement does not depend on them).
    let options: ZoneJudgeOptions
    /// The floor as configured, with the zones of the latest reload (for `configurationWarnings`).
    private var floorConfiguration: Floor

    /// A judge for `floor`'s zones.
    /// - Throws: `E3105`/`E3106`/`E3108`/`E3109`/`E3110` for an invalid zone (see `compile`),
    ///   `E3103` for a duplicate zone id.
    package init(floor: Floor, options: ZoneJudgeOptions = .standard) throws(LocusError) {
        self.floor = floor.id
        self.options = options
        self.floorConfiguration = floor
        let compiled = Self.spatiallyOrdered(try Self.compile(floor.zones))
        self.zones = compiled
        (self.zoneRules, self.edgeTable, self.grid) = Self.makeTables(compiled)
        pending.reserveCapacity(64)
        detected = [Int32](repeating: 0, count: 16)
    }

    /// The configuration warnings for the current zones (see `warnings(for:options:)`).
    var configurationWarnings: [ZoneConfigurationWarning] {
        Self.warnings(for: floorConfiguration, options: options)
    }

    /// The clock c (latest fix time or advance target), seconds; nil before any input.
    var clockSeconds: Double? { clock == -Double.infinity ? nil : clock }
    /// Number of zones judged.
    var zoneCount: Int { zones.count }
    /// Number of (tag, zone) pairs currently counting or inside.
    var activePairCount: Int { slots.count - freeSlots.count }
    /// Events decided but not yet released (their time is ≥ the clock).
    var heldEventCount: Int { pending.count }

    /// The pairs of `tag` currently inside, by zone id (for inspection and tests).
    /// O(tags) (a scan of the ids; the judge keeps tags by `TagIndex`).
    func zonesInside(for tag: TagID) -> [ZoneID] {
        guard let t = tags.firstIndex(where: { $0.id == tag && !$0.id.rawValue.isEmpty }) else { return [] }
        return tags[t].activeSlots.filter { slots[Int($0)].isInside }
            .map { zones[Int(slots[Int($0)].zone)].zone.id }.sorted()
    }

    // MARK: input

    /// Prefetches tag `tag`'s entry (software prefetch: a fix of that tag is coming). `mutating`
    /// though it changes nothing: called on an array element, a non-mutating method copied the
    /// whole judge out (retaining every array in it) and back.
    @inline(__always)
    mutating func prefetch(tag: Int) {
        CachePrefetch.element(tag, of: tags)
    }

    /// Prefetches the states of tag `tag`'s counting and inside pairs (the slots its entry names:
    /// read from the entry, so worth calling once the entry is cached — see `prefetch(tag:)`).
    @inline(__always)
    mutating func prefetchPairs(of tag: Int) {
        guard tag < tags.count else { return }
        tags.withUnsafeBufferPointer { t in
            // Through the pointer: the list is read in place (a copy of it retained its array).
            let entry = t.baseAddress! + tag
            let n = min(entry.pointee.activeSlots.count, PairSlotList.inlineCapacity)
            guard n > 0 else { return }
            for k in 0..<n { CachePrefetch.element(Int(entry.pointee.activeSlots[k]), of: slots) }
        }
    }

    /// Judges one fix of tag `tag` (the engine's `TagIndex` of `fix.tag`: the judge keeps its
    /// per-tag state by that index, so it hashes nothing) and appends the events that became final
    /// to `events`.
    /// - Throws: `E1002` after `finish`; `E1003` for a non-finite time or position.
    package mutating func judge(_ fix: ZoneFix, tag: TagIndex, into events: inout [ZoneEvent]) throws(LocusError) {
        guard !isFinished else { throw LocusError(.callOrder, "zone judge for floor '\(floor)' already finished") }
        guard fix.timeSeconds.isFinite, fix.point.x.isFinite, fix.point.y.isFinite else {
            throw LocusError(.invalidArgument, "fix of tag '\(TopicEncoding.shown(fix.tag.rawValue))' has a non-finite time or position")
        }
        let t = max(fix.timeSeconds, clock)
        advanceClock(to: t)
        let tag = tag.rawValue
        if tag >= tags.count { addTags(through: tag) }
        if tags[tag].id.rawValue.isEmpty { tags[tag].id = fix.tag }
        collectDetections(at: fix.point)
        for i in 0..<detectedCount { detect(tag: tag, zone: Int(detected[i]), atSeconds: t) }
        release(into: &events, includingClock: false)
    }

    /// Judges a position fix (its horizontal position) of this judge's floor, for tag `tag` (see
    /// `judge(_:tag:into:)`).
    /// - Throws: `E1003` when the fix is on another floor or not finite; `E1002` after `finish`.
    package mutating func judge(_ fix: PositionFix, tag: TagIndex, into events: inout [ZoneEvent]) throws(LocusError) {
        guard fix.floor == floor else {
            throw LocusError(.invalidArgument, "fix of tag '\(TopicEncoding.shown(fix.tag.rawValue))' is on floor '\(fix.floor)', not '\(floor)'")
        }
        try judge(ZoneFix(fix), tag: tag, into: &events)
    }

    /// Moves the clock to `timeSeconds` (a timer tick or the end of a live stream) if that is later,
    /// and appends the events that became final. A silent tag exits this way.
    /// - Throws: `E1002` after `finish`; `E1003` for a non-finite time.
    mutating func advance(toSeconds timeSeconds: Double, into events: inout [ZoneEvent]) throws(LocusError) {
        guard !isFinished else { throw LocusError(.callOrder, "zone judge for floor '\(floor)' already finished") }
        guard timeSeconds.isFinite else { throw LocusError(.invalidArgument, "advance to a non-finite time") }
        advanceClock(to: timeSeconds)
        release(into: &events, includingClock: false)
    }

    /// Ends a recorded stream: the clock stays where it is; dwell events at the clock's time that are
    /// certain (time < t_last + T_out) are decided and every held event is released. Zones still
    /// inside get no synthetic exit; a pending exit at exactly the clock's time does not happen.
    /// Further input throws `E1002`. Calling it twice releases nothing more.
    package mutating func finish(into events: inout [ZoneEvent]) {
        guard !isFinished else { return }
        for s in slots.indices where slots[s].isInUse && slots[s].isInside { emitDueDwells(slot: s) }
        release(into: &events, includingClock: true)
        isFinished = true
    }

    // MARK: hot reload

    /// Replaces the zones at time `atSeconds` (raised to the clock). Zones with the same id, polygon
    /// and rules keep their state (a new name is taken); removed or changed zones stop — those
    /// inside exit at the reload time (event only with `callInout`; a dwell at that time is dropped,
    /// as dwells come strictly before the exit; a visit entered at the reload time itself is
    /// dropped whole, enter included) — and changed or new zones start outside.
    /// - Throws: as `init(floor:)` for the new zones (nothing changes then); `E1002` after
    ///   `finish`; `E1003` for a non-finite time.
    mutating func refreshZones(_ newZones: [Zone], atSeconds: Double,
                                       into events: inout [ZoneEvent]) throws(LocusError) {
        guard !isFinished else { throw LocusError(.callOrder, "zone judge for floor '\(floor)' already finished") }
        guard atSeconds.isFinite else { throw LocusError(.invalidArgument, "zone reload at a non-finite time") }
        let compiled = Self.spatiallyOrdered(try Self.compile(newZones))
        advanceClock(to: atSeconds)
        var newIndexByID: [ZoneID: Int] = [:]
        for (j, c) in compiled.enumerated() { newIndexByID[c.zone.id] = j }
        var mapping = [Int](repeating: -1, count: zones.count)
        for (i, old) in zones.enumerated() {
            if let j = newIndexByID[old.zone.id], compiled[j].zone.polygon == old.zone.polygon,
               compiled[j].zone.rules == old.zone.rules {
                mapping[i] = j
            }
        }
        for s in slots.indices where slots[s].isInUse {
            let oldZone = Int(slots[s].zone)
            if mapping[oldZone] >= 0 { slots[s].zone = Int32(mapping[oldZone]); continue }
            if slots[s].isInside {
                let tagID = tags[Int(slots[s].tag)].id, zoneID = zones[oldZone].zone.id, at = clock
                if slots[s].enterSeconds == at {
                    // Entered at the reload time itself: the visit has zero length and its enter is
                    // still held (time = clock). Drop it rather than write enter + exit at one time,
                    // which a re-entry at the same time could not be told apart from.
                    pending.removeAll { $0.event.tag == tagID && $0.event.zone == zoneID && $0.event.timeSeconds >= at }
                } else {
                    pending.removeAll {
                        $0.event.kind == .dwell && $0.event.tag == tagID && $0.event.zone == zoneID
                            && $0.event.timeSeconds >= at
                    }
                    if zones[oldZone].zone.rules.callInout { hold(.exit, atSeconds: at, slot: s, zone: oldZone) }
                }
            }
            freeSlot(s)
        }
        zones = compiled
        floorConfiguration.zones = newZones
        (zoneRules, edgeTable, grid) = Self.makeTables(compiled)
        release(into: &events, includingClock: false)
    }

    // MARK: internals

    /// Whether the judge holds something of tag `tag` that could still matter: a pair inside a zone
    /// (its exit, `outPeriod` after its last detection, is not decided yet) or a counting pair whose
    /// count could still continue (clock − previous detection ≤ `inCountInterval`). A bounded
    /// engine evicts a tag only once no floor's judge holds it (`forget(tag:)`).
    func holdsState(of tag: TagIndex) -> Bool {
        let tag = tag.rawValue
        guard tag < tags.count else { return false }
        for s in tags[tag].activeSlots {
            let pair = slots[Int(s)]
            if pair.isInside || clock - pair.previousDetectionSeconds <= zoneRules[Int(pair.zone)].inCountIntervalSeconds {
                return true
            }
        }
        return false
    }

    /// Forgets tag `tag` (evicted: its index will name another tag); call only when
    /// `holdsState(of:)` is false. Its stale counting pairs are freed — exactly what its next
    /// detection would do (`pruneStaleCounting`) — and its id cleared, so the judge treats the
    /// index as a tag it never saw.
    mutating func forget(tag: TagIndex) {
        let tag = tag.rawValue
        guard tag < tags.count else { return }
        while let s = tags[tag].activeSlots.last { freeSlot(Int(s)) }
        tags[tag].id = TagID("")
    }

    /// Grows the tag list to hold index `index` (tags the judge has not seen yet stay unnamed).
    /// Amortised O(1) per tag: the list grows geometrically, as `append` does (reserving exactly
    /// `index + 1` copied the whole list for every new tag: O(n²), seconds at 100,000 tags).
    @inline(never)
    private mutating func addTags(through index: Int) {
        while tags.count <= index { tags.append(TagState(id: TagID(""))) }
    }

    /// Fills `detected` with the zones p qualifies for that have the highest priority (§4.1):
    /// reach-box test, then d(p, polygon)² ≤ inDist² over the zone's edges in the flat table.
    private mutating func collectDetections(at p: Point2) {
        detectedCount = 0
        let range = grid.candidates(x: p.x, y: p.y)
        guard !range.isEmpty else { return }
        var best = Int.min
        let fx = Float(p.x), fy = Float(p.y)
        edgeTable.withUnsafeBufferPointer { edges in
            grid.cellEntries.withUnsafeBufferPointer { entries in
                for k in range {
                    let entry = entries[k]
                    guard entry.priority >= best, entry.mayReach(x: fx, y: fy) else { continue }
                    let zoneEdges = UnsafeBufferPointer(rebasing: edges[Int(entry.edgeStart)..<Int(entry.edgeEnd)])
                    guard ZonePolygon.isWithin(reachSquaredSquareMeters: entry.reachSquaredSquareMeters, of: p,
                                               edges: zoneEdges) else { continue }
                    if entry.priority > best {
                        best = entry.priority
                        detectedCount = 0
                    }
                    if detectedCount == detected.count { detected.append(entry.zone) } else { detected[detectedCount] = entry.zone }
                    detectedCount += 1
                }
            }
        }
    }

    /// Frees the tag's counting pairs whose previous detection is more than `inCountInterval`
    /// before the clock: the next detection (at a time ≥ the clock) would restart the count at 1,
    /// exactly as for a pair without state. Run when the tag needs a new slot, so a tag's list stays
    /// at most one longer than its live pairs.
    private mutating func pruneStaleCounting(_ tag: Int) {
        var i = 0
        while i < tags[tag].activeSlots.count {
            let s = Int(tags[tag].activeSlots[i])
            if !slots[s].isInside,
               clock - slots[s].previousDetectionSeconds > zoneRules[Int(slots[s].zone)].inCountIntervalSeconds {
                freeSlot(s) // swap-removes index i from the tag's list
            } else {
                i += 1
            }
        }
    }

    /// Applies a detection of `zone` for `tag` at time t (§4.2, §4.3).
    private mutating func detect(tag: Int, zone: Int, atSeconds t: Double) {
        let rules = zoneRules[zone]
        var slot = -1
        let pairs = tags[tag].activeSlots
        if let i = pairs.firstIndex(where: { Int(slots[Int($0)].zone) == zone }) { slot = Int(pairs[i]) }
        if slot < 0 {
            guard rules.inCount >= 1 else { return }
            pruneStaleCounting(tag)
            slot = allocateSlot(tag: tag, zone: zone)
        }
        if slots[slot].isInside {
            slots[slot].lastDetectionSeconds = max(slots[slot].lastDetectionSeconds, t)
            return
        }
        if slots[slot].count > 0, t - slots[slot].previousDetectionSeconds <= rules.inCountIntervalSeconds {
            slots[slot].count += 1
        } else {
            slots[slot].count = 1
        }
        slots[slot].previousDetectionSeconds = t
        guard slots[slot].count >= rules.inCount else { return }
        slots[slot].isInside = true
        slots[slot].enterSeconds = t
        slots[slot].lastDetectionSeconds = t
        slots[slot].nextDwellIndex = 1
        if rules.callInout { hold(.enter, atSeconds: t, slot: slot, zone: zone) }
        pushDeadline(slot: slot)
    }

    private mutating func allocateSlot(tag: Int, zone: Int) -> Int {
        let s: Int
        if let free = freeSlots.popLast() {
            s = Int(free)
        } else {
            s = slots.count
            slots.append(PairState())
        }
        let generation = slots[s].generation
        slots[s] = PairState(tag: Int32(tag), zone: Int32(zone), isInUse: true, generation: generation)
        tags[tag].activeSlots.append(Int32(s))
        return s
    }

    private mutating func freeSlot(_ s: Int) {
        let tag = Int(slots[s].tag)
        if let i = tags[tag].activeSlots.firstIndex(of: Int32(s)) { tags[tag].activeSlots.swapRemove(at: i) }
        slots[s].isInUse = false
        slots[s].isInside = false
        slots[s].generation &+= 1
        freeSlots.append(Int32(s))
    }

    /// Pushes the earliest time at which inside pair `s` may produce an event: its next dwell
    /// t_enter + k·T_dwell if that is before the exit deadline t_last + T_out, else the deadline
    /// (strict: due only once the clock has passed it). A later detection only moves both later,
    /// so the key stays a lower bound and is re-checked when it comes due.
    private mutating func pushDeadline(slot s: Int) {
        let rules = zoneRules[Int(slots[s].zone)]
        let exitSeconds = slots[s].lastDetectionSeconds + rules.outPeriodSeconds
        var entry = ZoneDeadline(timeSeconds: exitSeconds, isStrict: true, slot: Int32(s),
                                       generation: slots[s].generation)
        if rules.dwellSeconds > 0 {
            let dwellSeconds = slots[s].enterSeconds + Double(slots[s].nextDwellIndex) * rules.dwellSeconds
            if dwellSeconds < exitSeconds { entry.timeSeconds = dwellSeconds; entry.isStrict = false }
        }
        heap.push(entry)
    }

    /// Moves the clock to `timeSeconds` if later and settles every inside pair whose deadline is due.
    private mutating func advanceClock(to timeSeconds: Double) {
        if timeSeconds > clock { clock = timeSeconds }
        while let top = heap.top, top.isDue(atClock: clock) {
            heap.pop()
            let s = Int(top.slot)
            guard slots[s].isInUse, slots[s].isInside, slots[s].generation == top.generation else { continue }
            emitDueDwells(slot: s)
            let rules = zoneRules[Int(slots[s].zone)]
            let exitSeconds = slots[s].lastDetectionSeconds + rules.outPeriodSeconds
            if exitSeconds < clock {
                if rules.callInout { hold(.exit, atSeconds: exitSeconds, slot: s, zone: Int(slots[s].zone)) }
                freeSlot(s)
            } else {
                pushDeadline(slot: s)
            }
        }
    }

    /// Decides the dwell events of inside pair `s` at times t_enter + k·T_dwell ≤ c that lie before
    /// the exit deadline t_last + T_out (§4.4); `dwellSeconds` of the event is k·T_dwell.
    private mutating func emitDueDwells(slot s: Int) {
        let zone = Int(slots[s].zone)
        let rules = zoneRules[zone]
        guard rules.dwellSeconds > 0 else { return }
        let exitSeconds = slots[s].lastDetectionSeconds + rules.outPeriodSeconds
        while true {
            let k = slots[s].nextDwellIndex
            let elapsedSeconds = Double(k) * rules.dwellSeconds
            let dwellTime = slots[s].enterSeconds + elapsedSeconds
            guard dwellTime <= clock, dwellTime < exitSeconds else { return }
            hold(.dwell, atSeconds: dwellTime, slot: s, zone: zone, dwellSeconds: elapsedSeconds)
            slots[s].nextDwellIndex = k + 1
        }
    }

    /// Inserts a decided event into the held buffer at its §4.7 place (binary search; most new
    /// events are the latest, so the shift is short).
    private mutating func hold(_ kind: ZoneEvent.Kind, atSeconds t: Double, slot s: Int, zone: Int,
                               dwellSeconds: Double? = nil) {
        let event = ZoneEvent(timeSeconds: t, tag: tags[Int(slots[s].tag)].id, floor: floor,
                              zone: zones[zone].zone.id, kind: kind, dwellSeconds: dwellSeconds)
        let instant = kind == .exit && t == slots[s].enterSeconds
        var lo = 0, hi = pending.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if Self.releasePrecedes(event, isInstantExit: instant, pending[mid].event,
                                    isInstantExit: pending[mid].isInstantExit) {
                hi = mid
            } else {
                lo = mid + 1
            }
        }
        pending.insert(HeldEvent(event: event, isInstantExit: instant), at: lo)
    }

    /// Appends the held events with time < c (or ≤ c when `includingClock`) to `events`.
    private mutating func release(into events: inout [ZoneEvent], includingClock: Bool) {
        var n = 0
        while n < pending.count, pending[n].event.timeSeconds < clock
                || (includingClock && pending[n].event.timeSeconds <= clock) { n += 1 }
        guard n > 0 else { return }
        for i in 0..<n { events.append(pending[i].event) }
        pending.removeFirst(n)
    }
}
