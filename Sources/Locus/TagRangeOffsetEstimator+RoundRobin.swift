import LocusCore
import LocusSolvers

extension TagRangeOffsetEstimator {
    /// Round robin (issue #42): hardware that ranges to one locator at a time, in turn, gives epochs
    /// whose ranges were not taken together (one range each at the default rate; at a slower output
    /// rate several, spread over the epoch), and the epoch update (`update(locators:…)`) takes an epoch's
    /// ranges as simultaneous. For such a tag (`PositioningEngine.TagState.isRoundRobin`) the tightly coupled filter keeps the
    /// latest range of each locator (`TrackRangeBuffer`, LocusSolvers); once as many ranges have come
    /// since the last cycle fed as there are locators in the filter's cycle window
    /// (`initializationCycleSeconds`) — each locator heard again, in a round robin — the latest range of
    /// each, carried to the newest one's time by the tracked velocity along its line of sight
    /// (`TrackFilter.gatherCycle`), is fed as one epoch, seeded at the tracked position. The engine
    /// calls this each time the filter has taken ranges, so the estimator learns a cycle per cycle
    /// whatever the output rate: at `--rate 1` an epoch of the libRSF recording holds two cycles, and
    /// fed once an epoch the estimate was trusted a second later than at 4 Hz (one fix 0.5 m off
    /// where the tag started walking). Each range is fed once, so the estimate's variance shrinks as
    /// it would with real epochs of one round each. Without this the libRSF recording (4 anchors polled
    /// in turn, ranges 7–15 cm long) never learnt its offset at the default rate (docs/datasets.md).
    ///
    /// `taken`: the ranges the filter has just taken; `applied`: the offset already taken out of the
    /// tag's ranges (the engine's current correction), h the tag height (m). Returns the correction
    /// afterwards (`correctionMeters`, metres). No allocation.
    mutating func updatedCorrectionMeters(cycleOf filter: inout TrackFilter, taken: Int, tagHeightMeters h: Double,
                                          lessOffsetMeters applied: Double) -> Double {
        let needed = configuration.rangesNeeded
        cycleRanges = UInt8(clamping: Int(cycleRanges) + max(0, taken))
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
