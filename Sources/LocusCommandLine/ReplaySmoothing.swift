import Locus
import LocusCore
import LocusIO
import LocusSolvers

/// `locus replay --smooth`: the offline smoother over each tag's whole recording.
///
/// With the tightly coupled filter the smoother works on the tag's ranges (extended RTS,
/// `TrackSmoother.smooth(ranges:…)`) and reports at the causal fix times; with the loosely coupled
/// filter or `--filter none` it smooths the least-squares fixes (`TrackSmoother.smooth(_:)`). A tag
/// that changes floor is smoothed per stretch on one floor. Zone events are not affected: they come
/// from the causal stream, as they would live.
enum ReplaySmoothing {
    static func smooth(fixes: [PositionFix], trace: RangeTrace, site: Site, engine: PositioningEngine,
                       tracking: EngineConfiguration.Tracking) throws(LocusError) -> [PositionFix] {
        var filterConfiguration = TrackFilterConfiguration.standard
        if case .kalman(let c) = tracking { filterConfiguration = c }
        let rangesBased: Bool = {
            if case .kalman(let c) = tracking { return c.coupling == .tight }
            return false
        }()
        // Fixes by tag, in time order (the input is sorted by time then tag).
        var byTag: [TagID: [PositionFix]] = [:]
        var tagOrder: [TagID] = []
        for f in fixes {
            if byTag[f.tag] == nil { tagOrder.append(f.tag) }
            byTag[f.tag, default: []].append(f)
        }
        // Ranges by tag, in time order, when the smoother works on ranges.
        var rangesByTag: [TagID: [RangeMeasurement]] = [:]
        if rangesBased {
            for i in trace.timeOrder() {
                let m = trace.measurement(i)
                rangesByTag[m.tag, default: []].append(m)
            }
        }
        var out: [PositionFix] = []
        out.reserveCapacity(fixes.count)
        for tag in tagOrder {
            let tagFixes = byTag[tag] ?? []
            // Stretches on one floor.
            var start = 0
            while start < tagFixes.count {
                var end = start
                while end < tagFixes.count, tagFixes[end].floor == tagFixes[start].floor { end += 1 }
                let stretch = Array(tagFixes[start..<end])
                let floorID = stretch[0].floor
                if rangesBased, let floorIndex = engine.floorIndex(floorID) {
                    var floor = engine.floors[floorIndex].floor
                    if let offset = engine.tagRangeOffset(tag), offset.floorIndex == floorIndex {
                        // The tag's common range offset, as the causal engine estimated it by the end.
                        for k in floor.locators.indices { floor.locators[k].biasMeters += offset.offsetMeters }
                    }
                    let t0 = stretch[0].timeSeconds - filterConfiguration.reinitializeAfterSeconds
                    let t1 = stretch[stretch.count - 1].timeSeconds
                    let ranges = (rangesByTag[tag] ?? []).filter { m in
                        m.timeSeconds >= t0 && m.timeSeconds <= t1 && (m.floor ?? engine.floors[engine.defaultFloor].floor.id) == floorID
                    }
                    out += try TrackSmoother.smooth(ranges: ranges, floor: floor, outputTimesSeconds: stretch.map(\.timeSeconds),
                                                    configuration: filterConfiguration)
                } else {
                    out += try TrackSmoother.smooth(stretch, configuration: filterConfiguration)
                }
                start = end
            }
        }
        return out
    }
}
