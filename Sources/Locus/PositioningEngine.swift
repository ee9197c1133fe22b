import LocusCore
import LocusSolvers
import LocusZones

/// The synchronous, deterministic multi-tag core: ranges in, position fixes and zone events out.
///
/// **Per range.** The row is checked (known floor, known locator), its locator's `biasM` is taken
/// out (rᵢ ← max(0, rᵢ − bᵢ)) and it joins its tag's open epoch (`EpochTable`, rules as in `EpochAssembler`). With the
/// tightly coupled filter it also updates the tag's `TrackFilter` at its own timestamp.
///
/// **Per epoch.** When no later range can join an epoch (a range of the same tag arrives after the
/// pause or the period, or the clock passes that point), the epoch gives one fix at the epoch's
/// time (its latest range):
/// - `tracking: .none`: the floor's `Trilaterator` solves the epoch's ranges;
/// - `.kalman` tightly coupled: the filter's state at the epoch time;
/// - `.kalman` loosely coupled: the epoch's least-squares fix updates the filter first.
/// Epochs that cannot be solved are counted in `diagnostics` by code (E4001, E4002, …): they never
/// throw and never produce a NaN.
///
/// **Order and zones.** Fixes wait in a reorder buffer until no open epoch of any tag can still
/// produce an earlier one (every open epoch's fix time is ≥ its first range), then are released in
/// (time, tag) order to `fixes` and to the zone judge of their floor; every floor's judge shares
/// the clock (SPEC §4.6). So fixes and events depend on the data alone — not on batch sizes or
/// timer ticks — and the command line, the Swift API and the C ABI give the same bytes.
///
/// Steady state allocates nothing per fix beyond the growth of the output arrays.
package struct PositioningEngine: Sendable {
    /// The settings the engine was made with.
    package let configuration: EngineConfiguration
    /// Per-floor locators, biases and solvers, in site order (the floor index).
    package let floors: [FloorContext]
    private var defaultFloorIndex: Int
    private var floorIndexByID: [FloorID: Int] = [:]
    /// Per floor: the offset settings when the engine estimates a per-tag range offset there.
    private let offsetConfigurations: [TagRangeOffsetConfiguration.Shared?]

    /// A tag's per-row state: plain scalars only (no reference inside), so that reading or
    /// updating an element never copies, retains or releases.
    private struct TagState: Sendable {
        var floorIndex: Int
        /// True once the tag's causal filter (`filters[tag]`, tracking on a planar floor) exists;
        /// it is created on the tag's first range.
        var hasFilter = false
        /// True while `offsets[tag]` holds an estimator (`tagRangeOffset` applies to its floor).
        var hasOffset = false
        /// The tag's clock (`TagClock`): a suspected forward jump. Its latest admitted time is kept in
        /// `epochs` (`latestAdmittedSeconds`), written with each row's range.
        var clock = TagClock()
        /// Incremented each time an epoch closes (stale heap entries are recognised by it).
        var epochGeneration = 0
        /// `offsets[tag]`'s current estimate b̂ (metres; 0 without one): the per-row correction,
        /// refreshed when the estimator updates (once per epoch).
        var offsetMeters = 0.0
    }
    private var tags: [TagState] = []
    /// Per tag: where the zone judge of its floor keeps it (−1: unknown), so judging a fix costs no
    /// hash of the tag id (`ZoneJudge.judge(_:tagHint:into:)` checks and updates it).
    private var judgeTagHints: [Int] = []
    /// Each tag's common range offset estimator, by tag index (nil when `tagRangeOffset` does not
    /// apply to its floor). Kept out of `TagState`: the estimator holds its shared settings by
    /// reference, which made every `TagState` access a retain and every copy an outlined copy.
    private var offsets: [TagRangeOffsetEstimator?] = []
    /// Every tag's open epoch (row = tag index), in flat storage.
    private var epochs: EpochTable
    /// Each tag's filter, by tag index (tracking only; empty for raw fixes). Kept out of
    /// `TagState` so that the per-row state stays small (a 1.3 KB filter inline made every
    /// element access and every array growth move it).
    /// Non-optional: mutating through an optional array element copied the filter out and back.
    /// A tag's slot holds a placeholder until `hasFilter`.
    private var filters: [TrackFilter] = []
    private var tagTable = TagTable()

    /// An open epoch in the heaps: `key` is its due-time lower bound (due heap) or its start
    /// (start heap); `generation` tells whether the epoch is still the one that was pushed.
    private struct EpochEntry: Sendable, Comparable {
        var key: Double
        var tag: Int
        var generation: Int
        static func < (a: EpochEntry, b: EpochEntry) -> Bool { a.key < b.key || (a.key == b.key && a.tag < b.tag) }
    }
    private var dueHeap = MinHeap<EpochEntry>()
    private var startHeap = MinHeap<EpochEntry>()
    /// The earliest start of an open epoch (+∞ with none), as `releaseWatermark()` last found it
    /// and kept up to date since: an epoch opening at t makes it min(it, t); nil once the epoch that
    /// started then may have closed. Fixes wait in the reorder heap for rows at a time
    /// (rounds of different tags interleave), and each row asks again: the answer changes only when
    /// the earliest open epoch closes, about once per fix, not at every row.
    private var earliestOpenStart: Double?

    /// A fix waiting for release, ordered by (time, tag index, sequence). The fix itself stays in
    /// `parked[slot]` so that heap moves copy 32 bytes, not a whole `PositionFix`.
    private struct ReorderEntry: Sendable, Comparable {
        var timeSeconds: Double
        var tag: Int
        var sequence: Int
        var slot: Int
        static func < (a: ReorderEntry, b: ReorderEntry) -> Bool {
            if a.timeSeconds != b.timeSeconds { return a.timeSeconds < b.timeSeconds }
            if a.tag != b.tag { return a.tag < b.tag }
            return a.sequence < b.sequence
        }
    }
    private var reorder = MinHeap<ReorderEntry>()
    /// Parked fixes (by slot) and their floor index; `freeSlots` lists reusable slots.
    private var parked: [PositionFix] = []
    private var parkedFloor: [Int] = []
    private var freeSlots: [Int] = []
    private var reorderSequence = 0

    /// The tags most recently looked up by `ingest(_:)`, round robin: a short string compare
    /// instead of a SipHash per row (rows of a few tags interleave in time order).
    private var recentTags: (TagID, Int, TagID, Int, TagID, Int, TagID, Int) = ("", -1, "", -1, "", -1, "", -1)
    private var recentTagNext = 0
    /// The floor most recently looked up by `ingest(_:)`.
    private var lastFloorID: FloorID?
    private var lastFloorIndex = 0
    /// The filter settings (meaningful when `isTracking`), and whether it is tightly coupled:
    /// taken out of `configuration` once, not per range.
    private let sharedFilterConfiguration: TrackFilterConfiguration.Shared
    private let isTracking: Bool
    /// Per floor: whether it is solved in the plane (`FloorContext.mode == .planar`), where the
    /// filter runs. A flag, not an enum compare per range (that went through `Equatable`'s witness).
    private let floorIsPlanar: [Bool]
    /// Per floor: whether the engine estimates a per-tag range offset there (`offsetConfigurations[f] != nil`).
    private let floorEstimatesOffset: [Bool]
    private let isTight: Bool

    // Zone judges, one per floor, sharing the clock.
    private var judges: [ZoneJudge]
    private var eventScratch: [[ZoneEvent]]
    /// The latest time seen (rows and advances): the stream's clock.
    package private(set) var clockSeconds = -Double.infinity
    private var isFinished = false

    // Scratch for one epoch, sized to the largest floor.
    private var scratchLocators: [Point3]
    private var scratchRanges: [Double]
    private var workspace = TrilaterationWorkspace()

    /// Fixes released so far, in (time, tag) order. Take them with `drainFixes()`.
    package private(set) var fixes: [PositionFix] = []
    /// Zone events released so far, in SPEC §4.7 order. Take them with `drainEvents()`.
    package private(set) var events: [ZoneEvent] = []
    /// Counts of skipped rows and failed epochs.
    package internal(set) var diagnostics = EngineDiagnostics()

    /// An engine for `site`.
    /// - Throws: `E3105` for a locator whose position, bias or slope is not finite (or slope ≤ −1);
    ///   `E3002` when `configuration.defaultFloor` names no floor of the site; `E1003` for a
    ///   rate that is not positive and finite; `E3107` for a site without floors; the zone codes of
    ///   `ZoneJudge.init` for invalid zones.
    package init(site: Site, configuration: EngineConfiguration = .standard) throws(LocusError) {
        guard configuration.rateHertz > 0, configuration.rateHertz.isFinite else {
            throw LocusError(.invalidArgument, "rate must be a positive number of Hz, not \(configuration.rateHertz)")
        }
        guard !site.floors.isEmpty else { throw LocusError(.siteNoFloor, "the site has no floor") }
        // Locator coordinates are checked once here, not per range (a decoded site cannot hold a
        // non-finite number; a site built in code could).
        for (f, floor) in site.floors.enumerated() {
            for (l, locator) in floor.locators.enumerated() where !(locator.position.isFinite && locator.biasMeters.isFinite
                                                                    && locator.biasSlope.isFinite && locator.biasSlope > -1) {
                throw LocusError(.siteNonFiniteNumber, "floors[\(f)].locators[\(l)] (address \(locator.address.rawValue)): "
                                 + "position, biasM and biasSlope must be finite numbers (and biasSlope > -1)")
            }
        }
        self.configuration = configuration
        epochs = EpochTable(stride: max(1, site.floors.map(\.locators.count).max() ?? 1), rateHertz: configuration.rateHertz)
        if case .kalman(let c) = configuration.tracking {
            sharedFilterConfiguration = TrackFilterConfiguration.Shared(c)
            isTracking = true
            isTight = c.coupling == .tight
        } else {
            sharedFilterConfiguration = TrackFilterConfiguration.Shared(.standard)
            isTracking = false
            isTight = false
        }
        floors = site.floors.map { FloorContext(floor: $0, solver: configuration.solver) }
        floorIsPlanar = floors.map { $0.mode == .planar }
        offsetConfigurations = floors.map { f in
            guard f.mode == .planar else { return nil }
            switch configuration.tagRangeOffset {
            case .off: return nil
            case .on(let c): return TagRangeOffsetConfiguration.Shared(c)
            case .automatic(let c): return f.isUncalibrated ? TagRangeOffsetConfiguration.Shared(c) : nil
            }
        }
        floorEstimatesOffset = offsetConfigurations.map { $0 != nil }
        for (i, f) in site.floors.enumerated() { floorIndexByID[f.id] = i }
        if let wanted = configuration.defaultFloor {
            guard let i = floorIndexByID[wanted] else {
                throw LocusError(.unknownFloor, "no floor '\(wanted)' in the site (floors: \(site.floors.map(\.id.rawValue).joined(separator: ", ")))")
            }
            defaultFloorIndex = i
        } else {
            defaultFloorIndex = 0
        }
        var judges: [ZoneJudge] = []
        var options = ZoneJudgeOptions.standard
        options.positionPeriodSeconds = 1 / configuration.rateHertz
        for floor in site.floors { judges.append(try ZoneJudge(floor: floor, options: options)) }
        self.judges = judges
        eventScratch = [[ZoneEvent]](repeating: [], count: site.floors.count)
        let widest = max(1, site.floors.map(\.locators.count).max() ?? 1)
        scratchLocators = [Point3](repeating: Point3(x: 0, y: 0, z: 0), count: widest)
        scratchRanges = [Double](repeating: 0, count: widest)
        workspace.reserve(widest)
    }

    /// The floor index for a floor id, or nil.
    package func floorIndex(_ id: FloorID) -> Int? { floorIndexByID[id] }

    /// The default floor's index (rows that name no floor).
    package var defaultFloor: Int { defaultFloorIndex }

    /// Makes floor `index` the floor of rows that name none (a floor switch while running). Tags
    /// keep their state; a tag whose next row lands on another floor closes its open epoch on the
    /// old floor first (see `ingest`).
    package mutating func setDefaultFloor(_ index: Int) {
        precondition(floors.indices.contains(index), "setDefaultFloor: no floor \(index)")
        defaultFloorIndex = index
    }

    /// The number of tags seen so far.
    package var tagCount: Int { tags.count }

    /// The floors' zones, by floor index (as the judges use them).
    package func zones(ofFloor index: Int) -> [Zone] { floors[index].floor.zones }

    /// The configuration warnings of every floor's zones (SPEC §4.2), in floor order.
    package var zoneWarnings: [ZoneConfigurationWarning] { judges.flatMap(\.configurationWarnings) }

    // MARK: input

    /// Ingests one range measurement. Rows that can't be used are counted in
    /// `diagnostics.skipped` (unknown floor, unknown anchor, negative or non-finite values, time
    /// going backwards for the tag); none throws.
    package mutating func ingest(_ m: RangeMeasurement, line: Int = 0) {
        let tag = cachedTagIndex(m.tag)
        let floor: Int
        if let id = m.floor {
            if let last = lastFloorID, last == id {
                floor = lastFloorIndex
            } else {
                guard let f = floorIndexByID[id] else { diagnostics.skipped.record(.unknownFloor, line: line); return }
                lastFloorID = id
                lastFloorIndex = f
                floor = f
            }
        } else {
            floor = defaultFloorIndex
        }
        ingest(tagIndex: tag, floorIndex: floor, locator: m.locator.rawValue, rangeMeters: m.rangeMeters,
               timeSeconds: m.timeSeconds, line: line)
    }

    /// The fast path of `ingest(_:)` for callers that interned the tag (`tagIndex(for:)`) and
    /// resolved the floor (`floorIndex(_:)`).
    package mutating func ingest(tagIndex tag: Int, floorIndex floor: Int, locator address: UInt16,
                                 rangeMeters range: Double, timeSeconds t: Double, line: Int = 0) {
        guard !isFinished else { return }
        // Finite as plain compares (NaN fails them).
        guard abs(t) <= .greatestFiniteMagnitude, abs(range) <= .greatestFiniteMagnitude else {
            diagnostics.skipped.record(.nonFinite, line: line); return
        }
        guard range >= 0 else { diagnostics.skipped.record(.negativeRange, line: line); return }
        guard let slot = floors[floor].slot(of: address) else { diagnostics.skipped.record(.unknownAnchor, line: line); return }
        guard range <= configuration.maximumRangeMeters else { diagnostics.skipped.record(.rangeTooLong, line: line); return }
        // The tag's clock: its latest admitted time is the epoch table's (every admitted row is added
        // there, which records it), so the usual row is admitted by reading, not writing, `tags`.
        let latest = epochs.latestAdmittedSeconds(tag)
        if !tags[tag].clock.admitsDirectly(t, after: latest),
           let reason = tags[tag].clock.admit(t, after: latest) {
            diagnostics.skipped.record(reason, line: line); return
        }
        advanceClock(to: t)
        // `advance` released what the clock allows; only closing this tag's epoch here (which
        // parks its fix and can lift the watermark) may release more. Opening an epoch at t (the
        // clock) cannot: the watermark is min(clock, open epochs' starts).
        var closed = false
        if tags[tag].floorIndex != floor {
            moveTag(tag, toFloor: floor)
            closed = true
        }
        if !tags[tag].hasOffset, floorEstimatesOffset[floor] { startOffset(tag, floor: floor) }
        if epochs.closes(tag, at: t) {
            closeEpoch(tag)
            closed = true
        }
        // The range without the tag's offset and the locator's bias (the filter refuses a negative
        // one; the epoch keeps it clamped at 0).
        let corrected = floors[floor].locators[slot].correctedRange(range - tags[tag].offsetMeters)
        if epochs.add(tag, slot: slot, rangeMeters: max(0, corrected), timeSeconds: t) {
            let g = tags[tag].epochGeneration
            dueHeap.push(EpochEntry(key: epochs.dueSeconds(tag), tag: tag, generation: g))
            startHeap.push(EpochEntry(key: t, tag: tag, generation: g))
            // The earliest open start stays known: min(known, t) (t when none was open).
            if let known = earliestOpenStart { earliestOpenStart = min(known, t) }
        }
        if isTracking, floorIsPlanar[floor] {
            if !tags[tag].hasFilter { startFilter(tag, floor: floor) }
            if isTight {
                filters[tag].update(correctedRangeMeters: corrected, timeSeconds: t, address: floors[floor].addresses[slot],
                                    anchor: floors[floor].positions[slot])
            }
        }
        if closed { release() }
    }

    // The rare steps of `ingest`, out of line so that the per-range path stays small (a 1 KB
    // filter built inline made every call reserve and spill around it).

    /// The tag changed floor: what it gathered on the old floor is solved there first, and its
    /// filter and offset start afresh on the new one.
    @inline(never)
    private mutating func moveTag(_ tag: Int, toFloor floor: Int) {
        closeEpoch(tag)
        tags[tag].floorIndex = floor
        tags[tag].hasFilter = false
        tags[tag].hasOffset = false
        tags[tag].offsetMeters = 0
        offsets[tag] = nil
    }

    /// Gives the tag a fresh offset estimator for `floor` (which estimates one).
    @inline(never)
    private mutating func startOffset(_ tag: Int, floor: Int) {
        guard let c = offsetConfigurations[floor] else { return }
        offsets[tag] = TagRangeOffsetEstimator(shared: c)
        tags[tag].hasOffset = true
        tags[tag].offsetMeters = 0
    }

    /// Gives the tag a fresh filter on `floor`.
    @inline(never)
    private mutating func startFilter(_ tag: Int, floor: Int) {
        filters[tag] = TrackFilter(shared: sharedFilterConfiguration, tag: tagTable.ids[tag], floor: floors[floor].floor.id,
                                   tagHeightMeters: floors[floor].floor.tagHeightMeters)
        tags[tag].hasFilter = true
    }

    /// Takes a ready position (from a provider that positions by itself) as if the engine had
    /// computed it: it moves the clock to its time, waits in the reorder buffer and is judged
    /// against the zones of its floor. A fix on an unknown floor or with a non-finite time or
    /// position is skipped and counted.
    package mutating func ingest(fix: PositionFix) {
        guard !isFinished else { return }
        guard let floor = floorIndexByID[fix.floor] else { diagnostics.skipped.record(.unknownFloor, line: 0); return }
        guard fix.timeSeconds.isFinite, fix.position.isFinite else { diagnostics.skipped.record(.nonFinite, line: 0); return }
        let tag = tagIndex(for: fix.tag)
        if let reason = tags[tag].clock.admit(fix.timeSeconds, after: epochs.latestAdmittedSeconds(tag)) {
            diagnostics.skipped.record(reason, line: 0); return
        }
        epochs.admit(tag, atSeconds: fix.timeSeconds)
        advance(toSeconds: fix.timeSeconds)
        park(fix, tag: tag, floor: floor)
        release()
    }

    /// Whether `finish()` was called (further input is ignored).
    package var hasFinished: Bool { isFinished }

    /// `tagIndex(for:)` through the small cache of recent tags.
    private mutating func cachedTagIndex(_ id: TagID) -> Int {
        if recentTags.1 >= 0 && recentTags.0 == id { return recentTags.1 }
        if recentTags.3 >= 0 && recentTags.2 == id { return recentTags.3 }
        if recentTags.5 >= 0 && recentTags.4 == id { return recentTags.5 }
        if recentTags.7 >= 0 && recentTags.6 == id { return recentTags.7 }
        let index = tagIndex(for: id)
        switch recentTagNext {
        case 0: recentTags.0 = id; recentTags.1 = index
        case 1: recentTags.2 = id; recentTags.3 = index
        case 2: recentTags.4 = id; recentTags.5 = index
        default: recentTags.6 = id; recentTags.7 = index
        }
        recentTagNext = (recentTagNext + 1) & 3
        return index
    }

    /// The index of `tag`, registering it (on the default floor) when new.
    package mutating func tagIndex(for tag: TagID) -> Int {
        let h = TagTable.hash(tag)
        if let known = tagTable.index(of: tag, hash: h) { return known }
        let index = tagTable.insert(tag, hash: h)
        tags.append(TagState(floorIndex: defaultFloorIndex))
        judgeTagHints.append(-1)
        offsets.append(nil)
        epochs.appendRow()
        if isTracking {
            filters.append(TrackFilter(shared: sharedFilterConfiguration, tag: tag, floor: floors[defaultFloorIndex].floor.id,
                                       tagHeightMeters: floors[defaultFloorIndex].floor.tagHeightMeters))
        }
        return index
    }

    /// Moves the clock to `t` (a timer tick, or implicitly each row's time): solves every open epoch
    /// that no later range can join, releases the fixes that can no longer be preceded, and lets
    /// the zone judges emit what became final (a tag that stopped reporting exits this way).
    /// Amortised O(log epochs) per closed epoch.
    package mutating func advance(toSeconds t: Double) {
        guard !isFinished, t.isFinite else { return }
        advanceClock(to: t)
    }

    /// `advance(toSeconds:)` for a finite t of a row being ingested (inlined there: most rows only
    /// move the clock).
    @inline(__always)
    private mutating func advanceClock(to t: Double) {
        guard t > clockSeconds else { return }
        clockSeconds = t
        // Most rows close no epoch and release no fix: two compares, no call.
        if let top = dueHeap.top, top.key <= t {
            closeDueEpochs(at: t)
        } else if let first = reorder.top, first.timeSeconds < t {
            // Still held by an open epoch that started no later (known since the last open or close)?
            if let known = earliestOpenStart, first.timeSeconds >= known { return }
            release()
        }
    }

    /// `advance`'s rare part: closes the epochs due at t (the clock), then releases.
    @inline(never)
    private mutating func closeDueEpochs(at t: Double) {
        while let top = dueHeap.top, top.key <= t {
            guard tags[top.tag].epochGeneration == top.generation, epochs.isOpen(top.tag) else {
                dueHeap.pop()
                continue
            }
            if epochs.isDue(top.tag, at: t) {
                dueHeap.pop()
                closeEpoch(top.tag)
            } else {
                // Ranges joined since the entry was pushed: requeue at the later due time, in one sift.
                dueHeap.replaceTop(with: EpochEntry(key: epochs.dueSeconds(top.tag), tag: top.tag, generation: top.generation))
            }
        }
        release()
    }

    /// Ends the stream: solves every epoch still open, releases every fix, and ends zone judgement
    /// with the clock at the latest time seen (no synthetic exit, SPEC §4.6). Further input is ignored.
    package mutating func finish() {
        guard !isFinished else { return }
        for i in tags.indices { closeEpoch(i) }
        release(all: true)
        for f in judges.indices {
            if clockSeconds.isFinite { try? judges[f].advance(toSeconds: clockSeconds, into: &eventScratch[f]) }
            judges[f].finish(into: &eventScratch[f])
        }
        flushEvents()
        isFinished = true
    }

    /// Takes the fixes released so far.
    package mutating func drainFixes() -> [PositionFix] {
        defer { fixes.removeAll(keepingCapacity: true) }
        return fixes
    }

    /// Takes the zone events released so far.
    package mutating func drainEvents() -> [ZoneEvent] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    /// Hands the fixes released so far to `body`, then forgets them keeping the storage: a consumer
    /// that writes or forwards them as they come allocates nothing per call (`drainFixes()` hands
    /// the array over, so the engine's next fix needs a new one).
    package mutating func takeFixes<R>(_ body: ([PositionFix]) throws -> R) rethrows -> R {
        defer { fixes.removeAll(keepingCapacity: true) }
        return try body(fixes)
    }

    /// `takeFixes(_:)` for the zone events released so far.
    package mutating func takeEvents<R>(_ body: ([ZoneEvent]) throws -> R) rethrows -> R {
        defer { events.removeAll(keepingCapacity: true) }
        return try body(events)
    }

    /// What the engine holds between rows, by kind (for tests of bounded state): heap entries (due
    /// and start heaps: open epochs plus stale entries not yet popped), fixes waiting for release,
    /// parking slots ever used, and the zone judges' own counts summed over floors.
    package var retainedCounts: (dueHeap: Int, startHeap: Int, waiting: Int, parkingSlots: Int,
                                 judgePairs: Int, judgeDeadlines: Int, judgeHeldEvents: Int) {
        var pairs = 0, deadlines = 0, held = 0
        for j in judges {
            let c = j.retainedCounts
            pairs += c.pairs; deadlines += c.deadlines; held += c.heldEvents
        }
        return (dueHeap.count, startHeap.count, reorder.count, parked.count, pairs, deadlines, held)
    }

    /// Adds rows a caller skipped before they reached the engine (so one tally reports them all).
    package mutating func recordSkipped(_ tally: SkipTally) {
        diagnostics.skipped.merge(tally)
    }

    // MARK: release

    /// Releases the fixes no open epoch can precede (time < min(clock, earliest open epoch start)),
    /// or all of them, to `fixes` and the zone judges.
    private mutating func release(all: Bool = false) {
        // Most rows release nothing: no parked fix, or the earliest is not before the clock.
        guard let first = reorder.top, all || first.timeSeconds < clockSeconds else { return }
        let watermark = releaseWatermark()
        var released = false
        while let top = reorder.top, all || top.timeSeconds < watermark {
            reorder.pop()
            let slot = top.slot
            freeSlots.append(slot)
            // The fix moves from its slot to `fixes` (swapped with a vacant fix: no copy of the fix and
            // no reference count; a copy in and out of the slot was ~3 % of the pipeline).
            let judged = ZoneFix(timeSeconds: parked[slot].timeSeconds, tag: parked[slot].tag,
                                 point: parked[slot].position.horizontal)
            fixes.append(Self.vacantFix)
            swap(&fixes[fixes.count - 1], &parked[slot])
            judge(judged, tag: top.tag, floor: parkedFloor[slot])
            released = true
        }
        if released { flushEvents() }
    }

    /// min(clock, the earliest start of an open epoch): no fix still to come can be earlier (an open
    /// epoch's fix time is at least its start). Drops the stale heads of the start heap.
    private mutating func releaseWatermark() -> Double {
        if let known = earliestOpenStart { return min(clockSeconds, known) }
        var earliest = Double.infinity
        while let top = startHeap.top {
            if tags[top.tag].epochGeneration == top.generation && epochs.isOpen(top.tag) {
                earliest = top.key
                break
            }
            startHeap.pop()
        }
        earliestOpenStart = earliest
        return min(clockSeconds, earliest)
    }

    /// A released fix judged on its floor (`judged`: its time, tag and horizontal position), the
    /// other floors' clocks moved to its time.
    @inline(__always)
    private mutating func judge(_ judged: ZoneFix, tag: Int, floor: Int) {
        for f in judges.indices {
            if f == floor {
                try? judges[f].judge(judged, tagHint: &judgeTagHints[tag], into: &eventScratch[f])
            } else {
                try? judges[f].advance(toSeconds: judged.timeSeconds, into: &eventScratch[f])
            }
        }
    }

    /// What a released parking slot holds until it is reused (plain values: nothing to count).
    private static let vacantFix = PositionFix(timeSeconds: 0, tag: TagID(""), floor: FloorID(""),
                                               position: Point3(x: 0, y: 0, z: 0),
                                               covariance: SymmetricMatrix3(xx: 0, xy: 0, xz: 0, yy: 0, yz: 0, zz: 0),
                                               quality: FixQuality(hdop: 0, pdop: 0, residualRMSMeters: 0, locatorsUsed: 0))

    /// A freshly closed epoch's fix (its epoch already reset): released at once when nothing is
    /// parked and no open epoch can still produce an earlier fix (time < `releaseWatermark()`) —
    /// the usual case, and exactly what parking it and releasing would do —, parked otherwise.
    private mutating func deliver(_ fix: consuming PositionFix, tag: Int, floor: Int) {
        if reorder.isEmpty, fix.timeSeconds < releaseWatermark() {
            let judged = ZoneFix(timeSeconds: fix.timeSeconds, tag: fix.tag, point: fix.position.horizontal)
            fixes.append(consume fix)
            judge(judged, tag: tag, floor: floor)
            flushEvents()
            return
        }
        park(fix, tag: tag, floor: floor)
    }

    /// Moves the judges' released events to `events`, merged across floors in §4.7 order.
    private mutating func flushEvents() {
        if judges.count == 1 {
            // Most fixes raise no event.
            guard !eventScratch[0].isEmpty else { return }
            events.append(contentsOf: eventScratch[0])
            eventScratch[0].removeAll(keepingCapacity: true)
            return
        }
        guard eventScratch.contains(where: { !$0.isEmpty }) else { return }
        events.append(contentsOf: ZoneJudge.merge(eventScratch))
        for f in eventScratch.indices { eventScratch[f].removeAll(keepingCapacity: true) }
    }

    /// Puts a fix into the reorder buffer (reusing a free slot).
    /// The fix is taken (`consuming`): callers hand over a fresh fix, moved into its slot uncopied.
    private mutating func park(_ fix: consuming PositionFix, tag: Int, floor: Int) {
        let slot: Int
        let time = fix.timeSeconds
        if let free = freeSlots.popLast() {
            slot = free
            parked[slot] = consume fix
            parkedFloor[slot] = floor
        } else {
            slot = parked.count
            parked.append(consume fix)
            parkedFloor.append(floor)
        }
        reorderSequence += 1
        reorder.push(ReorderEntry(timeSeconds: time, tag: tag, sequence: reorderSequence, slot: slot))
    }

    // MARK: epochs

    /// Gives tag `tag`'s open epoch (if any) its fix (into the reorder buffer) and empties it.
    private mutating func closeEpoch(_ tag: Int) {
        guard epochs.isOpen(tag) else { return }
        diagnostics.epochs += 1
        var isReset = false
        defer { if !isReset { resetEpoch(tag) } }
        let time = epochs.epochTimeSeconds(tag)
        let floorIndex = tags[tag].floorIndex
        let usesFilterFix = isTight && tags[tag].hasFilter
        // The epoch's locators and ranges, gathered once for the offset estimator and the solver.
        let n = tags[tag].hasOffset || !usesFilterFix
            ? epochs.gather(tag, positions: floors[floorIndex].positions, locators: &scratchLocators, ranges: &scratchRanges)
            : 0
        if tags[tag].hasOffset { updateOffset(tag, count: n, floorIndex: floorIndex, timeSeconds: time) }
        if usesFilterFix {
            // The epoch is done with (its ranges were gathered above): reset it first, so that the fix
            // can be released at once when nothing precedes it.
            resetEpoch(tag)
            isReset = true
            if filters[tag].prepareFix(atSeconds: time) {
                deliver(filters[tag].takePreparedFix(atSeconds: time), tag: tag, floor: floorIndex)
            } else {
                filters[tag].restartEpochFigures()
                diagnostics.epochsBeforeTrack += 1
            }
            return
        }
        let solver = floors[floorIndex].solver
        var solved: TrilaterationSolution? = nil
        var failure: LocusErrorCode = .tooFewRanges
        scratchLocators.withUnsafeBufferPointer { lp in
            scratchRanges.withUnsafeBufferPointer { rp in
                do throws(LocusError) {
                    solved = try solver.solve(locators: UnsafeBufferPointer(rebasing: lp[0..<n]),
                                              rangesMeters: UnsafeBufferPointer(rebasing: rp[0..<n]),
                                              workspace: &workspace)
                } catch {
                    failure = error.code
                }
            }
        }
        switch solved {
        case .some(let solution):
            var rejected = LocatorList()
            if solution.rejectedCount > 0 {
                for k in 0..<min(n, 64) where solution.rejectedMask & (1 << UInt64(k)) != 0 {
                    rejected.append(floors[floorIndex].addresses[epochs.presentSlot(tag, k)])
                }
                diagnostics.rejectedRanges += solution.rejectedCount
            }
            let quality = FixQuality(hdop: solution.hdop, vdop: solution.vdop, pdop: solution.pdop,
                                     residualRMSMeters: solution.residualRMSMeters, locatorsUsed: solution.locatorsUsed,
                                     rejected: rejected)
            let raw = PositionFix(timeSeconds: time, tag: tagTable.ids[tag], floor: floors[floorIndex].floor.id,
                                  position: solution.position, covariance: solution.covariance, quality: quality)
            resetEpoch(tag)
            isReset = true
            if tags[tag].hasFilter {
                // Loosely coupled: the least-squares fix is the filter's measurement.
                filters[tag].update(fix: raw)
                if filters[tag].prepareFix(atSeconds: time) {
                    deliver(filters[tag].takePreparedFix(atSeconds: time), tag: tag, floor: floorIndex)
                } else {
                    filters[tag].restartEpochFigures()
                    diagnostics.epochsBeforeTrack += 1
                }
            } else {
                deliver(raw, tag: tag, floor: floorIndex)
            }
        case .none:
            diagnostics.recordFailure(failure)
        }
    }
}

