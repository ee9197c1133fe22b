import Locus
import Testing

/// `FloorSession.diagnostics` through the public API (`import Locus`, no `@testable`): the rows a session
/// could not use, by reason, and the epochs it formed — what `locus_engine_skipped`/`locus_engine_stats`
/// give C users and `skipped` gives `locus replay --json`.
@Suite("FloorSession.diagnostics (public API)")
struct SessionDiagnosticsTests {
    static let floor: Floor = {
        let places: [(Double, Double)] = [(0, 0), (20, 0), (20, 12), (0, 12), (10, 0), (10, 12)]
        let locators = places.enumerated().map { k, p in
            Locator(address: LocatorAddress(UInt16(0x500 + k)), position: Point3(x: p.0, y: p.1, z: 2.5))
        }
        return Floor(id: "1F", widthMeters: 20, heightMeters: 12, tagHeightMeters: 1.1, locators: locators)
    }()

    @Test("Unknown locators, negative and non-finite ranges are skipped and counted by reason; the good rounds form epochs and fixes")
    func skippedByReason() throws {
        let site = Site(building: .init(id: "b"), floors: [Self.floor])
        let session = try FloorSession(site: site)
        try session.begin()
        #expect(session.diagnostics == session.diagnostics && session.diagnostics.skipped.total == 0)
        let tag = Point3(x: 8, y: 5, z: 1.1)
        var rows: [RangeMeasurement] = []
        for round in 0..<20 {
            let t = Double(round) * 0.25
            for (k, l) in Self.floor.locators.enumerated() {
                rows.append(RangeMeasurement(timeSeconds: t + 0.004 * Double(k), tag: "T1", locator: l.address,
                                             rangeMeters: l.position.distance(to: tag)))
            }
        }
        rows.insert(RangeMeasurement(timeSeconds: 1.001, tag: "T1", locator: LocatorAddress(0x0999), rangeMeters: 4), at: 30)
        rows.insert(RangeMeasurement(timeSeconds: 1.002, tag: "T2", locator: LocatorAddress(0x500), rangeMeters: -1), at: 31)
        rows.insert(RangeMeasurement(timeSeconds: 1.003, tag: "T2", locator: LocatorAddress(0x501), rangeMeters: .nan), at: 32)
        rows.insert(RangeMeasurement(timeSeconds: 1.004, tag: "T2", locator: LocatorAddress(0x502), rangeMeters: .infinity), at: 33)
        try session.ingest(contentsOf: rows)
        session.advance(toSeconds: 10)
        let d = session.diagnostics
        #expect(d.skipped.count(.unknownAnchor) == 1 && d.skipped.count(.negativeRange) == 1 && d.skipped.count(.nonFinite) == 2)
        #expect(d.skipped.total == 4 && d.skipped.firstLine(.nonFinite) == 0)
        #expect(d.skipped.nonZero.map(\.reason.rawValue) == ["negative_range", "non_finite", "unknown_anchor"])
        #expect(d.epochs == 20 && d.failedEpochs.isEmpty && d.rejectedRanges == 0 && d.differenceRows == 0)
        session.end()
    }
}
