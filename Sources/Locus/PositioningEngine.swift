import LocusCore
import LocusNumerics
import LocusSolvers
import LocusZones

/// The synchronous, deterministic multi-tag core: ranges in, position fixes and zone events out.
///
/// **Per range.** The row's tag gets its `TagIndex` from the engine's `TagRegistry` (the one tag
/// registry: epochs, filters, offsets and zone judges all keep per-tag state by that index) and its
/// floor its `FloorIndex`. The row is checked (known floor, known locator), its locator's `biasM` is
/// taken out (rᵢ ← max(0, rᵢ − bᵢ)) and it joins its tag's open epoch (`EpochScheduler`, rules as in
/// `EpochAssembler`). With the tightly coupled filter it also updates the tag's `TrackFilter` at its
/// own timestamp — applied when the epoch closes, all of its ranges in one call
/// (`applyPendingRanges`), the same as one by one as they came.
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
/// **Order and zones.** Fixes wait in a `ReorderBuffer` until no open epoch of any tag can still
/// produce an earlier one (every open epoch's fix time is ≥ its first range), then are released in
/// (time, tag) order to `fixes` and to the zone judge of their floor; every floor's judge shares
/// the clock (SPEC §4.6). So fixes and events depend on the data alone — not on batch sizes or
/// timer ticks — and the command line, the Swift API and the C ABI give the same bytes.
///
/// Steady state allocates nothing per fix beyond the growth of the output arrays. Closing an epoch
/// is in `PositioningEngine+Epochs.swift`; the rare steps (new tags, floor changes, provider fixes,
/// inspection) are in `PositioningEngine+Tags.swift` and `PositioningEngine+Output.swift`.
package struct PositioningEngine: Sendable {
    /// The settings the engine was made with.
    package let configuration: EngineConfiguration
    /// The site, as given.
    package let site: Site
    /// Per-floor locators, biases and solvers, by floor index.
    let floors: [FloorContext]
    /// The floor of rows that name none.
    package internal(set) var defaultFloor: FloorIndex
    /// Per floor: the offset settings when the engine estimates a per-tag range offset there.
    let offsetConfigurations: [TagRangeOffsetConfiguration.Shared?]

    /// A tag's per-row state: plain scalars only (no reference inside), so that reading or
    /// updating an element never copies, retains or releases. 40 bytes a tag (declared widest first,
    /// so that nothing pads between the fields).
    struct TagState: Sendable {
        /// `offsets[tag]`'s current estimate b̂ (metres; 0 without one): the per-row correction,
        /// refreshed when the estimator updates (once per epoch).
        var offsetMeters = 0.0
        /// The tag's clock (`TagClock`): a suspected forward jump. Its latest admitted time is kept in
        /// the epoch table (`latestAdmittedSeconds`), written with each row's range.
        var clock = TagClock()
        /// The floor index, in 32 bits (`floorIndex`).
        private var floor: Int32
        /// How many of the open epoch's ranges (its first present slots, in order) the tightly coupled
        /// filter has taken; the others wait in the epoch table (`applyPendingRanges`).
        var appliedRanges: Int32 = 0
        /// True once the tag's causal filter (`filters[tag]`, tracking on a planar floor) exists (floors
        /// solved in 3-D use `spatialTracks[tag]`, there from the tag's registration);
        /// it is created on the tag's first range.
        var hasFilter = false
        /// True while `offsets[tag]` holds an estimator (`tagRangeOffset` applies to its floor).
        var hasOffset = false
        /// True while the open epoch holds range differences (`differenceEpochs`), not ranges.
        var holdsDifferences = false
        /// The tag's latest ranges each 10 ms or more after the one before, in a row (`isRoundRobin`).
        var spacedRanges: UInt8 = 0

        init(floorIndex: Int) { floor = Int32(truncatingIfNeeded: floorIndex) }

        /// The tag's floor (an index of the site's floors: fewer than 2³¹).
        var floorIndex: Int {
            get { Int(floor) }
            set { floor = Int32(truncatingIfNeeded: newValue) }
        }
    }
    /// The one tag registry: id → `TagIndex`.
    var registry = TagRegistry()
    /// Per tag index.
    var tags: [TagState] = []
    /// A partition of the tags (`setPartition`): this engine solves the tags whose index (order of
    /// first appearance) is `partitionIndex` mod `partitionCount`, and only observes the others' rows.
    var partitionCount = 1, partitionIndex = 0
    /// Per observed tag, its latest admitted time (the epoch table keeps it for solved tags).
    var observedLatestSeconds: [Double] = []
    /// Each tag's common range offset estimator (nil when `tagRangeOffset` does not apply to its
    /// floor). Kept out of `TagState`: the estimator holds its shared settings by reference.
    var offsets: [TagRangeOffsetEstimator?] = []
    /// Each tag's per-locator range bias estimator (nil when the engine estimates none for its floor:
    /// `EngineConfiguration.locatorBias`, on floors where the tag offset is estimated).
    var locatorBiases: [TagLocatorBiasEstimator?] = []
    /// The per-locator corrections each tag's ranges are corrected by (metres; 0 without an estimate):
    /// `locatorCorrections[tag * locatorStride + slot]`, refreshed from `locatorBiases[tag]` when it
    /// changes them (once per consistency window). Flat, so that the per-row read is one load; `Float`,
    /// as the estimator keeps them (exact as `Double`; 32 bytes a tag on an 8-locator floor).
    var locatorCorrections: [Float] = []
    /// The widest floor's locator count: the stride of `locatorCorrections`.
    let locatorStride: Int
    /// The correction (tag offset + locator bias, metres) the engine took out of the last range row
    /// that reached an epoch (0 when it estimates neither for the row's tag); nil for a row that did not
    /// (the smoother takes each range as the causal engine corrected it: `EngineDriver.record`).
    var lastRangeCorrectionMeters: Double?
    /// Each tag's filter (tracking only; empty for raw fixes), a placeholder until `hasFilter`. Kept
    /// out of `TagState` so that the per-row state stays small; non-optional, because mutating
    /// through an optional array element copied the filter out and back.
    var filters: [TrackFilter] = []
    /// Every tag's open epoch and when it is due.
    var schedule: EpochScheduler
    /// Per tag: the tag whose round opened right after this tag's latest round opened (−1: none
    /// yet), and the tag whose round opened last — where the stream will probably go next
    /// (`PositioningEngine+Prefetch.swift`).
    var nextToOpen: [Int32] = []
    var lastOpened = -1
    /// Fixes waiting for release.
    var reorder = ReorderBuffer()
    /// The bound on live tags and the idle queue (nil: unbounded; `PositioningEngine+Eviction.swift`).
    var eviction: TagEviction?

    /// The floor most recently resolved by `ingest(_:)` (in front of `Site.floorIndex(of:)`).
    private var lastFloorID: FloorID?
    private var lastFloorIndex = 0
    /// The filter settings (meaningful when `isTracking`), taken out of `configuration` once.
    let sharedFilterConfiguration: TrackFilterConfiguration.Shared
    let isTracking: Bool
    let isTight: Bool
    /// Per floor: whether it is solved in the plane (where the filter runs). A flag, not an enum
    /// compare per range (that went through `Equatable`'s witness).
    let floorIsPlanar: [Bool]
    /// Whether tags on floors solved in 3-D are tracked (`spatialTracks`): tracking is on and the site
    /// has such a floor.
    let tracksSpatialFloors: Bool
    /// Each tag's 3-D track for floors solved in 3-D (`PositioningEngine+Spatial.swift`); empty unless
    /// `tracksSpatialFloors`.
    var spatialTracks: [SpatialTrack] = []
    /// Per floor: whether the engine estimates a per-tag range offset there.
    let floorEstimatesOffset: [Bool]
    /// The per-locator bias settings (nil: not estimated), for floors that estimate the tag offset.
    let locatorBiasConfiguration: TagLocatorBiasConfiguration.Shared?
    /// The per-locator bias estimator's settings on floors solved in 3-D (`spatialLocatorBias`), and
    /// the floors whose tags learn biases that way: tracked, solved in 3-D, no biasM stated, 4 to
    /// `maximumLocators` locators, `--locator-bias auto`.
    let spatialLocatorBiasConfiguration: TagLocatorBiasConfiguration.Shared?
    let floorLearnsSpatialBiases: [Bool]

    /// Zone judges, one per floor, sharing the clock; their released events wait there until a
    /// release or an advance flushes them to `events`.
    var judges: FloorJudges
    /// The latest time seen (rows and advances): the stream's clock.
    package private(set) var clockSeconds = -Double.infinity
    /// The clock fixes are released by: the clock less `EngineConfiguration.releaseLatenessSeconds`
    /// (0 but on a live stream given `--max-lag`).
    var releaseClockSeconds: Double { clockSeconds - configuration.releaseLatenessSeconds }
    /// The latest time the output has reached: released fixes and the judges' advances. A fix released
    /// earlier than this is late (`EngineDiagnostics.lateFixes`).
    var releasedThroughSeconds = -Double.infinity
    private(set) var hasFinished = false

    // Scratch for one epoch, sized to the widest floor.
    var scratchLocators: [Point3]
    var scratchRanges: [Double]
    /// The filter's share of an epoch (`applyPendingRanges`): range times and locator addresses.
    var scratchTimes: [Double]
    var scratchAddresses: [LocatorAddress]
    /// The floor slots of an epoch's gathered ranges (`updateLocatorBiases`).
    var scratchBiasSlots: [Int32]
    /// The least-squares search's scratch beyond 64 locators, sized for the widest floor.
    var workspace: TrilaterationWorkspace
    /// Every tag's open epoch's range differences, and the scratch of a difference epoch's solve
    /// (`PositioningEngine+Differences.swift`): grown to the widest epoch, then reused.
    var differenceEpochs = DifferenceEpochs()
    var scratchDifferenceLocators: [Point3] = []
    var scratchSlots: [Int] = []
    var scratchPairs: [DifferencePair] = []
    /// The pairs the least-squares fix solves: the newest of each locator pair (`DifferenceEpochs.latestOfEachPair`).
    var scratchLatestPairs: [DifferencePair] = []
    var scratchDifferenceAddresses: [LocatorAddress] = []
    var differenceWorkspace = DifferenceWorkspace()

    /// Fixes released so far, in (time, tag) order. Take them with `drainFixes()`/`takeFixes(_:)`.
    package internal(set) var fixes: [PositionFix] = []
    /// The tag index of each of `fixes` (`fixTags[k]` is `fixes[k]`'s): a caller keying fixes by tag
    /// needs no lookup by id (`ShardedEngine`).
    var fixTags: [Int32] = []
    /// Zone events released so far, in SPEC §4.7 order. Take them with `drainEvents()`/`takeEvents(_:)`.
    package internal(set) var events: [ZoneEvent] = []
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
        if let limit = configuration.tagLimit {
            try Self.validate(limit)
            eviction = TagEviction(limit: limit, rateHertz: configuration.rateHertz)
        }
        guard configuration.releaseLatenessSeconds >= 0, configuration.releaseLatenessSeconds <= 3600 else {
            throw LocusError(.invalidArgument, "the release lateness must be 0 to 3600 s, not \(configuration.releaseLatenessSeconds)")
        }
        self.configuration = configuration
        self.site = site
        defaultFloor = FloorIndex(try site.floorIndex(configuration.defaultFloor))
        let widest = max(1, site.floors.map(\.locators.count).max() ?? 1)
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
        tracksSpatialFloors = isTracking && floorIsPlanar.contains(false)
        // The spatial track takes each range at its own time, whatever the coupling.
        schedule = EpochScheduler(stride: widest, rateHertz: configuration.rateHertz, keepsRangeTimes: isTight || tracksSpatialFloors)
        offsetConfigurations = floors.map { f in
            guard f.mode == .planar else { return nil }
            switch configuration.tagRangeOffset {
            case .off: return nil
            case .on(let c): return TagRangeOffsetConfiguration.Shared(c)
            case .automatic(let c): return f.isUncalibrated ? TagRangeOffsetConfiguration.Shared(c) : nil
            }
        }
        floorEstimatesOffset = offsetConfigurations.map { $0 != nil }
        if case .automatic(let c) = configuration.locatorBias {
            locatorBiasConfiguration = TagLocatorBiasConfiguration.Shared(c)
            spatialLocatorBiasConfiguration = TagLocatorBiasConfiguration.Shared(c.spatial)
        } else {
            locatorBiasConfiguration = nil
            spatialLocatorBiasConfiguration = nil
        }
        let spatialLimit = spatialLocatorBiasConfiguration?.value.maximumLocators ?? 0, tracking = isTracking
        floorLearnsSpatialBiases = floors.map { f in
            tracking && f.mode != .planar && f.isUncalibrated && f.positions.count >= 4 && f.positions.count <= spatialLimit
        }
        locatorStride = widest
        judges = try FloorJudges(floors: site.floors, options: ZoneJudgeOptions(positionPeriodSeconds: 1 / configuration.rateHertz))
        scratchLocators = [Point3](repeating: Point3(x: 0, y: 0, z: 0), count: widest)
        scratchRanges = [Double](repeating: 0, count: widest)
        scratchTimes = [Double](repeating: 0, count: widest)
        scratchAddresses = [LocatorAddress](repeating: LocatorAddress(0), count: widest)
        scratchBiasSlots = [Int32](repeating: 0, count: widest)
        workspace = TrilaterationWorkspace(capacity: widest)
    }

    // MARK: input

    /// Ingests one range measurement. Rows that can't be used are counted in
    /// `diagnostics.skipped` (unknown floor, unknown anchor, negative or non-finite values, time
    /// going backwards for the tag, a new tag beyond the tag limit); none throws.
    package mutating func ingest(_ m: RangeMeasurement, line: Int = 0) {
        guard let tag = admittedTagIndex(for: m.tag, line: line) else { return }
        let floor: FloorIndex
        if let id = m.floor {
            if let last = lastFloorID, last == id {
                floor = FloorIndex(lastFloorIndex)
            } else {
                guard let f = site.floorIndex(of: id) else { diagnostics.skipped.record(.unknownFloor, line: line); return }
                lastFloorID = id
                lastFloorIndex = f.rawValue
                floor = f
            }
        } else {
            floor = defaultFloor
        }
        ingest(tag: tag, floor: floor, locator: m.locator.rawValue, rangeMeters: m.rangeMeters, timeSeconds: m.timeSeconds, line: line)
    }

    /// The fast path of `ingest(_:)` for callers that registered the tag (`tagIndex(for:)`) and
    /// resolved the floor (`site.floorIndex(of:)`) once per id.
    package mutating func ingest(tag tagIndex: TagIndex, floor floorIndex: FloorIndex, locator address: UInt16,
                                 rangeMeters range: Double, timeSeconds t: Double, line: Int = 0) {
        guard !hasFinished else { return }
        lastRangeCorrectionMeters = nil
        let tag = tagIndex.rawValue, floor = floorIndex.rawValue
        // Finite as plain compares (NaN fails them).
        guard abs(t) <= .greatestFiniteMagnitude, abs(range) <= .greatestFiniteMagnitude else {
            diagnostics.skipped.record(.nonFinite, line: line); return
        }
        guard range >= 0 else { diagnostics.skipped.record(.negativeRange, line: line); return }
        guard let slot = floors[floor].slot(of: address) else { diagnostics.skipped.record(.unknownAnchor, line: line); return }
        guard range <= configuration.maximumRangeMeters else { diagnostics.skipped.record(.rangeTooLong, line: line); return }
        guard var closed = admit(tag, floor: floor, atSeconds: t, line: line) else { return }
        if tags[tag].hasOffset {
            // Written only when it changes (twice a round when ranging in rounds; never once saturated).
            let spaced = tags[tag].spacedRanges(afterGapSeconds: t - schedule.epochs.latestAdmittedSeconds(tag))
            if spaced != tags[tag].spacedRanges { tags[tag].spacedRanges = spaced }
        } else if floorEstimatesOffset[floor] {
            startOffset(tag, floor: floor)
        }
        // An open epoch of differences is solved before a range joins the tag (one kind an epoch).
        if tags[tag].holdsDifferences || schedule.epochs.closes(tag, at: t) {
            closeEpoch(tag)
            closed = true
        }
        // The range without the tag's offset and the locator's bias (the filter refuses a negative
        // one; the epoch keeps it clamped at 0).
        let correction = tags[tag].offsetMeters + Double(locatorCorrections[tag &* locatorStride &+ slot])
        lastRangeCorrectionMeters = correction
        let corrected = floors[floor].locators[slot].correctedRange(range - correction)
        // The tightly coupled filter takes the epoch's ranges when it closes (`applyPendingRanges`): the
        // epoch table holds them until then. Except a range the table cannot hold for it — the locator's
        // second in the epoch (it replaces the first) or a negative one (kept as 0) —: `addOutOfTurn`.
        var outOfTurn = false
        if isTracking, floorIsPlanar[floor] {
            if !tags[tag].hasFilter { startFilter(tag, floor: floor) }
            outOfTurn = isTight && (!(corrected >= 0) || schedule.epochs.rangeMeters(tag, slot: slot) >= 0)
        }
        // A straggler of the tag's last round, solved as complete before it came, joins no epoch: it is
        // skipped as late, never a fix of its own (`EpochTable.add`, issue #41 item 5).
        // `add` says so (`.late`) only for a range that would open an epoch: one compare per row, as
        // for an opening one.
        let added = outOfTurn
            ? addOutOfTurn(tag, floor: floor, slot: slot, correctedRangeMeters: corrected, timeSeconds: t)
            : schedule.add(tag, slot: slot, rangeMeters: max(0, corrected), timeSeconds: t)
        if added != .joined {
            guard added == .opened else { skipLateRange(line: line, closed: closed); return }
            roundOpened(tag, floor: floor)
        }
        // A round that is complete (every locator the tag's rounds usually hold has reported) is
        // solved now, not a pause later (`EpochTable`: same ranges, same time, less latency).
        if schedule.epochs.isComplete(tag) {
            closeEpoch(tag)
            closed = true
        }
        if closed { release() }
    }

    /// The steps every checked row of tag `tag` on `floor` at `t` takes before it joins an epoch (a
    /// range or a difference): another partition's tag is only observed, the tag's clock may refuse
    /// the row (counted), the engine's clock moves to `t`, and a tag on another floor moves there
    /// (its open epoch solved on the old one). Returns nil when the row goes no further, else whether
    /// an epoch was closed (the caller releases then).
    @inline(__always)
    mutating func admit(_ tag: Int, floor: Int, atSeconds t: Double, line: Int) -> Bool? {
        if partitionCount > 1, tag % partitionCount != partitionIndex {
            observe(tag: tag, timeSeconds: t, line: line)
            return nil
        }
        // The tag's clock: its latest admitted time is the epoch table's (every admitted row is added
        // there, which records it), so the usual row is admitted by reading, not writing, `tags`.
        let latest = schedule.epochs.latestAdmittedSeconds(tag)
        if !tags[tag].clock.admitsDirectly(t, after: latest), let reason = refusal(tag, atSeconds: t, after: latest) {
            diagnostics.skipped.record(reason, line: line)
            return nil
        }
        advanceClock(to: t)
        // `advanceClock` released what the clock allows; only closing this tag's epoch here (which
        // parks its fix and can lift the watermark) may release more. Opening an epoch at t (the
        // clock) cannot: the watermark is min(clock, open epochs' starts).
        if tags[tag].floorIndex != floor {
            moveTag(tag, toFloor: floor)
            return true
        }
        return false
    }

    /// Moves the clock to `t` (a timer tick, or implicitly each row's time): solves every open epoch
    /// that no later range can join, releases the fixes that can no longer be preceded, and lets
    /// the zone judges emit what became final (a tag that stopped reporting exits this way).
    /// Amortised O(1) per closed epoch when rows come in time order (O(log epochs) for the rare
    /// out-of-order one: `RunQueue`).
    package mutating func advance(toSeconds t: Double) {
        guard !hasFinished, t.isFinite else { return }
        advanceClock(to: t)
        evictIdleTagsIfDue()
        // No fix still to come is earlier than the watermark (every earlier one was released just
        // now): the judges' clocks can move there too, so that a zone's tags that all fell silent
        // still leave it on time (with fixes flowing, released fixes move them).
        let watermark = schedule.watermark(clock: releaseClockSeconds)
        guard watermark.isFinite, reorder.isEmpty || reorder.earliestSeconds! >= watermark else { return }
        advanceJudges(toSeconds: watermark)
    }

    /// `advance(toSeconds:)` for a finite t (inlined in `ingest`: most rows only move the clock).
    @inline(__always)
    mutating func advanceClock(to t: Double) {
        guard t > clockSeconds else { return }
        clockSeconds = t
        // Most rows close no epoch and release no fix: two compares, no call.
        if schedule.mayBeDue(at: t) {
            closeDueEpochs(at: t)
        } else if let first = reorder.earliestSeconds, first < releaseClockSeconds, !schedule.isKnownHeld(first) {
            release()
        }
    }

    /// `advanceClock`'s rare part: closes the epochs due at t (the clock), then releases.
    @inline(never)
    private mutating func closeDueEpochs(at t: Double) {
        while let tag = schedule.nextDue(at: t) { closeEpoch(tag) }
        release()
    }

    /// Ends the stream: solves every epoch still open, releases every fix, and ends zone judgement
    /// with the clock at the latest time seen (no synthetic exit, SPEC §4.6). Further input is ignored.
    package mutating func finish() {
        guard !hasFinished else { return }
        for i in tags.indices { closeEpoch(i, learning: false) }
        release(all: true)
        judges.finish(clockSeconds: clockSeconds)
        judges.flush(into: &events)
        hasFinished = true
    }

    // MARK: release

    /// Releases the fixes no open epoch can precede (time < min(clock, earliest open epoch start)),
    /// or all of them, to `fixes` and the zone judges.
    mutating func release(all: Bool = false) {
        // Most rows release nothing: no parked fix, or the earliest is not before the clock.
        guard let first = reorder.earliestSeconds, all || first < releaseClockSeconds else { return }
        let watermark = schedule.watermark(clock: releaseClockSeconds)
        var released = false
        while let r = reorder.releaseEarliest(before: watermark, all: all, into: &fixes) {
            noteRelease(atSeconds: fixes[fixes.count - 1].timeSeconds)  // (the fix it just appended)
            fixTags.append(Int32(truncatingIfNeeded: r.tag))
            try? judges.judge(r.zoneFix, tag: TagIndex(r.tag), floor: r.floor)
            released = true
        }
        if released { judges.flush(into: &events) }
    }

    /// A fix at t leaves: counted late when the output has already passed t (a tag's rows that came
    /// after the clock had moved on, without `--max-lag` enough to wait for them: the zone judges
    /// then judge it at their clock), else the output's time moves to t.
    @inline(__always)
    mutating func noteRelease(atSeconds t: Double) {
        if t < releasedThroughSeconds { diagnostics.lateFixes += 1 } else { releasedThroughSeconds = t }
    }

    /// A freshly closed epoch's fix (its epoch already reset): released at once when nothing is
    /// parked and no open epoch can still produce an earlier fix (time < the watermark) — the usual
    /// case, and exactly what parking it and releasing would do —, parked otherwise.
    mutating func deliver(_ fix: consuming PositionFix, tag: Int, floor: Int) {
        if reorder.isEmpty, fix.timeSeconds < schedule.watermark(clock: releaseClockSeconds) {
            let judged = ZoneFix(timeSeconds: fix.timeSeconds, tag: fix.tag, point: fix.position.horizontal)
            noteRelease(atSeconds: fix.timeSeconds)
            fixes.append(consume fix)
            fixTags.append(Int32(truncatingIfNeeded: tag))
            try? judges.judge(judged, tag: TagIndex(tag), floor: floor)
            judges.flush(into: &events)
            return
        }
        reorder.park(fix, tag: tag, floor: floor)
    }

    /// Moves every zone judge's clock to `t`, as releasing a fix at `t` would (for a `ShardedEngine`:
    /// a fix of another shard's tag was let out at `t`).
    mutating func advanceJudges(toSeconds t: Double) {
        guard !hasFinished, t.isFinite else { return }
        if t > releasedThroughSeconds { releasedThroughSeconds = t }
        try? judges.advance(toSeconds: t)
        judges.flush(into: &events)
    }
}
