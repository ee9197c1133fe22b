import LocusCore
import LocusSolvers

// The engine's rare steps: new tags, a tag changing floor, offset estimators and filters started,
// ready fixes from a provider, the default floor switched. Out of line, so that the per-range path
// stays small (a 1 KB filter built inline made every call reserve and spill around it).
extension PositioningEngine {
    /// The index of `tag`, registering it (on the default floor) when new. The tag limit does not
    /// apply here (an engine with one is fed by id: `ingest(_:line:)`, which applies it).
    package mutating func tagIndex(for tag: TagID) -> TagIndex {
        let (index, isNew) = registry.register(tag)
        if isNew { addTag(tag) }
        return index
    }

    /// The per-tag state of a newly registered tag (at index `tags.count`).
    @inline(never)
    mutating func addTag(_ tag: TagID) {
        tags.append(TagState(floorIndex: defaultFloor.rawValue))
        offsets.append(nil)
        locatorBiases.append(nil)
        locatorCorrections.append(contentsOf: repeatElement(0, count: locatorStride))
        nextToOpen.append(-1)
        schedule.appendTag()
        differenceEpochs.appendTag()
        if isTracking {
            let floor = floors[defaultFloor.rawValue].floor
            filters.append(TrackFilter(shared: sharedFilterConfiguration, tag: tag, floor: floor.id, tagHeightMeters: floor.tagHeightMeters))
        }
        if tracksSpatialFloors { spatialTracks.append(SpatialTrack(shared: sharedFilterConfiguration)) }
    }

    /// The number of tags seen so far.
    package var tagCount: Int { tags.count }

    /// Makes `floor` the floor of rows that name none (a floor switch while running). Tags keep their
    /// state; a tag whose next row lands on another floor closes its open epoch on the old floor
    /// first (see `ingest`).
    mutating func setDefaultFloor(_ floor: FloorIndex) {
        precondition(floors.indices.contains(floor.rawValue), "setDefaultFloor: no floor \(floor.rawValue)")
        defaultFloor = floor
    }

    /// The tag changed floor: what it gathered on the old floor is solved there first, and its
    /// filter and offset start afresh on the new one.
    @inline(never)
    mutating func moveTag(_ tag: Int, toFloor floor: Int) {
        closeEpoch(tag)
        schedule.forgetRounds(tag)
        tags[tag].floorIndex = floor
        differenceEpochs.forgetPosition(tag)  // (a warm start of the old floor's is none here)
        tags[tag].hasFilter = false
        if tracksSpatialFloors { spatialTracks[tag].dropTrack() }
        tags[tag].hasOffset = false
        tags[tag].offsetMeters = 0
        offsets[tag] = nil
        clearLocatorBiases(tag)
    }

    /// Gives the tag a fresh offset estimator for `floor` (which estimates one).
    @inline(never)
    mutating func startOffset(_ tag: Int, floor: Int) {
        guard let c = offsetConfigurations[floor] else { return }
        offsets[tag] = TagRangeOffsetEstimator(shared: c)
        tags[tag].hasOffset = true
        tags[tag].offsetMeters = 0
        clearLocatorBiases(tag)
        if let b = locatorBiasConfiguration {
            locatorBiases[tag] = TagLocatorBiasEstimator(locatorCount: floors[floor].positions.count, shared: b)
        }
    }

    /// Forgets tag `tag`'s per-locator biases (none estimated, none applied).
    mutating func clearLocatorBiases(_ tag: Int) {
        locatorBiases[tag] = nil
        for s in 0..<locatorStride { locatorCorrections[tag &* locatorStride &+ s] = 0 }
    }

    /// Gives the tag a fresh filter on `floor`.
    @inline(never)
    mutating func startFilter(_ tag: Int, floor: Int) {
        filters[tag] = TrackFilter(shared: sharedFilterConfiguration, tag: registry.ids[tag], floor: floors[floor].floor.id,
                                   tagHeightMeters: floors[floor].floor.tagHeightMeters)
        tags[tag].hasFilter = true
    }

    /// The common range offset (metres) the engine takes out of tag `tag`'s ranges now and the floor
    /// it applies to, or nil when it takes none out: it estimates none for the tag (see
    /// `EngineConfiguration.tagRangeOffset`) or does not trust its estimate yet or any more
    /// (`TagRangeOffsetEstimator.correctionMeters`).
    func tagRangeOffset(_ tag: TagID) -> (floor: FloorIndex, offsetMeters: Double)? {
        guard let i = registry.index(of: tag)?.rawValue, tags[i].hasOffset, offsets[i]?.isTrusted == true else { return nil }
        return (FloorIndex(tags[i].floorIndex), tags[i].offsetMeters)
    }

