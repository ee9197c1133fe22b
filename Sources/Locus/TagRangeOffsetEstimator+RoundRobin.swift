import LocusCore
import LocusSolvers

extension TagRangeOffsetEstimator {
    /// Round robin (issue #42): hardware that ranges to one locator at a time, in turn, gives epochs
    /// of one range, and an epoch needs 4 to measure the offset (x, y and b, and one range to check
    /// them). For such a tag the tightly coupled filter keeps the latest range of each locator
    /// (`TrackRangeBuffer`, LocusSolvers); once as many ranges have come since the last cycle fed as
    /// there are locators in the filter's cycle window (`initializationCycleSeconds`) — each locator
    /// heard again, in a round robin — the latest range of each, carried to the newest one's time by the
    /// tracked velocity along its line of sight (`TrackFilter.gatherCycle`), is fed as one epoch,
    /// seeded at the tracked position. Each range is fed once, so the estimate's variance shrinks as
    /// it would with real epochs of one round each. Without this the libRSF recording (4 anchors polled
    /// in turn, ranges 7–15 cm long) never learnt its offset at the default rate (docs/datasets.md).
    ///
    /// `epochRanges`: the ranges of the epoch just closed; `applied`: the offset already taken out of
    /// the tag's ranges (the engine's current correction), h the tag height (m). Returns the correction
    /// afterwards (`correctionMeters`, metres), or nil when the epoch holds the ranges an epoch needs
    /// (`rangesNeeded`): the caller feeds it as it is (`updatedCorrectionMeters(locators:…)`). No allocation.
    mutating func updatedCorrectionMeters(cycleOf filter: inout TrackFilter, epochRanges: Int, tagHeightMeters h: Double,
                                                  lessOffsetMeters applied: Double) -> Double? {
        let needed = configuration.rangesNeeded
        guard epochRanges < needed else { return nil }
        cycleRanges = UInt8(clamping: Int(cycleRanges) + max(0, epochRanges))
        guard filter.isTracking, Int(cycleRanges) >= needed else { return correctionMeters }
        let mean = filter.lastMean
        var locators = InlineArray<16, Point3>(repeating: Point3(x: 0, y: 0, z: 0))
        var ranges = InlineArray<16, Double>(repeating: 0)
        var locatorSpan = locators.mutableSpan, rangeSpan = ranges.mutableSpan
        let (n, t) = filter.gatherCycle(tagHeightMeters: h, locators: &locatorSpan, ranges: &rangeSpan)
        guard n >= needed, Int(cycleRanges) >= n else { return correctionMeters }
        cycleRanges = 0
        locators.span.withUnsafeBufferPointer { lp in
            ranges.span.withUnsafeBufferPointer { rp in
                update(locators: UnsafeBufferPointer(rebasing: lp[0..<n]), rangesMeters: UnsafeBufferPointer(rebasing: rp[0..<n]),
                       tagHeightMeters: h, timeSeconds: t, seed: Point2(x: mean.px, y: mean.py), lessOffsetMeters: applied)
            }
        }
        return correctionMeters
    }
}
