import LocusCore
import LocusIO

extension EngineDriver {
    /// Feeds every row of `trace` in non-decreasing time (ties in file order), then finishes, and
    /// drains: the fixes (smoothed when the driver smooths) in (time, tag) order and the zone events
    /// of the causal stream in SPEC §4.7 order. The whole-recording replay (`locus replay --smooth`,
    /// `--truth-shift auto`, the calibration's held-out scoring, and the reference the streamed replay
    /// is tested against); its ids are routed once (`ReaderRouting`).
    /// - Parameter progress: called with the number of rows done, every 65,536 rows.
    /// - Throws: E4005 when the driver's smoother goes non-finite.
    package mutating func replay(_ trace: RangeTrace, progress: ((Int) -> Void)? = nil) throws(LocusError)
        -> (fixes: [PositionFix], events: [ZoneEvent]) {
        var routing = ReaderRouting()
        routing.update(tagIDs: trace.tags, floorIDs: trace.floors, site: engine.site) { tagIndex(for: $0) }
        // A trace already in time order (the usual case) is walked directly, without an index array.
        let order: [Int]? = trace.isTimeOrdered ? nil : trace.timeOrder()
        for done in trace.rows.indices {
            let row = trace.rows[order?[done] ?? done]
            if let progress, done & 0xFFFF == 0 { progress(done) }
            ingest(row, routing: routing) {
                (trace.tags[Int(row.tagIndex)], row.floorIndex < 0 ? nil : trace.floors[Int(row.floorIndex)])
            }
        }
        try finish()
        return (drainFixes(), drainEvents())
    }
}
