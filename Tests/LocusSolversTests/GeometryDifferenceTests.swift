import LocusCore
import LocusNumerics
@testable import LocusSolvers
import Testing

/// `GeometryReport` with `measurement: .tdoa` (`locus geometry --tdoa`): the map is
/// `DifferenceGeometry`'s DOP, TDoA punishes points outside the locators' hull, coverage needs 4
/// (planar) / 5 (spatial) locators heard, and the suggestion is judged on the difference DOP.
@Suite("geometry report: TDoA (uplink differences)")
struct GeometryDifferenceTests {
    /// A 40 × 40 m floor with a 20 m square of locators in its middle (10…30 m) and one at the centre:
    /// a quarter of the floor inside the hull, the rest outside.
    static var square: Floor {
        Floor(id: "sq", widthMeters: 40, heightMeters: 40, tagHeightMeters: 1.1,
              locators: GeometryFixture.locators([Point3(x: 10, y: 10, z: 2.6), Point3(x: 30, y: 10, z: 2.6), Point3(x: 30, y: 30, z: 2.6),
                                                  Point3(x: 10, y: 30, z: 2.6), Point3(x: 20, y: 20, z: 2.6)]))
    }

    static func options(_ measurement: GeometryReportOptions.Measurement, grid: Double = 1, range: Double = 60) -> GeometryReportOptions {
        var o = GeometryReportOptions(gridMeters: grid, maximumRangeMeters: range)
        o.measurement = measurement
        return o
    }

    /// The cell of `report` whose centre is nearest (x, y).
    static func cell(_ report: GeometryReport, x: Double, y: Double) -> GeometryCell {
        let i = Int((x - report.grid.originX) / report.grid.cellWidthMeters)
        let j = Int((y - report.grid.originY) / report.grid.cellHeightMeters)
        return report.cells[j * report.grid.columns + i]
    }

    @Test("each cell is DifferenceGeometry's DOP with the nearest locator the reference, and any reference gives the same")
    func cellsAreDifferenceGeometry() throws {
        let floor = GeometryFixture.hall
        let report = try GeometryReport(floor: floor, options: Self.options(.tdoa, grid: 2.5))
        let locators = floor.locators.map(\.position)
        for (index, c) in report.grid.centres.enumerated() {
            let p = Point3(x: c.x, y: c.y, z: floor.tagHeightMeters)
            let nearest = locators.indices.min { locators[$0].distance(to: p) < locators[$1].distance(to: p) }!
            let differences = [Double](repeating: 0, count: locators.count)
            let pairs = DifferencePair.uplink(count: locators.count, reference: nearest, differencesMeters: differences)
            let expected = try DifferenceGeometry.dop(locators: locators.span, pairs: pairs.span, at: p, planar: true)
            let hdop = try #require(report.cells[index].hdop)
            #expect(hdop == expected.hdop)
            // The information of one blink does not depend on the reference (emission time eliminated).
            let other = DifferencePair.uplink(count: locators.count, reference: (nearest + 3) % locators.count, differencesMeters: differences)
            let again = try DifferenceGeometry.dop(locators: locators.span, pairs: other.span, at: p, planar: true)
            #expect(abs(again.hdop - hdop) <= 1e-9 * hdop)
        }
    }

    @Test("outside the locators' hull TDoA HDOP is ≥ 2× the ranging HDOP; inside they are alike")
    func outsideHullIsPunished() throws {
        let range = try GeometryReport(floor: Self.square, options: Self.options(.range))
        let tdoa = try GeometryReport(floor: Self.square, options: Self.options(.tdoa))
        // Outside: 8 m beyond the hull's west edge, and the corner region.
        for (x, y) in [(2.5, 20.5), (20.5, 2.5), (3.5, 3.5), (37.5, 36.5)] {
            let r = try #require(Self.cell(range, x: x, y: y).hdop), t = try #require(Self.cell(tdoa, x: x, y: y).hdop)
            #expect(t >= 2 * r, "(\(x), \(y)): TDoA \(t) vs ranging \(r)")
        }
        // Inside, near the centre: within 1.5× of ranging.
        for (x, y) in [(15.5, 15.5), (20.5, 24.5), (25.5, 18.5)] {
            let r = try #require(Self.cell(range, x: x, y: y).hdop), t = try #require(Self.cell(tdoa, x: x, y: y).hdop)
            #expect(t <= 1.5 * r, "(\(x), \(y)): TDoA \(t) vs ranging \(r)")
        }
        // Over the floor: ranging covers it all, TDoA about the hull and a margin.
        #expect(range.statistics.coverage == 1)
        #expect(tdoa.statistics.coverage > 0.25 && tdoa.statistics.coverage < 0.6, "\(tdoa.statistics.coverage)")
        #expect(tdoa.warnings.contains { $0.key == "geometry.poorHDOP" })
    }

