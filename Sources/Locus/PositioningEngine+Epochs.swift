import LocusCore
import LocusNumerics
import LocusSolvers

// Closing an epoch: the tightly coupled filter takes its pending ranges, the least-squares solver
// or the filter gives the epoch's fix, the offset estimator learns, and the fix is delivered
// (`deliver`, in `PositioningEngine.swift`).
extension PositioningEngine {
    /// Gives tag `tag`'s open epoch (if any) its fix and empties it; unless `learning` is false (the
    /// end of the stream), how it ended with the clock now teaches the tag's round model.
    mutating func closeEpoch(_ tag: Int, learning: Bool = true) {
        guard schedule.epochs.isOpen(tag) else { return }
        let ending = learning ? schedule.epochs.ending(tag, at: clockSeconds) : nil
        diagnostics.epochs += 1
        if tags[tag].holdsDifferences {
            closeDifferenceEpoch(tag, ending: ending)
            return
        }
        let time = schedule.epochs.epochTimeSeconds(tag)
        let floorIndex = tags[tag].floorIndex
        let usesFilterFix = isTight && tags[tag].hasFilter
        var gathered = false
        if usesFilterFix {
            // The filter takes the epoch's ranges it has not yet: its fix, and the offset estimator's
            // seed, are as after every range of the epoch.
            gathered = applyPendingRanges(tag)
            tags[tag].appliedRanges = 0
        }
        if tracksSpatialFloors, !floorIsPlanar[floorIndex] {
            closeSpatialEpoch(tag, floor: floorIndex, atSeconds: time, ending: ending)
            return
        }
        // The epoch's locators and ranges, gathered once for the offset estimator and the solver (the
        // filter's share usually gathered them all already).
        var n = 0
        if tags[tag].hasOffset || !usesFilterFix {
            n = gathered ? schedule.epochs.presentCount(tag)
                : schedule.epochs.gather(tag, positions: floors[floorIndex].positions, locators: &scratchLocators, ranges: &scratchRanges)
        }
        // The epoch is done with once its ranges were gathered (and, for a least-squares fix, its
        // rejected locators named): it is reset before the fix is delivered, so that the fix can be
        // released at once when nothing precedes it.
        if usesFilterFix {
            if tags[tag].hasOffset { updateOffset(tag, count: n, floorIndex: floorIndex, timeSeconds: time) }
            schedule.reset(tag, ending: ending)
            deliverFilterFix(tag, floor: floorIndex, atSeconds: time)
            return
        }
        // The least-squares fix first: its ranges were corrected by the offset as they came, so the
        // offset estimator, which only corrects later rows, can follow it — and take its position as
        // the seed it linearises the epoch at.
        let solved = solveEpoch(tag, count: n, floor: floorIndex, atSeconds: time)
        if tags[tag].hasOffset {
            updateOffset(tag, count: n, floorIndex: floorIndex, timeSeconds: time, leastSquares: solved?.position)
        }
        schedule.reset(tag, ending: ending)
        guard let raw = solved else { return }
        if tags[tag].hasFilter {
            // Loosely coupled: the least-squares fix is the filter's measurement.
            filters[tag].update(fix: raw)
            deliverFilterFix(tag, floor: floorIndex, atSeconds: time)
        } else {
            if isTracking { diagnostics.unfilteredEpochs += 1 }
            deliver(raw, tag: tag, floor: floorIndex)
        }
    }

    /// Adds a range that the tightly coupled filter takes at once (a locator's second range in the epoch,
    /// or a negative one): the filter takes the ranges pending before it, then this one, then the range
    /// joins the epoch, all of whose ranges the filter now has. Returns what `EpochScheduler.add` did (the
    /// caller opens the round or skips the range). A straggler of the tag's last round (`.late`) can come
    /// this way only as a negative range (no epoch is open: no second range), which the filter refuses
    /// (`TrackFilter.update`: unusable, nothing changed), with nothing pending before it: it is taken by
    /// nothing, as on the usual path.
    @inline(never)
    mutating func addOutOfTurn(_ tag: Int, floor: Int, slot: Int, correctedRangeMeters corrected: Double,
                                       timeSeconds t: Double) -> EpochTable.Added {
        applyPendingRanges(tag)
        filters[tag].update(correctedRangeMeters: corrected, timeSeconds: t, address: floors[floor].addresses[slot],
                            anchor: floors[floor].positions[slot])
        filterTook(tag, ranges: 1)
        let added = schedule.add(tag, slot: slot, rangeMeters: max(0, corrected), timeSeconds: t)
        tags[tag].appliedRanges = Int32(truncatingIfNeeded: schedule.epochs.presentCount(tag))
        return added
    }

