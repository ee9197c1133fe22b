import Locus
import Testing

/// The public Swift API of the geometry check (`import Locus`, no `@testable`): `locus geometry`'s DOP
/// map, coverage, verdict, warnings and locator suggestion, as values.
@Suite("GeometryReport (public API)")
struct GeometryAPITests {
    static func floor(_ places: [(Double, Double)], width: Double = 20, height: Double = 12) -> Floor {
        let locators = places.enumerated().map { k, p in
            Locator(address: LocatorAddress(UInt16(0x400 + k)), position: Point3(x: p.0, y: p.1, z: 2.5))
        }
        return Floor(id: "1F", widthMeters: width, heightMeters: height, tagHeightMeters: 1.1, locators: locators)
    }

    static let hall = floor([(0, 0), (20, 0), (20, 12), (0, 12), (10, 0), (20, 6), (10, 12), (0, 6)])

    @Test("Eight locators around a 20 m × 12 m hall: 240 cells of 1 m, all covered, verdict good, the map's edges and values, no warning")
    func goodHall() throws {
        let report = try GeometryReport(floor: Self.hall, options: GeometryReportOptions(gridMeters: 1))
        #expect(report.mode == .planar && report.locatorsNeeded == 3 && report.locators.count == 8)
        let s = report.statistics
        #expect(s.cells == 240 && s.solvableCells == 240 && s.coveredCells == 240 && s.coverage == 1)
        #expect(s.outOfRangeCells == 0 && s.poorCells == 0 && s.vdopMax == nil)
        let p50 = try #require(s.hdopP50), p95 = try #require(s.hdopP95), worst = try #require(s.hdopMax)
        #expect(0.5 < p50 && p50 <= p95 && p95 <= worst && worst < 2)
        #expect(report.verdict == .good && report.warnings.isEmpty)
        let map = report.hdopMap
        #expect(map.xEdgesMeters.count == 21 && map.yEdgesMeters.count == 13 && map.hdop.count == 240)
        #expect(map.xEdgesMeters.first == 0 && map.xEdgesMeters.last == 20 && map.yEdgesMeters.last == 12)
        #expect(map.hdop.compactMap { $0 }.max() == worst)
    }

    @Test("Three locators along one wall with a 9 m range: cells out of range and poor, verdict poor, the warnings by key; a fourth locator is proposed and improves the floor")
    func poorLayoutAndSuggestion() throws {
        let wall = Self.floor([(2, 0), (10, 0), (18, 0)])
        let options = GeometryReportOptions(gridMeters: 1, maximumRangeMeters: 9)
        let report = try GeometryReport(floor: wall, options: options)
        #expect(report.verdict == .poor)
        #expect(report.statistics.outOfRangeCells > 0 && report.statistics.coverage < 0.8)
        let keys = Set(report.warnings.map(\.key))
        #expect(keys.contains("geometry.outOfRange"), "\(report.warnings)")
        #expect(report.warnings.allSatisfy { $0.description == "\($0.key): \($0.message)" && !$0.message.isEmpty })
        let suggestion = try report.suggestion()
        #expect(suggestion.improves && suggestion.candidates > 0)
        #expect((0...20).contains(suggestion.position.x) && (0...12).contains(suggestion.position.y) && suggestion.position.z == 2.5)
        #expect(suggestion.after.coverage > suggestion.before.coverage)
        #expect(suggestion.before == report.statistics)
    }

    @Test("The two numeric paths agree, TDoA needs one more locator in range, and a grid too fine for the cell limit is refused with E1003")
    func optionsAndErrors() throws {
        var kernel = GeometryReportOptions(gridMeters: 0.7)
        kernel.path = .kernel
        let a = try GeometryReport(floor: Self.hall, options: kernel)
        let b = try GeometryReport(floor: Self.hall, options: GeometryReportOptions(gridMeters: 0.7))
        let ha = a.hdopMap.hdop.map { $0 ?? -1 }, hb = b.hdopMap.hdop.map { $0 ?? -1 }
        #expect(ha.count == hb.count && zip(ha, hb).allSatisfy { abs($0 - $1) < 1e-9 })
        let tdoa = try GeometryReport(floor: Self.hall, options: GeometryReportOptions(gridMeters: 1, measurement: .tdoa))
        #expect(tdoa.locatorsNeeded == 4 && tdoa.options.measurement == .tdoa)
        do {
            _ = try GeometryReport(floor: Self.hall, options: GeometryReportOptions(gridMeters: 0.001))
            Issue.record("a 20 m × 12 m floor at 1 mm is 240 million cells")
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }
}
