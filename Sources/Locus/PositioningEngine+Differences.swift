import LocusCore
import LocusNumerics
import LocusSolvers

// Range differences (TDoA, SPEC §2 difference rows): routed and checked like ranges, timed by the
// same epoch table (the B locator as the slot), held in `DifferenceEpochs`, and solved when the epoch
// closes — by the difference least-squares solver (raw fixes, the loosely coupled filter's
// measurement, and the start of a tightly coupled track) or as the tightly coupled filter's
// measurements. An epoch holds one kind: a row of the other kind closes it first.
extension PositioningEngine {
    /// Ingests one range difference by id (tag registered, floor resolved, as `ingest(_:line:)`).
    package mutating func ingest(_ d: RangeDifference, line: Int = 0) {
        guard let tag = admittedTagIndex(for: d.tag, line: line) else { return }
        let floor: FloorIndex
        if let id = d.floor {
            guard let f = site.floorIndex(of: id) else { diagnostics.skipped.record(.unknownFloor, line: line); return }
            floor = f
        } else {
            floor = defaultFloor
        }
        ingest(tag: tag, floor: floor, reference: d.reference.rawValue, locator: d.locator.rawValue,
               differenceMeters: d.differenceMeters, timeSeconds: d.timeSeconds, line: line)
    }

    /// The routed path of `ingest(_:line:)`: z = d(tag, B) − d(tag, A) with A = `reference`, B =
    /// `locator`. Skipped and counted: a non-finite time or difference (`non_finite`), A = B
    /// (`same_locator`), a locator the floor lacks (`unknown_anchor`), |z| > ‖b − a‖ + the margin
    /// (`difference_too_long`), and the tag clock's reasons as for ranges. Kept: z − (b_B − b_A), the
    /// locators' biases taken out (their range scales are not applied to a difference).
    package mutating func ingest(tag tagIndex: TagIndex, floor floorIndex: FloorIndex, reference: UInt16, locator: UInt16,
                                 differenceMeters z: Double, timeSeconds t: Double, line: Int = 0) {
        guard !hasFinished else { return }
        diagnostics.differenceRows += 1
        let tag = tagIndex.rawValue, floor = floorIndex.rawValue
        guard t.isFinite, z.isFinite else { diagnostics.skipped.record(.nonFinite, line: line); return }
        guard reference != locator else { diagnostics.skipped.record(.sameLocator, line: line); return }
        guard let slotA = floors[floor].slot(of: reference), let slotB = floors[floor].slot(of: locator) else {
            diagnostics.skipped.record(.unknownAnchor, line: line); return
        }
        let a = floors[floor].positions[slotA], b = floors[floor].positions[slotB]
        let baseline = RangeModel.predicted(from: a, to: b)
        guard DifferenceModel.isPlausible(z, baselineMeters: baseline, marginMeters: configuration.differenceMarginMeters) else {
            diagnostics.skipped.record(.differenceTooLong, line: line); return
        }
        guard var closed = admit(tag, floor: floor, atSeconds: t, line: line) else { return }
        // One kind per epoch: an open range epoch is solved first; so is a full one.
        if schedule.epochs.isOpen(tag) && (!tags[tag].holdsDifferences || differenceEpochs.count(tag) >= DifferenceEpochs.capacity)
            || schedule.epochs.closes(tag, at: t) {
            closeEpoch(tag)
            closed = true
        }
        if isTracking, floorIsPlanar[floor], !tags[tag].hasFilter { startFilter(tag, floor: floor) }
        // The epoch table times the difference as a range of B (its value unused: 0).
        let added = schedule.add(tag, slot: slotB, rangeMeters: 0, timeSeconds: t)
        if added != .joined {
            guard added == .opened else { skipLateRange(line: line, closed: closed); return }
            roundOpened(tag, floor: floor)
        }
        tags[tag].holdsDifferences = true
        let biases = floors[floor].biasesMeters
        differenceEpochs.append(tag, .init(differenceMeters: z - (biases[slotB] - biases[slotA]), timeSeconds: t,
                                           referenceSlot: UInt16(truncatingIfNeeded: slotA),
                                           locatorSlot: UInt16(truncatingIfNeeded: slotB)))
        if schedule.epochs.isComplete(tag) {
            closeEpoch(tag)
            closed = true
        }
        if closed { release() }
    }

