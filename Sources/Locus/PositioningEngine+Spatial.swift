import LocusCore
import LocusSolvers

// Floors solved in 3-D with tracking on (issue #42): each tag's `SpatialTrack` takes the epoch's ranges,
// each at its own time, and gives the epoch's fix; without a track (first epoch, after a gap, after
// the gate opened or a divergence) the epoch's least-squares fix seeds it — its initialisation
// contract — and the seeded track's fix is delivered. Only per-tag state: the same fixes whatever
// the partition or shard (`--jobs`).
extension PositioningEngine {
    /// Gives tag `tag`'s open epoch on floor `floor` (solved in 3-D) its fix through the tag's 3-D track.
    @inline(never)
    mutating func closeSpatialEpoch(_ tag: Int, floor: Int, atSeconds time: Double, ending: EpochTable.Ending?) {
        let n = scratchLocators.withUnsafeMutableBufferPointer { lp in
            scratchAddresses.withUnsafeMutableBufferPointer { ap in
                scratchRanges.withUnsafeMutableBufferPointer { rp in
                    scratchTimes.withUnsafeMutableBufferPointer { tp in
                        schedule.epochs.gatherRanges(tag, from: 0, positions: floors[floor].positions, addresses: floors[floor].addresses,
                                                     locators: lp, addressesOut: ap, ranges: rp, times: tp)
                    }
                }
            }
        }
        // The epoch's ranges at their own times; without a track, or with one too old for this epoch (a
        // gap past `reinitializeAfterSeconds`), the track drops and is re-seeded below.
        let tracked = scratchRanges.withUnsafeBufferPointer { rp in
            scratchTimes.withUnsafeBufferPointer { tp in
                scratchLocators.withUnsafeBufferPointer { lp in
                    scratchAddresses.withUnsafeBufferPointer { ap in
                        spatialTracks[tag].update(rangesMeters: UnsafeBufferPointer(rebasing: rp[0..<n]).span,
                                                  timesSeconds: UnsafeBufferPointer(rebasing: tp[0..<n]).span,
                                                  anchors: UnsafeBufferPointer(rebasing: lp[0..<n]).span,
                                                  addresses: UnsafeBufferPointer(rebasing: ap[0..<n]).span)
                    }
                }
            }
        }
        // (A track that refused a range in each of its last `spatialGateOpenEpochs` epochs dropped in
        // `update` too: it is re-seeded from this epoch's least-squares fix below.) The per-locator biases
        // learn from the epoch at the track's position after it.
        if let tracked, floorLearnsSpatialBiases[floor] { updateSpatialLocatorBiases(tag, floor: floor, count: n, position: tracked) }
        if spatialTracks[tag].isTracking {
            schedule.reset(tag, ending: ending)
            deliverSpatialFix(tag, floor: floor, atSeconds: time)
            return
        }
        // No track: the epoch's least-squares fix (the ranges gathered above, in the epoch's slot order)
        // seeds it.
        let solved = solveEpoch(tag, count: n, floor: floor, atSeconds: time)
        schedule.reset(tag, ending: ending)
        guard let raw = solved else { return }
        if spatialTracks[tag].reset(toFix: raw) {
            // The seed's fix is the least-squares fix's position, with its quality figures.
            deliverSpatialFix(tag, floor: floor, atSeconds: time, quality: raw.quality)
        } else {
            // A fix whose covariance cannot seed a track (not positive definite): delivered raw, counted.
            diagnostics.unfilteredEpochs += 1
            deliver(raw, tag: tag, floor: floor)
        }
    }

    /// Delivers the tag's 3-D track's fix at the epoch time (with `quality` instead of the track's
    /// epoch figures when given).
    private mutating func deliverSpatialFix(_ tag: Int, floor: Int, atSeconds time: Double, quality: FixQuality? = nil) {
        if var fix = spatialTracks[tag].closeEpoch(atSeconds: time, tag: registry.ids[tag], floor: floors[floor].floor.id,
                                                  tagHeightMeters: floors[floor].floor.tagHeightMeters) {
            if let quality { fix.quality = quality }
            deliver(fix, tag: tag, floor: floor)
        } else {
            diagnostics.epochsBeforeTrack += 1
        }
    }
}