    /// The range variance (m²) tag `tag`'s causal filter takes its ranges with now
    /// (`TrackFilter.rangeVarianceSquareMeters`: σ_r², or less where its innovations showed less), or nil
    /// when the tag has no filter (raw fixes, or evicted).
    func filterRangeVariance(_ tag: TagID) -> Double? {
        guard let i = registry.index(of: tag)?.rawValue, tags[i].hasFilter else { return nil }
        return filters[i].rangeVarianceSquareMeters
    }

    /// Feeds tag `tag`'s open epoch — its first `n` ranges gathered in the scratch arrays, already
    /// corrected by the current correction `offsetMeters` — to its offset estimator, and refreshes
    /// that correction: the estimate once the estimator trusts it, 0 before and after it finds it
    /// inconsistent with the ranges (`TagRangeOffsetEstimator`, "Consistency"). No allocation.
    ///
    /// The estimator linearises the epoch once at a seed near its solution (`TagRangeOffsetEstimator`):
    /// `leastSquares`, the epoch's own least-squares position (raw and loosely coupled tracking: the
    /// same ranges, solved just before), or else the tightly coupled filter's tracked position; with
    /// neither it iterates Gauss–Newton from its last solution (about twice the work of a seeded
    /// fix: docs/benchmarks.md, "Figures behind the code").
    mutating func updateOffset(_ tag: Int, count n: Int, floorIndex: Int, timeSeconds time: Double,
                               leastSquares: Point3? = nil) {
        let h = floors[floorIndex].floor.tagHeightMeters
        // The tracked position (tightly coupled filter) is within centimetres of the epoch's solution.
        // (The stored fields, not `meanAtLastUpdate`: a computed property of an array element had the
        // whole filter copied out.)
        let seed: Point2?
        if let p = leastSquares {
            seed = Point2(x: p.x, y: p.y)
        } else if isTight && tags[tag].hasFilter && filters[tag].isTracking {
            let mean = filters[tag].lastMean
            seed = Point2(x: mean.px, y: mean.py)
        } else {
            seed = nil
        }
        let applied = tags[tag].offsetMeters
        // A round robin's ranges were fed in cycles as the tight filter took them (`filterTook`); an
        // epoch of fewer ranges than an epoch needs (a round of a tag ranging in rounds that lost most
        // of its ranges) joins the filter's latest cycle instead.
        if isTight, tags[tag].hasFilter, let needed = offsets[tag]?.configuration.rangesNeeded {
            if tags[tag].isRoundRobin(needed) { return }
            if n < needed {
                feedCycle(tag, taken: n)
                return
            }
        }
        var epoch: TagRangeOffsetEstimator.EpochSolution? = nil
        let offset = scratchLocators.withUnsafeBufferPointer { lp in
            scratchRanges.withUnsafeBufferPointer { rp in
                offsets[tag]?.updatedCorrectionMeters(locators: UnsafeBufferPointer(rebasing: lp[0..<n]).span,
                                                      rangesMeters: UnsafeBufferPointer(rebasing: rp[0..<n]).span,
                                                      tagHeightMeters: h, timeSeconds: time, seed: seed, lessOffsetMeters: applied,
                                                      epoch: &epoch)
            }
        }
        tags[tag].offsetMeters = offset ?? 0
        if let epoch, locatorBiases[tag] != nil { updateLocatorBiases(tag, count: n, epoch: .planar(epoch, tagHeightMeters: h)) }
    }

    /// After tag `tag`'s tightly coupled filter took `count` ranges: a round robin's offset estimator
    /// takes them, a polling cycle at a time (`TagRangeOffsetEstimator.updatedCorrectionMeters(cycleOf:…)`),
    /// and the correction of the tag's next ranges follows it. Nothing for a tag ranging in rounds
    /// (its estimator takes each epoch when it closes: `updateOffset`).
    @inline(__always)
    mutating func filterTook(_ tag: Int, ranges count: Int) {
        // (Every estimator needs 4 ranges or more: a tag ranging in rounds stops at the first compare.)
        guard tags[tag].hasOffset, tags[tag].isRoundRobin(4), let needed = offsets[tag]?.configuration.rangesNeeded,
              tags[tag].isRoundRobin(needed) else { return }
        feedCycle(tag, taken: count)
    }

