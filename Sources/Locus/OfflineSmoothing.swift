import LocusCore
import LocusSolvers

/// The offline smoother over a whole recording (`locus replay --smooth`, `FloorSession`'s
/// `smoothedPositions()`, the C ABI's `LOCUS_OPTION_SMOOTH`): every face records the rows it feeds the
/// engine here, and after `PositioningEngine.finish()` turns the engine's causal fixes into smoothed
/// ones. Zone events are not affected: they come from the causal stream, as they would live.
///
/// With the tightly coupled filter the smoother works on each tag's ranges and range differences
/// (TDoA, `record(_:)` of a `RangeDifference`; extended RTS, `TrackSmoother.smooth(ranges:differences:…)`)
/// and reports at the causal fix times. Each range is kept with the
/// tag's common range offset b̂ the causal engine subtracted from it when it took the row (the online
/// estimate drifts; one value for the whole run — the last — made the smoother worse than the causal
/// filter on the real mid run: 0.0975 m vs 0.0911 m), so the smoother sees exactly the ranges the live
/// track saw. With the loosely
/// coupled filter or raw fixes it smooths the least-squares fixes (`TrackSmoother.smooth(_:)`). On a
/// floor solved in 3-D, with the tightly coupled filter, it is the RTS pass over the 3-D track
/// (`SpatialTrackSmoother`, ranges only). A tag
/// that changes floor is smoothed per stretch on one floor.
///
/// Memory grows with the recording (every range of every tag when ranges are smoothed): it is an
/// offline tool. O(n) time per tag.
struct OfflineSmoothing: Sendable {
    private let filterConfiguration: TrackFilterConfiguration
    /// Whether the smoother works on ranges (tightly coupled filter) rather than on fixes.
    private let usesRanges: Bool
    /// Recorded ranges by tag, in the order fed.
    private var rangesByTag: [TagID: [RangeMeasurement]] = [:]
    /// Recorded range differences (TDoA) by tag, in the order fed.
    private var differencesByTag: [TagID: [RangeDifference]] = [:]

    /// A smoother for an engine configured with `configuration`.
    init(configuration: EngineConfiguration) {
        if case .kalman(let c) = configuration.tracking {
            filterConfiguration = c
            usesRanges = c.coupling == .tight
        } else {
            filterConfiguration = .standard
            usesRanges = false
        }
    }

    /// Records a row right after the engine ingested it (used or not: rows the engine skips are ignored
    /// by the smoother too, by floor and locator), less the tag's common range offset b̂ the engine
    /// subtracted from it (`offsetMeters`, looked up by the caller: r − b̂, metres; nil where the
    /// engine estimates none). A no-op unless the smoother works on ranges.
    mutating func record(_ m: RangeMeasurement, lessTagOffset offsetMeters: Double?) {
        guard usesRanges else { return }
        var row = m
        if let offsetMeters { row.rangeMeters = m.rangeMeters - offsetMeters }
        rangesByTag[m.tag, default: []].append(row)
    }

    /// Records a range-difference row (TDoA) right after the engine ingested it, as reported (the
    /// smoother removes the locators' biases; a tag's common range offset cancels in a difference). Rows
    /// the engine skips are ignored by the smoother too (unknown floor or locator). The rows of one
    /// blink (one time, one reference) are recorded one after the other: they form one group. A no-op
    /// unless the smoother works on ranges (tight coupling).
    mutating func record(_ d: RangeDifference) {
        guard usesRanges else { return }
        differencesByTag[d.tag, default: []].append(d)
    }

    /// Whether the smoother works on ranges (tight coupling): rows are recorded only then.
    var recordsRanges: Bool { usesRanges }

