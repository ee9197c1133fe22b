import Locus
import LocusCore
import LocusIO

/// Feeds a whole trace through one driven engine in time order (the whole-recording replay:
/// `--smooth`, `--truth-shift auto`, and the reference the streamed replay is tested against).
enum ReplayRun {
    struct Output {
        /// The fixes (smoothed when the driver smooths), in (time, tag) order.
        var fixes: [PositionFix]
        /// Zone events of the causal stream, in SPEC §4.7 order.
        var events: [ZoneEvent]
    }

    /// Ingests every row of `trace` in non-decreasing time (ties in file order), then finishes.
    /// - Parameter progress: called with the number of rows done, every 65,536 rows.
    /// - Throws: E4005 when the driver's smoother goes non-finite.
    static func run(trace: RangeTrace, driver: inout EngineDriver, progress: ((Int) -> Void)? = nil) throws(LocusError) -> Output {
        var routing = ReaderRouting()
        routing.update(tagIDs: trace.tags, floorIDs: trace.floors, site: driver.engine.site) { driver.tagIndex(for: $0) }
        // A trace already in time order (the usual case) is walked directly, without an index array.
        let order: [Int]? = trace.isTimeOrdered ? nil : trace.timeOrder()
        for done in trace.rows.indices {
            let row = trace.rows[order?[done] ?? done]
            if let progress, done & 0xFFFF == 0 { progress(done) }
            driver.ingest(row, routing: routing) {
                (trace.tags[Int(row.tagIndex)], row.floorIndex < 0 ? nil : trace.floors[Int(row.floorIndex)])
            }
        }
        try driver.finish()
        return Output(fixes: driver.drainFixes(), events: driver.drainEvents())
    }

    /// `run(trace:driver:progress:)` over an engine without smoothing.
    static func run(trace: RangeTrace, engine: inout PositioningEngine, progress: ((Int) -> Void)? = nil) -> Output {
        var driver = EngineDriver(engine: engine)
        defer { engine = driver.engine }
        do {
            return try run(trace: trace, driver: &driver, progress: progress)
        } catch {
            preconditionFailure("a run without a smoother does not fail: \(error)")
        }
    }
}
