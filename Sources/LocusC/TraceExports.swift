import Locus
import LocusCore
import LocusIO

// The trace-file half of include/locus.h: a whole trace.csv pushed with the library's own reader,
// and the engine's skipped rows by reason. Together they let a binding (the Python package) replay a
// file exactly as `locus replay` does — the same rows skipped for the same reasons — without
// re-implementing the CSV rules (SPEC §2) in another language.

/// `locus_engine_push_trace_file`: reads the trace file at `path` with `locus replay`'s reader and
/// pushes its usable rows in non-decreasing time (ties in file order). Rows the reader cannot use
/// (missing field, unparseable number, invalid anchor) and rows the engine skips are counted in the
/// engine's tally (`locus_engine_skipped`), never reported as a failure.
///
/// - Parameters: `outRows` (may be NULL) receives the data rows of the file (usable and skipped by
///   the reader), `outAccepted` (may be NULL) the rows that joined an epoch.
/// - Returns: 0, E1003 (NULL path), E1002 (engine finished), E5001 (unreadable), E5003 (a required
///   column missing), E5004 (no header).
@c(locus_engine_push_trace_file)
public func locusEnginePushTraceFile(_ engine: OpaquePointer?, _ path: UnsafePointer<CChar>?,
                                     _ outRows: UnsafeMutablePointer<Int>?, _ outAccepted: UnsafeMutablePointer<Int>?) -> Int32 {
    outRows?.pointee = 0
    outAccepted?.pointee = 0
    return Status.guarded { () throws(LocusError) in
        let file = try CText.string(path, field: "path")
        _ = try EngineRegistry.box(engine)
        let trace = try TraceReader.read(path: file)
        var accepted = 0
        try EngineRegistry.withState(engine) { (state: inout EngineState) throws(LocusError) in
            guard !state.isFinished else { throw LocusError(.callOrder, "the engine is finished") }
            let order: [Int]? = trace.isTimeOrdered ? nil : trace.timeOrder()
            for k in trace.rows.indices {
                let i = order?[k] ?? k
                let before = state.engine.diagnostics.skipped.total
                if trace.rows[i].isDifference { state.ingest(trace.difference(i)) } else { state.ingest(trace.measurement(i)) }
                if state.engine.diagnostics.skipped.total == before { accepted += 1 }
            }
            state.rangesAccepted += accepted
            state.run.rowsRead += trace.skipped.total
            state.driver.recordSkipped(trace.skipped)
        }
        outRows?.pointee = trace.rows.count + trace.skipped.total
        outAccepted?.pointee = accepted
    }
}

/// `locus_engine_skipped`: the engine's skipped rows by reason, in the order of `enum
/// locus_skip_reason` (SkipReason's report keys: missing_field, unparseable_number, invalid_anchor,
/// unknown_anchor, unknown_floor, non_finite, negative_range, time_backwards, clock_jump,
/// range_too_long, late_range, future_time, tag_limit, invalid_tag, same_locator,
/// difference_too_long). Writes min(capacity, LOCUS_SKIP_REASON_COUNT) counters into `out`.
/// - Returns: 0, or E1003 (NULL `out` with a positive capacity).
@c(locus_engine_skipped)
public func locusEngineSkipped(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<Int64>?, _ capacity: Int) -> Int32 {
    Status.guarded { () throws(LocusError) in
        guard capacity >= 0 else { throw LocusError(.invalidArgument, "capacity is too large") }
        guard capacity == 0 || out != nil else { throw LocusError(.invalidArgument, "out is NULL") }
        try EngineRegistry.withState(engine) { (state: inout EngineState) throws(LocusError) in
            guard let out else { return }
            let tally = state.engine.diagnostics.skipped
            for (k, reason) in SkipReasonOrder.reasons.prefix(capacity).enumerated() {
                out[k] = Int64(tally.count(reason))
            }
        }
    }
}

/// The C order of the skip reasons (`enum locus_skip_reason`); stable: new reasons are appended.
enum SkipReasonOrder {
    static let reasons: [SkipReason] = [.missingField, .unparseableNumber, .invalidAnchor, .unknownAnchor, .unknownFloor,
                                        .nonFinite, .negativeRange, .timeBackwards, .clockJump, .rangeTooLong,
                                        .lateRange, .futureTime, .tagLimit, .invalidTag,
                                        .sameLocator, .differenceTooLong]
}
