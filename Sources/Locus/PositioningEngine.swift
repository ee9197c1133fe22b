import LocusCore
import LocusSolvers

/// The synchronous, deterministic multi-tag core: ranges in, position fixes out.
///
/// Per tag it keeps an `EpochAssembler` on the tag's floor (and, when tracking, a `TrackFilter`).
/// Each range is checked (known floor, known locator), has its locator's `biasM` taken out
/// (rᵢ ← max(0, rᵢ − bᵢ)) and joins the tag's open epoch; when a range closes the epoch (pause or
/// period, see `EpochAssembler`), the epoch gives one fix at the epoch's time:
/// - `tracking: .none`: the floor's `Trilaterator` solves the epoch's ranges;
/// - `.kalman` tightly coupled: every range has already updated the tag's filter at its own
///   timestamp; the fix is the filter's state at the epoch time;
/// - `.kalman` loosely coupled: the epoch's least-squares fix updates the filter first.
/// The output schedule is therefore the same with and without the filter. Epochs that cannot be
/// solved (too few locators, degenerate geometry) are counted in `diagnostics` by code; they never
/// throw and never produce a NaN. `finish()` solves the epochs still open at the end of a stream.
///
/// Solving reuses engine-owned buffers: in steady state an epoch costs no allocation beyond the
/// growth of the output array.
package struct PositioningEngine: Sendable {
    package let configuration: EngineConfiguration
    package let floors: [FloorContext]
    private let defaultFloorIndex: Int
    private var floorIndexByID: [FloorID: Int] = [:]
    /// Per floor: the offset settings when the engine estimates a per-tag range offset there.
    private let offsetConfigurations: [TagRangeOffsetConfiguration?]

    private struct TagState: Sendable {
        var id: TagID
        var floorIndex: Int
        var assembler: EpochAssembler
        /// The tag's causal filter (tracking on a planar floor), created on the tag's first range.
        var filter: TrackFilter?
        /// Time of the tag's latest accepted range.
        var lastTimeSeconds = -Double.infinity
        /// The tag's common range offset estimate, when `tagRangeOffset` applies to its floor.
        var offset: TagRangeOffsetEstimator? = nil
    }
    private var tags: [TagState] = []
    private var tagIndexByID: [TagID: Int] = [:]

    // Scratch for one epoch, sized to the largest floor.
    private var scratchLocators: [Point3]
    private var scratchRanges: [Double]
    private var workspace = TrilaterationWorkspace()

    /// Fixes produced so far, in the order their epochs closed. Take them with `drainFixes()`.
    package private(set) var fixes: [PositionFix] = []
    /// Counts of skipped rows and failed epochs.
    package internal(set) var diagnostics = EngineDiagnostics()

    /// An engine for `site`.
    /// - Throws: `E3002` when `configuration.defaultFloor` names no floor of the site; `E1003` for a
    ///   rate that is not positive and finite.
    package init(site: Site, configuration: EngineConfiguration = .standard) throws(LocusError) {
        guard configuration.rateHertz > 0, configuration.rateHertz.isFinite else {
            throw LocusError(.invalidArgument, "rate must be a positive number of Hz, not \(configuration.rateHertz)")
        }
        guard !site.floors.isEmpty else { throw LocusError(.siteNoFloor, "the site has no floor") }
        self.configuration = configuration
        floors = site.floors.map { FloorContext(floor: $0, solver: configuration.solver) }
        offsetConfigurations = floors.map { f in
            guard f.mode == .planar else { return nil }
            switch configuration.tagRangeOffset {
            case .off: return nil
            case .on(let c): return c
            case .automatic(let c): return f.biasesMeters.allSatisfy { $0 == 0 } ? c : nil
            }
        }
        for (i, f) in site.floors.enumerated() { floorIndexByID[f.id] = i }
        if let wanted = configuration.defaultFloor {
            guard let i = floorIndexByID[wanted] else {
                throw LocusError(.unknownFloor, "no floor '\(wanted)' in the site (floors: \(site.floors.map(\.id.rawValue).joined(separator: ", ")))")
            }
            defaultFloorIndex = i
        } else {
            defaultFloorIndex = 0
        }
        let widest = max(1, site.floors.map(\.locators.count).max() ?? 1)
        scratchLocators = [Point3](repeating: Point3(x: 0, y: 0, z: 0), count: widest)
        scratchRanges = [Double](repeating: 0, count: widest)
        workspace.reserve(widest)
    }

    /// The floor index for a floor id, or nil.
    package func floorIndex(_ id: FloorID) -> Int? { floorIndexByID[id] }

    /// Ingests one range measurement. Rows that can't be used are counted in
    /// `diagnostics.skipped` (unknown floor, unknown anchor, negative or non-finite values, time
    /// going backwards for the tag).
    package mutating func ingest(_ m: RangeMeasurement, line: Int = 0) {
        let tag: Int
        if let known = tagIndexByID[m.tag] { tag = known } else {
            tag = tags.count
            tagIndexByID[m.tag] = tag
            tags.append(TagState(id: m.tag, floorIndex: defaultFloorIndex,
                                 assembler: EpochAssembler(locatorCount: floors[defaultFloorIndex].positions.count,
                                                           rateHertz: configuration.rateHertz)))
        }
        var floor = defaultFloorIndex
        if let id = m.floor {
            guard let f = floorIndexByID[id] else { diagnostics.skipped.record(.unknownFloor, line: line); return }
            floor = f
        }
        ingest(tagIndex: tag, floorIndex: floor, locator: m.locator.rawValue, rangeMeters: m.rangeMeters,
               timeSeconds: m.timeSeconds, line: line)
    }

    /// The fast path of `ingest(_:)` for callers that already interned the tag (by `tagIndex(for:)`)
    /// and resolved the floor.
    package mutating func ingest(tagIndex tag: Int, floorIndex floor: Int, locator address: UInt16,
                                 rangeMeters range: Double, timeSeconds t: Double, line: Int = 0) {
        guard t.isFinite, range.isFinite else { diagnostics.skipped.record(.nonFinite, line: line); return }
        guard range >= 0 else { diagnostics.skipped.record(.negativeRange, line: line); return }
        guard let slot = floors[floor].slot(of: address) else { diagnostics.skipped.record(.unknownAnchor, line: line); return }
        if tags[tag].floorIndex != floor {
            // The tag changed floor: what it gathered on the old floor is solved there first.
            closeEpoch(tag)
            tags[tag].floorIndex = floor
            tags[tag].assembler = EpochAssembler(locatorCount: floors[floor].positions.count, rateHertz: configuration.rateHertz)
            tags[tag].filter = nil
            tags[tag].offset = nil
        }
        if tags[tag].offset == nil, let c = offsetConfigurations[floor] { tags[tag].offset = TagRangeOffsetEstimator(configuration: c) }
        guard t >= tags[tag].lastTimeSeconds else { diagnostics.skipped.record(.timeBackwards, line: line); return }
        tags[tag].lastTimeSeconds = t
        if tags[tag].assembler.closes(at: t) { closeEpoch(tag) }
        let tagOffset = tags[tag].offset?.offsetMeters ?? 0
        let corrected = max(0, range - floors[floor].biasesMeters[slot] - tagOffset)
        tags[tag].assembler.add(slot: slot, rangeMeters: corrected, timeSeconds: t)
        if case .kalman(let filterConfiguration) = configuration.tracking, floors[floor].mode == .planar {
            if tags[tag].filter == nil {
                tags[tag].filter = TrackFilter(configuration: filterConfiguration, tag: tags[tag].id, floor: floors[floor].floor.id,
                                               tagHeightMeters: floors[floor].floor.tagHeightMeters)
            }
            if filterConfiguration.coupling == .tight {
                let measurement = RangeMeasurement(timeSeconds: t, tag: tags[tag].id, locator: LocatorAddress(address), rangeMeters: range - tagOffset)
                tags[tag].filter?.update(range: measurement, locator: floors[floor].floor.locators[slot])
            }
        }
    }

    /// The index of `tag`, registering it (on the default floor) when new.
    package mutating func tagIndex(for tag: TagID) -> Int {
        if let known = tagIndexByID[tag] { return known }
        let index = tags.count
        tagIndexByID[tag] = index
        tags.append(TagState(id: tag, floorIndex: defaultFloorIndex,
                             assembler: EpochAssembler(locatorCount: floors[defaultFloorIndex].positions.count,
                                                       rateHertz: configuration.rateHertz)))
        return index
    }

    /// The default floor's index (rows that name no floor).
    package var defaultFloor: Int { defaultFloorIndex }

    /// Moves the clock to `t`: solves every open epoch that no later range can join any more.
    /// O(tags).
    package mutating func advance(toSeconds t: Double) {
        for i in tags.indices where tags[i].assembler.isDue(at: t) { closeEpoch(i) }
    }

    /// Ends the stream: solves every epoch still open.
    package mutating func finish() {
        for i in tags.indices { closeEpoch(i) }
    }

    /// Takes the fixes produced so far.
    package mutating func drainFixes() -> [PositionFix] {
        defer { fixes.removeAll(keepingCapacity: true) }
        return fixes
    }

    /// Gives tag `tag`'s open epoch (if any) its fix and empties the epoch.
    private mutating func closeEpoch(_ tag: Int) {
        guard tags[tag].assembler.isOpen else { return }
        diagnostics.epochs += 1
        if tags[tag].offset != nil { updateOffset(tag) }
        if tags[tag].filter != nil, case .kalman(let c) = configuration.tracking, c.coupling == .tight {
            let time = tags[tag].assembler.epochTimeSeconds
            if let fix = tags[tag].filter?.takeFix(atSeconds: time) {
                fixes.append(fix)
            } else {
                diagnostics.epochsBeforeTrack += 1
            }
            tags[tag].assembler.reset()
            return
        }
        let floorIndex = tags[tag].floorIndex
        let slots = tags[tag].assembler.presentSlots
        let n = slots.count
        for (k, slot) in slots.enumerated() {
            scratchLocators[k] = floors[floorIndex].positions[slot]
            scratchRanges[k] = tags[tag].assembler.rangeMeters[slot]
        }
        let time = tags[tag].assembler.epochTimeSeconds
        let solver = floors[floorIndex].solver
        var outcome: Result<TrilaterationSolution, LocusError> = .failure(LocusError(.tooFewRanges, "empty epoch"))
        scratchLocators.withUnsafeBufferPointer { lp in
            scratchRanges.withUnsafeBufferPointer { rp in
                do throws(LocusError) {
                    outcome = .success(try solver.solve(locators: UnsafeBufferPointer(rebasing: lp[0..<n]),
                                                        rangesMeters: UnsafeBufferPointer(rebasing: rp[0..<n]),
                                                        workspace: &workspace))
                } catch {
                    outcome = .failure(error)
                }
            }
        }
        switch outcome {
        case .success(let solution):
            var rejected = LocatorList()
            if solution.rejectedCount > 0 {
                for (k, slot) in slots.enumerated() where k < 64 && solution.rejectedMask & (1 << UInt64(k)) != 0 {
                    rejected.append(floors[floorIndex].addresses[slot])
                }
                diagnostics.rejectedRanges += solution.rejectedCount
            }
            let quality = FixQuality(hdop: solution.hdop, vdop: solution.vdop, pdop: solution.pdop,
                                     residualRMSMeters: solution.residualRMSMeters, locatorsUsed: solution.locatorsUsed,
                                     rejected: rejected)
            let raw = PositionFix(timeSeconds: time, tag: tags[tag].id, floor: floors[floorIndex].floor.id,
                                  position: solution.position, covariance: solution.covariance, quality: quality)
            if tags[tag].filter != nil {
                // Loosely coupled: the least-squares fix is the filter's measurement.
                tags[tag].filter?.update(fix: raw)
                if let fix = tags[tag].filter?.takeFix(atSeconds: time) { fixes.append(fix) } else { diagnostics.epochsBeforeTrack += 1 }
            } else {
                fixes.append(raw)
            }
        case .failure(let error):
            diagnostics.recordFailure(error.code)
        }
        tags[tag].assembler.reset()
    }
}

