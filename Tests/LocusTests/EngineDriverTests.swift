@testable import Locus
import LocusCore
@testable import LocusIO
@testable import LocusSimulation
import LocusTestSupport
import Testing

@Suite("Engine driver")
struct EngineDriverTests {
    static let site = Site(building: .init(id: "b"), floors: [OfflineSmoothingTests.floor])

    static func rows() -> [RangeMeasurement] {
        SimulatedRecording.simulate(floor: OfflineSmoothingTests.floor, tagCount: 2, durationSeconds: 40, seed: 3).ranges
    }

    @Test("Smoothing replacing and alongside give the same smoothed run, and alongside releases the causal fixes of a bare engine")
    func smoothingModes() throws {
        var bare = try PositioningEngine(site: Self.site)
        var replacing = try EngineDriver(site: Self.site, configuration: .standard, smoothing: .replacing)
        var alongside = try EngineDriver(site: Self.site, configuration: .standard, smoothing: .alongside)
        var released: [PositionFix] = [], causal: [PositionFix] = [], held: [PositionFix] = []
        for (k, m) in Self.rows().enumerated() {
            bare.ingest(m)
            replacing.ingest(m)
            alongside.ingest(m)
            if k % 97 == 0 {
                held += replacing.drainFixes()
                released += alongside.drainFixes()
                causal += bare.drainFixes()
            }
        }
        #expect(held.isEmpty, "replacing holds every position until finish")
        bare.finish()
        try replacing.finish()
        try alongside.finish()
        causal += bare.drainFixes()
        released += alongside.drainFixes()
        let smoothed = replacing.drainFixes()
        #expect(released.map(\.bitPatterns) == causal.map(\.bitPatterns))
        #expect(try alongside.smoothedFixes().map(\.bitPatterns) == smoothed.map(\.bitPatterns))
        #expect(smoothed.count == causal.count && !smoothed.isEmpty)
        #expect(replacing.drainFixes().isEmpty, "the smoothed run is released once")
        #expect(throws: LocusError.self) { try replacing.smoothedFixes() }
    }

    @Test("Rows routed through a reader's ids reach the engine as measurements by id do; an unknown floor is skipped and counted with its line")
    func routedRows() throws {
        var byID = try EngineDriver(site: Self.site, configuration: .standard)
        var routed = try EngineDriver(site: Self.site, configuration: .standard)
        let tagIDs: [TagID] = ["T-b", "T-a"], floorIDs: [FloorID] = ["1F", "9F"]
        var routing = ReaderRouting()
        routing.update(tagIDs: tagIDs, floorIDs: floorIDs, site: Self.site) { routed.tagIndex(for: $0) }
        #expect(routing.floors == [FloorIndex(0), nil])
        let rows = Self.rows()
        for (k, m) in rows.enumerated() {
            let tag = Int32(m.tag == rows[0].tag ? 0 : 1)
            let floor: Int32 = k == 5 ? 1 : (k % 2 == 0 ? 0 : -1)
            let row = TraceRow(timeSeconds: m.timeSeconds, rangeMeters: m.rangeMeters, tagIndex: tag, floorIndex: floor,
                               line: Int32(k + 2), locator: m.locator.rawValue)
            routed.ingest(row, routing: routing)
            if k != 5 { byID.ingest(RangeMeasurement(timeSeconds: m.timeSeconds, tag: tagIDs[Int(tag)], locator: m.locator,
                                                      rangeMeters: m.rangeMeters, floor: floor == 0 ? "1F" : nil), line: k + 2) }
        }
        try routed.finish()
        try byID.finish()
        #expect(routed.drainFixes().map(\.bitPatterns) == byID.drainFixes().map(\.bitPatterns))
        #expect(routed.diagnostics.skipped.count(.unknownFloor) == 1)
        #expect(routed.diagnostics.skipped.firstLine(.unknownFloor) == 7)
        #expect(routed.tagIndex(for: "T-a") == routed.tagIndex(for: "T-a") && routed.floorIndex(of: "9F") == nil)
    }
}
