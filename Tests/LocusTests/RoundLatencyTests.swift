@testable import Locus
import LocusCore
import LocusIO
import LocusTestSupport
import Testing

/// Issue 16: a complete round is solved when its last range arrives, not a pause later.
@Suite("Round latency through the engine")
struct RoundLatencyTests {
    @Test("on the hall walk (complete rounds of 8, 4 Hz) every fix after the first rounds leaves at the first tick after its round's last range, not after the 125 ms pause")
    func completeRoundsLeaveEarly() throws {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        let trace = try TraceReader.read(path: TestPaths.fixture("traces/hall-walk.csv"))
        var engine = try PositioningEngine(site: site)
        var waits: [Double] = []
        for i in 0..<trace.rows.count {
            let row = trace.measurement(i)
            engine.ingest(row, line: i + 2)
            // A live stream's wall-clock tick, 1 ms after each row (rows are ≥ 4 ms apart here): a
            // fix at the clock's own time waits for it (a later row may carry the same time).
            engine.advance(toSeconds: row.timeSeconds + 0.001)
            for fix in engine.drainFixes() where fix.timeSeconds > 2 { waits.append(row.timeSeconds + 0.001 - fix.timeSeconds) }
        }
        #expect(waits.count > 600)
        // The round's fix leaves at the tick after its last range (the pause rule alone: ≥ 126 ms).
        #expect(waits.max()! <= 0.0011)
    }
}