    /// Gives tag `tag`'s open difference epoch its fix (`closeEpoch` calls it for an epoch that holds
    /// differences) and empties it. With the tightly coupled filter tracking, the filter takes the
    /// differences (`TrackFilter.update(differences:locators:addresses:)`); when it has no state on
    /// return (`.buffered`/`.diverged`: none yet, a long gap, re-acquisition), the epoch's least-squares
    /// fix seeds it (`reset(toFix:)`) — its initialisation contract. Otherwise the least-squares fix is
    /// the fix (raw) or the loosely coupled filter's measurement.
    mutating func closeDifferenceEpoch(_ tag: Int, ending: EpochTable.Ending?) {
        let time = schedule.epochs.epochTimeSeconds(tag)
        let floor = tags[tag].floorIndex
        _ = differenceEpochs.gather(tag, positions: floors[floor].positions, locators: &scratchDifferenceLocators,
                                    slots: &scratchSlots, pairs: &scratchPairs)
        differenceEpochs.reset(tag)
        tags[tag].holdsDifferences = false
        schedule.reset(tag, ending: ending)
        let filtered = isTracking && tags[tag].hasFilter
        if filtered && isTight {
            if filters[tag].isTracking {
                scratchDifferenceAddresses.removeAll(keepingCapacity: true)
                for slot in scratchSlots { scratchDifferenceAddresses.append(floors[floor].addresses[slot]) }
                // (Local references to the scratch arrays: their spans must not overlap the write to `filters`.)
                let (pairs, locators, addresses) = (scratchPairs, scratchDifferenceLocators, scratchDifferenceAddresses)
                let outcome = filters[tag].update(differences: pairs.span, locators: locators.span, addresses: addresses.span)
                if outcome != .buffered && outcome != .diverged {
                    deliverFilterFix(tag, floor: floor, atSeconds: time)
                    return
                }
            }
            // No state: the least-squares fix of the epoch seeds the track (without its differences again).
            if let raw = solveDifferences(tag, floor: floor, atSeconds: time), filters[tag].reset(toFix: raw) {
                deliverFilterFix(tag, floor: floor, atSeconds: time)
            } else {
                diagnostics.epochsBeforeTrack += 1
            }
            return
        }
        guard let raw = solveDifferences(tag, floor: floor, atSeconds: time) else { return }
        if filtered {
            filters[tag].update(fix: raw)  // loosely coupled: the fix is the measurement
            deliverFilterFix(tag, floor: floor, atSeconds: time)
        } else {
            if isTracking { diagnostics.unfilteredEpochs += 1 }
            deliver(raw, tag: tag, floor: floor)
        }
    }

    /// The least-squares fix of the differences gathered in the scratch arrays — the newest of each
    /// locator pair (`DifferenceEpochs.latestOfEachPair`): the fix is the tag at the epoch's time —,
    /// or nil (the failure counted by code). A tag whose filter is tracking gives the solver its last state's position
    /// (`TrackFilter.lastMean`, at the floor's tag height) as a warm start (`DifferenceSolver.solve`'s
    /// `seed`: the closed-form start skipped when the fit from there passes the χ² gate). It depends
    /// only on the tag's own history, so a fix is the same whatever the batch or partition. Without
    /// a tracking filter (raw fixes, a track to seed) the tag's previous least-squares position is the
    /// seed (`DifferenceEpochs.lastPosition`; none after a floor change).
    private mutating func solveDifferences(_ tag: Int, floor: Int, atSeconds time: Double) -> PositionFix? {
        let solver = DifferenceSolver(configuration: floors[floor].solver.configuration)
        var seed: Point3?
        if isTracking && tags[tag].hasFilter && filters[tag].isTracking {
            let mean = filters[tag].lastMean
            seed = Point3(x: mean.px, y: mean.py, z: floors[floor].floor.tagHeightMeters)
        } else {
            seed = differenceEpochs.lastPosition(tag)
        }
        let solution: TrilaterationSolution
        DifferenceEpochs.latestOfEachPair(scratchPairs, into: &scratchLatestPairs)
        do throws(LocusError) {
            let (locators, pairs) = (scratchDifferenceLocators, scratchLatestPairs)
            solution = try solver.solve(locators: locators.span, pairs: pairs.span, seed: seed,
                                        workspace: &differenceWorkspace)
        } catch {
            diagnostics.recordFailure(error.code)
            return nil
        }
        differenceEpochs.setLastPosition(tag, solution.position)
        diagnostics.rejectedRanges += solution.rejectedCount
        let slots = scratchSlots
        return fix(solution, tag: tag, floor: floor, atSeconds: time, locatorCount: slots.count) { slots[$0] }
    }
}
