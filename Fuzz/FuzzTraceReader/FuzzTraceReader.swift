import Locus
import LocusCore
import LocusIO
import LocusTestSupport

/// libFuzzer entry point: arbitrary bytes as a range trace, through the trace reader and the engine.
///
/// Invariants checked (a violation traps):
/// - `TraceReader.parse` returns a trace or throws E5003/E5004, nothing else, and reads what the
///   scanner alone reads (`fastRows: false`);
/// - every kept row has a finite time, a finite non-negative range, and a valid tag index;
/// - every fix and every zone event the engine releases is finite, and events come out in
///   non-decreasing time.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTraceReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let trace: RangeTrace
    do {
        trace = try TraceReader.parse(bytes.span, file: "fuzz.csv")
    } catch {
        precondition(error.code == .csvMissingColumn || error.code == .malformedCSV, "unexpected error \(error)")
        return 0
    }
    // The fast row paths (word at a time, byte at a time) against the scanner alone: the same rows,
    // bit for bit, the same ids and skips.
    guard let reference = try? TraceReader.parse(bytes.span, file: "fuzz.csv", fastRows: false) else {
        preconditionFailure("the scanner path threw where the fast path did not")
    }
    precondition(trace.rows.count == reference.rows.count
                 && zip(trace.rows, reference.rows).allSatisfy { a, b in
                     a == b && a.timeSeconds.bitPattern == b.timeSeconds.bitPattern && a.rangeMeters.bitPattern == b.rangeMeters.bitPattern
                 }
                 && trace.tags == reference.tags && trace.floors == reference.floors && trace.skipped == reference.skipped,
                 "fast and scanner paths read the trace differently")
    for row in trace.rows {
        precondition(row.timeSeconds.isFinite, "kept row with a non-finite time")
        precondition(row.rangeMeters.isFinite && row.rangeMeters >= 0, "kept row with a bad range")
        precondition(Int(row.tagIndex) < trace.tags.count, "tag index in range")
    }
    guard var engine = try? PositioningEngine(site: FuzzSite.site) else { preconditionFailure("fuzz site is valid") }
    for i in trace.timeOrder() {
        engine.ingest(trace.measurement(i), line: Int(trace.rows[i].line))
        if i % 7 == 0 { engine.advance(toSeconds: trace.rows[i].timeSeconds + 0.5) }
    }
    engine.finish()
    var lastEventTime = -Double.infinity
    for fix in engine.drainFixes() {
        precondition(fix.timeSeconds.isFinite && fix.position.isFinite && fix.covariance.isFinite, "finite fix")
        precondition(fix.quality.hdop.isFinite && fix.quality.pdop.isFinite, "finite DOP")
    }
    for event in engine.drainEvents() {
        precondition(event.timeSeconds.isFinite, "finite event time")
        precondition(event.timeSeconds >= lastEventTime, "events in time order")
        lastEventTime = event.timeSeconds
    }
    return 0
}
