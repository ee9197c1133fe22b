import Locus
import LocusCore
import LocusIO

/// Feeds a trace through an engine in time order.
enum ReplayRun {
    struct Output {
        /// The causal fixes, in (time, tag) order.
        var fixes: [PositionFix]
        /// Zone events of the causal stream, in SPEC §4.7 order.
        var events: [ZoneEvent]
    }

    /// Ingests every row of `trace` in non-decreasing time (ties in file order), then finishes.
    /// - Parameter progress: called with the number of rows done, every 65,536 rows.
    /// - Parameter smoothing: when given, every row is recorded there right after the engine took it (for `--smooth`).
    static func run(trace: RangeTrace, engine: inout PositioningEngine, smoothing: inout OfflineSmoothing?,
                            progress: ((Int) -> Void)? = nil) -> Output {
        let tagIndex = trace.tags.map { engine.tagIndex(for: $0) }
        let floorIndex = trace.floors.map { engine.floorIndex($0) }
        let defaultFloor = engine.defaultFloor
        var skippedFloor = SkipTally()
        // A trace already in time order (the usual case) is walked directly, without an index array.
        let order: [Int]? = trace.isTimeOrdered ? nil : trace.timeOrder()
        for done in 0..<trace.count {
            let i = order?[done] ?? done
            if let progress, done & 0xFFFF == 0 { progress(done) }
            let f = trace.floorIndex[i]
            var floor = defaultFloor
            if f >= 0 {
                guard let known = floorIndex[Int(f)] else { skippedFloor.record(.unknownFloor, line: Int(trace.line[i])); continue }
                floor = known
            }
            engine.ingest(tag: tagIndex[Int(trace.tagIndex[i])], floor: floor, locator: trace.locator[i],
                          rangeMeters: trace.rangeMeters[i], timeSeconds: trace.timeSeconds[i], line: Int(trace.line[i]))
            if smoothing != nil { smoothing?.record(trace.measurement(i), ingestedBy: engine) }
        }
        engine.finish()
        // The engine's buffers are taken as they are (no second array of every fix).
        let fixes = engine.drainFixes()
        let events = engine.drainEvents()
        engine.recordSkipped(skippedFloor)
        return Output(fixes: fixes, events: events)
    }

    /// `run(trace:engine:smoothing:progress:)` without smoothing.
    static func run(trace: RangeTrace, engine: inout PositioningEngine, progress: ((Int) -> Void)? = nil) -> Output {
        var none: OfflineSmoothing? = nil
        return run(trace: trace, engine: &engine, smoothing: &none, progress: progress)
    }
}