    /// Tag `tag`'s offset estimator takes `taken` more ranges of the tight filter's polling cycle
    /// (`TagRangeOffsetEstimator.updatedCorrectionMeters(cycleOf:…)`), and the tag's correction follows it.
    private mutating func feedCycle(_ tag: Int, taken: Int) {
        let h = floors[tags[tag].floorIndex].floor.tagHeightMeters, applied = tags[tag].offsetMeters
        if let offset = offsets[tag]?.updatedCorrectionMeters(cycleOf: &filters[tag], taken: taken, tagHeightMeters: h,
                                                             lessOffsetMeters: applied) {
            tags[tag].offsetMeters = offset
        }
    }

    /// What a per-locator bias estimator learns an epoch at: the offset estimator's (x, y, b) solution of
    /// a planar epoch (tag at `tagHeightMeters`), or the 3-D track's position after an epoch of a floor
    /// solved in 3-D.
    enum BiasEpoch {
        case planar(TagRangeOffsetEstimator.EpochSolution, tagHeightMeters: Double)
        case spatial(Point3)
    }

    /// Teaches tag `tag`'s per-locator bias estimator the epoch whose `n` ranges are in the scratch
    /// arrays, at `epoch`, and refreshes the tag's corrections when it changed them. No allocation (the
    /// slots go through the scratch array).
    mutating func updateLocatorBiases(_ tag: Int, count n: Int, epoch: BiasEpoch) {
        for k in 0..<n { scratchBiasSlots[k] = Int32(truncatingIfNeeded: schedule.epochs.presentSlot(tag, k)) }
        let changed = scratchLocators.withUnsafeBufferPointer { lp in
            scratchRanges.withUnsafeBufferPointer { rp in
                scratchBiasSlots.withUnsafeBufferPointer { sp in
                    let locators = UnsafeBufferPointer(rebasing: lp[0..<n]).span, ranges = UnsafeBufferPointer(rebasing: rp[0..<n]).span
                    let slots = UnsafeBufferPointer(rebasing: sp[0..<n]).span
                    switch epoch {
                    case .planar(let solution, let h):
                        return locatorBiases[tag]?.update(locators: locators, rangesMeters: ranges, slots: slots, position: solution.position,
                                                          offsetMeters: solution.offsetMeters, droppedMask: solution.droppedMask,
                                                          tagHeightMeters: h) ?? false
                    case .spatial(let position):
                        return locatorBiases[tag]?.update(spatialLocators: locators, rangesMeters: ranges, slots: slots,
                                                          position: position) ?? false
                    }
                }
            }
        }
        if changed { refreshLocatorCorrections(tag) }
    }

    /// Teaches tag `tag`'s per-locator bias estimator one epoch of floor `floor` (solved in 3-D), whose
    /// `n` ranges are in the scratch arrays, linearised at the tag's 3-D track after them (`position`);
    /// the estimator is made at the tag's first such epoch (the one allocation).
    mutating func updateSpatialLocatorBiases(_ tag: Int, floor: Int, count n: Int, position: Point3) {
        if locatorBiases[tag] == nil, let shared = spatialLocatorBiasConfiguration {
            locatorBiases[tag] = TagLocatorBiasEstimator(locatorCount: floors[floor].positions.count, shared: shared)
        }
        updateLocatorBiases(tag, count: n, epoch: .spatial(position))
    }

    /// Copies tag `tag`'s estimator's corrections into `locatorCorrections` (what `ingest` subtracts).
    private mutating func refreshLocatorCorrections(_ tag: Int) {
        guard let estimator = locatorBiases[tag] else { return }
        for s in 0..<min(locatorStride, estimator.locatorCount) {
            locatorCorrections[tag &* locatorStride &+ s] = Float(estimator.correctionMeters(slot: s))
        }
    }

    /// Takes a ready position (from a provider that positions by itself) as if the engine had
    /// computed it: it moves the clock to its time, waits in the reorder buffer and is judged
    /// against the zones of its floor. A fix on an unknown floor or with a non-finite time or
    /// position is skipped and counted.
    mutating func ingest(fix: PositionFix) {
        guard !hasFinished else { return }
        guard let floor = site.floorIndex(of: fix.floor) else { diagnostics.skipped.record(.unknownFloor, line: 0); return }
        guard fix.timeSeconds.isFinite, fix.position.isFinite else { diagnostics.skipped.record(.nonFinite, line: 0); return }
        guard let tag = admittedTagIndex(for: fix.tag, line: 0)?.rawValue else { return }
        if let reason = refusal(tag, atSeconds: fix.timeSeconds, after: schedule.epochs.latestAdmittedSeconds(tag)) {
            diagnostics.skipped.record(reason, line: 0); return
        }
        schedule.admit(tag, atSeconds: fix.timeSeconds)
        advance(toSeconds: fix.timeSeconds)
        reorder.park(fix, tag: tag, floor: floor.rawValue)
        release()
    }