    /// Skips a straggler (`EpochTable.add`: `.late`) as `late_range`, releasing what closing the tag's
    /// epoch before it (`closed`) allows.
    @inline(never)
    mutating func skipLateRange(line: Int, closed: Bool) {
        diagnostics.skipped.record(.lateRange, line: line)
        if closed { release() }
    }

    /// Brings tag `tag`'s tightly coupled filter up to date with its open epoch: the ranges that joined
    /// the epoch since it last took one (present slots `appliedRanges`…, in order), each at its own
    /// time, in one call (`TrackFilter.update(rangesMeters:…)`), then a round robin's offset estimator
    /// (`filterTook`). Its caller sets `appliedRanges`.
    /// Returns true when that was the whole epoch: its locators and ranges are then in
    /// `scratchLocators` and `scratchRanges` as `EpochTable.gather` puts them.
    @discardableResult
    mutating func applyPendingRanges(_ tag: Int) -> Bool {
        let first = Int(tags[tag].appliedRanges)
        guard first < schedule.epochs.presentCount(tag) else { return false }
        let floor = tags[tag].floorIndex
        let taken = scratchLocators.withUnsafeMutableBufferPointer { lp in
            scratchAddresses.withUnsafeMutableBufferPointer { ap in
                scratchRanges.withUnsafeMutableBufferPointer { rp in
                    scratchTimes.withUnsafeMutableBufferPointer { tp in
                        let n = schedule.epochs.gatherRanges(tag, from: first, positions: floors[floor].positions,
                                                             addresses: floors[floor].addresses,
                                                             locators: lp, addressesOut: ap, ranges: rp, times: tp)
                        filters[tag].update(rangesMeters: UnsafeBufferPointer(rebasing: rp[0..<n]).span,
                                            timesSeconds: UnsafeBufferPointer(rebasing: tp[0..<n]).span,
                                            anchors: UnsafeBufferPointer(rebasing: lp[0..<n]).span,
                                            addresses: UnsafeBufferPointer(rebasing: ap[0..<n]).span)
                        return n
                    }
                }
            }
        }
        filterTook(tag, ranges: taken)
        return first == 0
    }

    /// Delivers the tag's filter fix at the epoch time (none before the track starts: counted).
    @inline(__always)
    mutating func deliverFilterFix(_ tag: Int, floor: Int, atSeconds time: Double) {
        if let fix = filters[tag].closeEpoch(atSeconds: time) {
            deliver(fix, tag: tag, floor: floor)
        } else {
            diagnostics.epochsBeforeTrack += 1
        }
    }

    /// The least-squares fix of the `n` ranges of `tag`'s open epoch gathered in the scratch arrays,
    /// or nil (the failure counted by code).
    mutating func solveEpoch(_ tag: Int, count n: Int, floor floorIndex: Int, atSeconds time: Double) -> PositionFix? {
        let solver = floors[floorIndex].solver
        var solved: TrilaterationSolution? = nil
        var failure: LocusErrorCode = .tooFewRanges
        scratchLocators.withUnsafeBufferPointer { lp in
            scratchRanges.withUnsafeBufferPointer { rp in
                do throws(LocusError) {
                    solved = try solver.solve(locators: UnsafeBufferPointer(rebasing: lp[0..<n]).span,
                                              rangesMeters: UnsafeBufferPointer(rebasing: rp[0..<n]).span,
                                              workspace: &workspace)
                } catch {
                    failure = error.code
                }
            }
        }
        guard let solution = solved else {
            diagnostics.recordFailure(failure)
            return nil
        }
        diagnostics.rejectedRanges += solution.rejectedCount
        return fix(solution, tag: tag, floor: floorIndex, atSeconds: time, locatorCount: n) { schedule.epochs.presentSlot(tag, $0) }
    }

    /// The fix of a least-squares `solution` of tag `tag`'s epoch on floor `floor` at `time`: its
    /// quality figures, the rejected locators named (bit k of the mask: the epoch's k-th locator, whose
    /// floor slot is `slot(k)`, k < min(locatorCount, 64)) and counted. For ranges and differences alike.
    func fix(_ solution: TrilaterationSolution, tag: Int, floor: Int, atSeconds time: Double, locatorCount: Int,
             slot: (Int) -> Int) -> PositionFix {
        var rejected = LocatorList()
        if solution.rejectedCount > 0 {
            for k in 0..<min(locatorCount, 64) where solution.rejectedMask & (1 << UInt64(k)) != 0 {
                rejected.append(floors[floor].addresses[slot(k)])
            }
        }
        let quality = FixQuality(hdop: solution.hdop, vdop: solution.vdop, pdop: solution.pdop,
                                 residualRMSMeters: solution.residualRMSMeters, locatorsUsed: solution.locatorsUsed,
                                 rejected: rejected)
        return PositionFix(timeSeconds: time, tag: registry.ids[tag], floor: floors[floor].floor.id,
                           position: solution.position, covariance: solution.covariance, quality: quality)
    }
}
