#if canImport(Glibc)
import Glibc
#endif
import Locus
import LocusCore
import LocusEvaluation
import LocusIO

/// What an engine handle has done, for `locus_engine_summary`: rows offered, fixes and events
/// released (counted as they reach the poll queues, in release order) and, with truth
/// (`locus_engine_set_truth`), the comparison `locus replay --truth` makes.
struct EngineRun: Sendable {
    var rowsRead = 0
    var fixes = 0
    var events: [ZoneEvent.Kind: Int] = [:]
    var evaluation: ReplayEvaluation?
    let started = ContinuousClock.now
    var elapsedSeconds = 0.0
    /// `--filter`'s name (`kalman`, `none`).
    var filter = "kalman"

    mutating func add(_ released: ArraySlice<PositionFix>) {
        fixes += released.count
        if evaluation != nil { for f in released { evaluation?.add(f) } }
    }

    mutating func add(_ released: ArraySlice<ZoneEvent>) {
        for e in released { events[e.kind, default: 0] += 1 }
        if evaluation != nil { for e in released { evaluation?.add(e) } }
    }
}

/// `locus_engine_set_truth`: compare what the engine releases with the truth CSV at `path`
/// (`locus replay --truth`; `zoneWindow` the zone-score window, s, 0: 5).
/// - Returns: 0, or E1002 (a range was pushed already), E1003, the truth reader's E5001/E5003/E5004.
@c(locus_engine_set_truth)
public func locusEngineSetTruth(_ engine: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ zoneWindow: Double) -> Int32 {
    Status.guarded { () throws(LocusError) in
        let file = try CText.string(path, field: "path")
        guard zoneWindow == 0 || (0.001...3600).contains(zoneWindow) else {
            throw LocusError(.invalidArgument, "zone_window_s \(zoneWindow) is not in [0.001, 3600]")
        }
        try EngineRegistry.withState(engine) { (state: inout EngineState) throws(LocusError) in
            guard state.run.rowsRead == 0, !state.isFinished else { throw LocusError(.callOrder, "the truth is set before the first range") }
        }
        let truth = try GroundTruth.read(path: file)
        try EngineRegistry.withState(engine) { (state: inout EngineState) throws(LocusError) in
            guard state.run.rowsRead == 0, !state.isFinished else { throw LocusError(.callOrder, "the truth is set before the first range") }
            let c = state.engine.configuration
            state.run.evaluation = try ReplayEvaluation(site: state.engine.site, truth: truth, shiftSeconds: 0, rateHertz: c.rateHertz,
                                                        keepsTracks: false, windowSeconds: zoneWindow == 0 ? 5 : zoneWindow)
        }
    }
}

/// `locus_engine_summary`: after `locus_engine_finish`, the summary `locus replay --json` prints for
/// the same rows and options (with truth: accuracy, per tag, cdf, zone score); `elapsed_s` is the
/// wall time from the handle's creation to its finish. Notes and verdict as `locus_replay_file`.
/// - Returns: 0, or E1002 (not finished), E1003 (NULL `out_summary_json`).
@c(locus_engine_summary)
public func locusEngineSummary(_ engine: OpaquePointer?, _ summaryJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                               _ notes: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                               _ verdict: UnsafeMutablePointer<Int32>?) -> Int32 {
    RunResult.deliver(summaryJSON: summaryJSON, notes: notes, verdict: verdict) { () throws(LocusError) in
        var summary: ReplaySummary? = nil
        try EngineRegistry.withState(engine) { (state: inout EngineState) throws(LocusError) in
            guard state.isFinished else { throw LocusError(.callOrder, "the summary is made after locus_engine_finish") }
            state.collect()  // what is released reaches the queues (and the counts) before it is polled
            var evaluation = state.run.evaluation
            evaluation?.finish()
            let d = state.engine.diagnostics
            summary = ReplaySummary(fixes: state.run.fixes, ranges: state.run.rowsRead, tags: state.engine.tagCount, skipped: d.skipped,
                                    diagnostics: d, events: state.run.events,
                                    elapsedSeconds: state.run.elapsedSeconds,
                                    filter: state.run.filter, smooth: state.isSmoothing, evaluation: evaluation)
        }
        guard let summary else { return (nil, "", 0) }
        var said = ""
        let status = summary.verdict(command: "replay", input: "the pushed rows", say: { said += $0 })
        return (summary.json, said, status)
    }
}