    @Test("coverage needs 4 locators heard on a planar floor: 3 give ranging coverage but no TDoA fix")
    func planarThreshold() throws {
        let three = Floor(id: "t", widthMeters: 10, heightMeters: 10, tagHeightMeters: 1,
                          locators: GeometryFixture.locators([Point3(x: 0, y: 0, z: 2.5), Point3(x: 10, y: 0, z: 2.5), Point3(x: 5, y: 10, z: 2.5)]))
        let range = try GeometryReport(floor: three, options: Self.options(.range))
        let tdoa = try GeometryReport(floor: three, options: Self.options(.tdoa))
        #expect(range.statistics.coverage > 0.5)
        #expect(tdoa.locatorsNeeded == 4 && range.locatorsNeeded == 3)
        #expect(tdoa.statistics.solvableCells == 0 && tdoa.statistics.coverage == 0)
        #expect(tdoa.statistics.outOfRangeCells == tdoa.grid.count)
        #expect(tdoa.warnings.first?.key == "geometry.tooFewLocators")
        #expect(tdoa.warnings.first?.message.hasSuffix("(planar mode, TDoA)") == true)
        var four = three
        four.locators.append(Locator(address: LocatorAddress(0x2003), position: Point3(x: 5, y: 3, z: 2.5)))
        let solvable = try GeometryReport(floor: four, options: Self.options(.tdoa))
        #expect(solvable.statistics.solvableCells == solvable.grid.count)
        // A 7 m range: cells hearing only 3 locators are out of range for TDoA, not for ranging.
        let near = try GeometryReport(floor: four, options: Self.options(.tdoa, range: 7))
        let nearRange = try GeometryReport(floor: four, options: Self.options(.range, range: 7))
        #expect(near.statistics.outOfRangeCells > nearRange.statistics.outOfRangeCells)
        for c in near.cells where c.locatorsInRange < 4 { #expect(c.hdop == nil) }
    }

    @Test("a spatial floor needs 5 locators heard")
    func spatialThreshold() throws {
        let points = [Point3(x: 0, y: 0, z: 0.5), Point3(x: 10, y: 0, z: 6), Point3(x: 10, y: 10, z: 0.5), Point3(x: 0, y: 10, z: 6)]
        let four = Floor(id: "s", widthMeters: 10, heightMeters: 10, tagHeightMeters: 1, locators: GeometryFixture.locators(points))
        let tdoa4 = try GeometryReport(floor: four, options: Self.options(.tdoa))
        try #require(tdoa4.mode == .spatial)
        #expect(tdoa4.locatorsNeeded == 5)
        #expect(tdoa4.statistics.solvableCells == 0)
        let range4 = try GeometryReport(floor: four, options: Self.options(.range))
        #expect(range4.statistics.solvableCells > 0)
        let five = Floor(id: "s", widthMeters: 10, heightMeters: 10, tagHeightMeters: 1,
                         locators: GeometryFixture.locators(points + [Point3(x: 5, y: 5, z: 3.5)]))
        let tdoa5 = try GeometryReport(floor: five, options: Self.options(.tdoa))
        #expect(tdoa5.mode == .spatial)
        #expect(tdoa5.statistics.solvableCells > 0)
        #expect(tdoa5.statistics.vdopMax != nil)
    }

    @Test("the ranging report is unchanged by the TDoA option's existence (default measurement: range)")
    func rangeDefault() throws {
        #expect(GeometryReportOptions.standard.measurement == .range)
        let a = try GeometryReport(floor: GeometryFixture.hall, options: Self.options(.range, grid: 2))
        var o = GeometryReportOptions(gridMeters: 2, maximumRangeMeters: 60)
        o.path = .kernel
        let b = try GeometryReport(floor: GeometryFixture.hall, options: o)
        #expect(a.statistics.cells == b.statistics.cells && a.statistics.coveredCells == b.statistics.coveredCells)
    }

    @Test("--suggest with TDoA scores candidates on the difference DOP and improves the square's outside")
    func suggestion() throws {
        let report = try GeometryReport(floor: Self.square, options: Self.options(.tdoa, grid: 1))
        let s = try report.suggestion()
        #expect(s.before == report.statistics)
        #expect(s.improves)
        #expect((s.after.hdopP95 ?? .infinity) < (s.before.hdopP95 ?? .infinity))
        // `after` is the TDoA report with the proposed locator (not a ranging one).
        var floor = Self.square
        floor.locators.append(Locator(address: LocatorAddress(0x2FFF), position: s.position))
        let check = try GeometryReport(floor: floor, options: Self.options(.tdoa, grid: 1))
        #expect(check.statistics == s.after)
        // The proposal lies outside the hull (10…30 m): that is where TDoA is poor.
        #expect(s.position.x < 10 || s.position.x > 30 || s.position.y < 10 || s.position.y > 30)
    }

    @Test("the locators' hull: counter-clockwise, interior points dropped, collinear layouts give fewer than 3")
    func hull() {
        let hull = GeometryReport.locatorHull(Self.square.locators.map(\.position))
        #expect(hull == [Point2(x: 10, y: 10), Point2(x: 30, y: 10), Point2(x: 30, y: 30), Point2(x: 10, y: 30)])
        let line = GeometryReport.locatorHull([Point3(x: 0, y: 0, z: 0), Point3(x: 1, y: 0, z: 0), Point3(x: 2, y: 0, z: 0)])
        #expect(line.count < 3)
    }
}