extension PositioningEngine {
    /// Tag `tag`'s current common range offset estimate b̂ (metres) and the floor it applies to, or
    /// nil when the engine estimates none for it (see `EngineConfiguration.tagRangeOffset`).
    package func tagRangeOffset(_ tag: TagID) -> (floorIndex: Int, offsetMeters: Double)? {
        guard let i = tagIndexByID[tag], let offset = tags[i].offset, offset.updates > 0 else { return nil }
        return (tags[i].floorIndex, offset.offsetMeters)
    }

    /// Feeds tag `tag`'s open epoch (ranges already corrected by the current offset) to its offset
    /// estimator. No allocation.
    private mutating func updateOffset(_ tag: Int) {
        let floorIndex = tags[tag].floorIndex
        let slots = tags[tag].assembler.presentSlots
        let n = slots.count
        for (k, slot) in slots.enumerated() {
            scratchLocators[k] = floors[floorIndex].positions[slot]
            scratchRanges[k] = tags[tag].assembler.rangeMeters[slot]
        }
        let h = floors[floorIndex].floor.tagHeightMeters
        let time = tags[tag].assembler.epochTimeSeconds
        scratchLocators.withUnsafeBufferPointer { lp in
            scratchRanges.withUnsafeBufferPointer { rp in
                tags[tag].offset?.update(locators: UnsafeBufferPointer(rebasing: lp[0..<n]),
                                         rangesMeters: UnsafeBufferPointer(rebasing: rp[0..<n]),
                                         tagHeightMeters: h, timeSeconds: time)
            }
        }
    }

    /// Adds rows a caller skipped before they reached the engine (so one tally reports them all).
    package mutating func recordSkipped(_ tally: SkipTally) {
        diagnostics.skipped.merge(tally)
    }
}