extension PositioningEngine {
    /// Empties tag `tag`'s open epoch and retires its heap entries (a new generation).
    private mutating func resetEpoch(_ tag: Int) {
        // The earliest open start stays known unless this epoch may have been the one holding it.
        if let known = earliestOpenStart, epochs.isOpen(tag), !(epochs.startSeconds(tag) > known) {
            earliestOpenStart = nil
        }
        epochs.reset(tag)
        tags[tag].epochGeneration += 1
    }

    /// Tag `tag`'s current common range offset estimate b̂ (metres) and the floor it applies to, or
    /// nil when the engine estimates none for it (see `EngineConfiguration.tagRangeOffset`).
    package func tagRangeOffset(_ tag: TagID) -> (floorIndex: Int, offsetMeters: Double)? {
        guard let i = tagTable.index(of: tag, hash: TagTable.hash(tag)), let offset = offsets[i], offset.updates > 0 else { return nil }
        return (tags[i].floorIndex, offset.offsetMeters)
    }

    /// Feeds tag `tag`'s open epoch — its first `n` ranges gathered in the scratch arrays, already
    /// corrected by the current offset — to its offset estimator, and refreshes the per-row
    /// correction `offsetMeters`. No allocation.
    private mutating func updateOffset(_ tag: Int, count n: Int, floorIndex: Int, timeSeconds time: Double) {
        let h = floors[floorIndex].floor.tagHeightMeters
        // The tracked position (tightly coupled filter) is within centimetres of the epoch's solution.
        let mean = isTight && tags[tag].hasFilter ? filters[tag].meanAtLastUpdate : nil
        let seed = mean.map { Point2(x: $0[0], y: $0[1]) }
        scratchLocators.withUnsafeBufferPointer { lp in
            scratchRanges.withUnsafeBufferPointer { rp in
                offsets[tag]?.update(locators: UnsafeBufferPointer(rebasing: lp[0..<n]),
                                     rangesMeters: UnsafeBufferPointer(rebasing: rp[0..<n]),
                                     tagHeightMeters: h, timeSeconds: time, seed: seed)
            }
        }
        tags[tag].offsetMeters = offsets[tag]?.offsetMeters ?? 0
    }
}