    /// The smoothed fixes for the engine's causal `fixes` (in (time, tag) order as the engine
    /// released them), in (time, tag) order. Call after `engine.finish()`.
    /// - Throws: E4005 when the numbers go non-finite.
    func smooth(fixes: [PositionFix], engine: PositioningEngine) throws(LocusError) -> [PositionFix] {
        // Fixes by tag, in time order (the input is sorted by time then tag).
        var byTag: [TagID: [PositionFix]] = [:]
        var tagOrder: [TagID] = []
        for f in fixes {
            if byTag[f.tag] == nil { tagOrder.append(f.tag) }
            byTag[f.tag, default: []].append(f)
        }
        let defaultFloorID = engine.floor(engine.defaultFloor).id
        var out: [PositionFix] = []
        out.reserveCapacity(fixes.count)
        for tag in tagOrder {
            let tagFixes = byTag[tag] ?? []
            // A live feed may offer a tag's rows slightly out of order: the smoother wants them in time
            // (stable, so a recording's ties keep their file order).
            var tagRanges = rangesByTag[tag] ?? []
            if zip(tagRanges, tagRanges.dropFirst()).contains(where: { $0.timeSeconds > $1.timeSeconds }) {
                tagRanges = tagRanges.enumerated().sorted { a, b in
                    a.element.timeSeconds < b.element.timeSeconds || (a.element.timeSeconds == b.element.timeSeconds && a.offset < b.offset)
                }.map(\.element)
            }
            var tagDifferences = differencesByTag[tag] ?? []
            if zip(tagDifferences, tagDifferences.dropFirst()).contains(where: { $0.timeSeconds > $1.timeSeconds }) {
                tagDifferences = tagDifferences.enumerated().sorted { a, b in
                    a.element.timeSeconds < b.element.timeSeconds || (a.element.timeSeconds == b.element.timeSeconds && a.offset < b.offset)
                }.map(\.element)
            }
            var start = 0
            while start < tagFixes.count {
                var end = start
                while end < tagFixes.count, tagFixes[end].floor == tagFixes[start].floor { end += 1 }
                let stretch = Array(tagFixes[start..<end])
                let floorID = stretch[0].floor
                if usesRanges, let floorIndex = engine.floorIndex(floorID), !engine.floorIsPlanar[floorIndex.rawValue] {
                    // A floor solved in 3-D: the RTS pass over the 3-D track (its ranges only).
                    let floor = engine.floor(floorIndex)
                    let t0 = stretch[0].timeSeconds - filterConfiguration.reinitializeAfterSeconds
                    let t1 = stretch[stretch.count - 1].timeSeconds
                    let ranges = tagRanges.filter { m in
                        m.timeSeconds >= t0 && m.timeSeconds <= t1 && (m.floor ?? defaultFloorID) == floorID
                    }
                    out += SpatialTrackSmoother.smooth(ranges: ranges, floor: floor, seeds: stretch, configuration: filterConfiguration)
                } else if usesRanges, let floorIndex = engine.floorIndex(floorID) {
                    // The rows were recorded with the tag's offset already taken out (`record`).
                    let floor = engine.floor(floorIndex)
                    let t0 = stretch[0].timeSeconds - filterConfiguration.reinitializeAfterSeconds
                    let t1 = stretch[stretch.count - 1].timeSeconds
                    let ranges = tagRanges.filter { m in
                        m.timeSeconds >= t0 && m.timeSeconds <= t1 && (m.floor ?? defaultFloorID) == floorID
                    }
                    let differences = tagDifferences.filter { d in
                        d.timeSeconds >= t0 && d.timeSeconds <= t1 && (d.floor ?? defaultFloorID) == floorID
                    }
                    // The ranges weighed as the causal filter last took them: σ_r, or the smaller σ its
                    // innovations showed over the run (`TrackFilter.rangeVarianceSquareMeters`).
                    var configuration = filterConfiguration
                    if let v = engine.filterRangeVariance(tag) { configuration.rangeSigmaMeters = v.squareRoot() }
                    // Without differences: exactly `smooth(ranges:floor:outputTimesSeconds:configuration:)`.
                    out += try TrackSmoother.smooth(ranges: ranges, differences: differences, floor: floor,
                                                    outputTimesSeconds: stretch.map(\.timeSeconds), seeds: stretch,
                                                    configuration: configuration)
                } else {
                    out += try TrackSmoother.smooth(stretch, configuration: filterConfiguration)
                }
                start = end
            }
        }
        out.sort { a, b in a.timeSeconds < b.timeSeconds || (a.timeSeconds == b.timeSeconds && a.tag < b.tag) }
        return out
    }
}