    // MARK: partitions

    /// The index of tag `id` in order of first appearance, or nil when no row named it yet.
    package func registeredTagIndex(_ id: TagID) -> TagIndex? { registry.index(of: id) }

    /// Makes this engine one of `count` partitions of the tags (`index` in 0..<count): it solves
    /// and judges the tags whose index of first appearance is `index` mod `count`; the rows of the
    /// others are checked and counted as always and move the clock, nothing more. Fed the whole
    /// stream, each partition gives the single engine's positions and events restricted to its tags
    /// — every row moves the clock as in the single engine, and a tag's output depends on its own
    /// rows and the clock (`ShardedEngine`'s argument); merged by (time, tag index) and in SPEC
    /// §4.7 order they are the single engine's bytes (an archive replayed on a cluster, a partition
    /// per task). Every partition counts each skipped row as the single engine does, except a round's
    /// straggler (`late_range`): only the tag's own partition keeps its rounds and counts it, so those
    /// counts add up over the partitions (`partitionOwnedSkips`). Call before the first row.
    /// - Throws: `E1003` for a bad partition, `E1002` once a row was ingested.
    mutating func setPartition(index: Int, count: Int) throws(LocusError) {
        guard count >= 1, index >= 0, index < count else {
            throw LocusError(.invalidArgument, "partition \(index) of \(count): need 0 ≤ index < count")
        }
        guard eviction == nil else {
            throw LocusError(.invalidArgument, "an engine with a tag limit is not partitioned (its indices are recycled)")
        }
        guard clockSeconds == -.infinity, diagnostics.skipped.total == 0 else {
            throw LocusError(.callOrder, "the partition is set before the first row")
        }
        partitionIndex = index
        partitionCount = count
    }

    /// The skip reasons only a tag's own partition counts (`setPartition`): a round's straggler is
    /// told from the tag's rounds, which only that partition keeps. Over the partitions of one run
    /// these counts add up; every other reason each partition counts as the single engine does
    /// (`PartitionSummaries`, `locus_merge_summaries`).
    package static let partitionOwnedSkips: Set<SkipReason> = [.lateRange]

    /// A row of a tag of another partition: its admission (the tag's clock) and the engine's clock,
    /// as `ingest` does, without the epoch.
    @inline(never)
    mutating func observe(tag: Int, timeSeconds t: Double, line: Int) {
        while observedLatestSeconds.count <= tag { observedLatestSeconds.append(-.infinity) }
        let latest = observedLatestSeconds[tag]
        if !tags[tag].clock.admitsDirectly(t, after: latest),
           let reason = tags[tag].clock.admit(t, after: latest) {
            diagnostics.skipped.record(reason, line: line); return
        }
        observedLatestSeconds[tag] = max(latest, t)
        advanceClock(to: t)
    }
}

extension PositioningEngine.TagState {
    /// Ranges at least this far apart are a round robin's, seconds: a tag ranging in rounds takes a
    /// round's ranges within milliseconds of each other (CUHK-SZ: the same time stamp, Hanyang: 1 ms),
    /// a round robin one every slot (libRSF: 128 ms).
    static let roundRobinGapSeconds = 0.01

    /// Whether the tag ranges one locator at a time: its latest `needed` ranges (the offset
    /// estimator's `rangesNeeded`, and more) each came `roundRobinGapSeconds` or more after the one
    /// before. A tag ranging in rounds is never one: the second range of each round resets the count.
    @inline(__always)
    func isRoundRobin(_ needed: Int) -> Bool { Int(spacedRanges) >= needed }

    /// `spacedRanges` after one more range of the tag, `gap` seconds after its previous one (+∞ for
    /// its first): one more (saturating), or 0.
    @inline(__always)
    func spacedRanges(afterGapSeconds gap: Double) -> UInt8 {
        gap >= Self.roundRobinGapSeconds ? spacedRanges &+ (spacedRanges < .max ? 1 : 0) : 0
    }
}
