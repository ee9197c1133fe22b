import Locus
import LocusCore
import LocusIO

/// A small fixed site for the trace fuzzer: 4 locators with addresses 1…4 (easy for the fuzzer to
/// hit), one at another height, and two zones (one large, one small with `inCount` 2).
private let fuzzSite: Site = {
    var floor = Floor(id: FloorID("1F"), tagHeightMeters: 1.1)
    floor.locators = [
        Locator(address: LocatorAddress(1), position: Point3(x: 0, y: 0, z: 2.5)),
        Locator(address: LocatorAddress(2), position: Point3(x: 20, y: 0, z: 2.5)),
        Locator(address: LocatorAddress(3), position: Point3(x: 20, y: 15, z: 2.5)),
        Locator(address: LocatorAddress(4), position: Point3(x: 0, y: 15, z: 3.0), biasMeters: 0.1),
    ]
    var counted = ZoneRules.standard
    counted.inCount = 2
    floor.zones = [
        Zone(id: ZoneID("hall"), polygon: [Point2(x: 1, y: 1), Point2(x: 19, y: 1), Point2(x: 19, y: 14), Point2(x: 1, y: 14)]),
        Zone(id: ZoneID("desk"), polygon: [Point2(x: 5, y: 5), Point2(x: 7, y: 5), Point2(x: 6, y: 7)], rules: counted),
    ]
    var second = Floor(id: FloorID("2F"))
    second.locators = floor.locators
    return Site(building: Site.Building(id: "fuzz"), floors: [floor, second])
}()

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
    guard var engine = try? PositioningEngine(site: fuzzSite) else { preconditionFailure("fuzz site is valid") }
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
