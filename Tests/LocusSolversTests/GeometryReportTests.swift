#if canImport(Glibc)
import Glibc
#endif
import LocusCore
@testable import LocusSolvers
import Testing

/// Floors for the geometry tests.
enum GeometryFixture {
    static func locators(_ points: [Point3]) -> [Locator] {
        points.enumerated().map { i, p in Locator(address: LocatorAddress(UInt16(0x2000 + i)), position: p) }
    }

    /// The room of Fixtures/sites/poor-geometry.json: 10 × 8 m, five locators along one wall.
    static var poorGeometry: Floor {
        Floor(id: "lab", widthMeters: 10, heightMeters: 8, tagHeightMeters: 1.0, sessionID: 1,
              locators: locators([Point3(x: 0.5, y: 0.2, z: 2.5), Point3(x: 3, y: 0.25, z: 2.5), Point3(x: 5, y: 0.2, z: 2.5),
                                  Point3(x: 7, y: 0.3, z: 2.5), Point3(x: 9.5, y: 0.2, z: 2.5)]),
              zones: [Zone(id: "bench", polygon: [Point2(x: 2, y: 6), Point2(x: 8, y: 6), Point2(x: 8, y: 7.5), Point2(x: 2, y: 7.5)])])
    }

    /// The hall of Fixtures/sites/hall.json (40 × 25 m, 8 locators on the walls).
    static var hall: Floor {
        let p: [(Double, Double, Double)] = [(0.3, 0.3, 2.6), (20, 0.3, 2.6), (39.7, 0.3, 2.6), (39.7, 12.5, 2.6),
                                             (39.7, 24.7, 2.6), (20, 24.7, 2.6), (0.3, 24.7, 2.6), (0.3, 12.5, 2.55)]
        return Floor(id: "1F", widthMeters: 40, heightMeters: 25, tagHeightMeters: 1.1,
                     locators: locators(p.map { Point3(x: $0.0, y: $0.1, z: $0.2) }))
    }
}

@Suite("geometry report: DOP map, coverage, warnings, suggestion")
struct GeometryReportTests {
    @Test("HDOP at the centre of n locators evenly on a circle equals the closed form 2/√n · r/R",
          arguments: [3, 4, 6, 8])
    func circleClosedForm(n: Int) throws {
        // Rows gᵢ = (cos θᵢ, sin θᵢ)·R/r with r = √(R² + Δz²); for evenly spaced θᵢ,
        // Σ cos² θᵢ = Σ sin² θᵢ = n/2 and Σ cos θᵢ sin θᵢ = 0, so HᵀH = (n/2)(R/r)² I,
        // Q = (2/n)(r/R)² I and HDOP = √(Q₁₁ + Q₂₂) = √(2·2/n) · r/R = 2/√n · r/R.
        let radius = 4.0, dz = 1.5, centre = Point2(x: 5, y: 5)
        let points = (0..<n).map { k -> Point3 in
            let theta = 2 * Double.pi * Double(k) / Double(n) + 0.3
            return Point3(x: centre.x + radius * cos(theta), y: centre.y + radius * sin(theta), z: 1.0 + dz)
        }
        let floor = Floor(id: "c", widthMeters: 10, heightMeters: 10, tagHeightMeters: 1.0, locators: GeometryFixture.locators(points))
        let expected = 2 / Double(n).squareRoot() * (radius * radius + dz * dz).squareRoot() / radius
        for path in [GeometryReportOptions.Path.kernel, .batched] {
            // A 10 m grid on a 10 m floor: one cell, centred on the circle's centre.
            let report = try GeometryReport(floor: floor, options: GeometryReportOptions(gridMeters: 10, path: path))
            #expect(report.grid.count == 1)
            #expect(report.mode == .planar)
            let hdop = try #require(report.cells[0].hdop)
            #expect(abs(hdop - expected) < 1e-12, "path \(path): \(hdop) vs \(expected)")
        }
    }

    @Test("statistics: percentiles interpolate between order statistics; coverage needs HDOP ≤ 2 and 3 locators")
    func statisticsByHand() {
        let cells = [
            GeometryCell(locatorsInRange: 4, hdop: 1.0, vdop: nil),
            GeometryCell(locatorsInRange: 3, hdop: 1.5, vdop: nil),
            GeometryCell(locatorsInRange: 5, hdop: 3.0, vdop: nil),
            GeometryCell(locatorsInRange: 3, hdop: 6.0, vdop: nil),
            GeometryCell(locatorsInRange: 2, hdop: nil, vdop: nil),  // out of range
            GeometryCell(locatorsInRange: 3, hdop: nil, vdop: nil),  // degenerate
        ]
        let s = GeometryStatistics(cells: cells, unknowns: 2, options: .standard)
        #expect(s.cells == 6 && s.solvableCells == 4 && s.coveredCells == 2)
        #expect(s.outOfRangeCells == 1 && s.poorCells == 2)
        #expect(abs(s.coverage - 2.0 / 6.0) < 1e-15)
        // Sorted 1, 1.5, 3, 6: p50 at rank 1.5 → 2.25; p95 at rank 2.85 → 3 + 0.85·3 = 5.55.
        #expect(abs((s.hdopP50 ?? 0) - 2.25) < 1e-12)
        #expect(abs((s.hdopP95 ?? 0) - 5.55) < 1e-12)
        #expect(s.hdopMax == 6.0)
    }

    @Test("a 2 × 2 m floor with corner locators: 3 in range of every cell, HDOP √(3/2.24), full coverage")
    func tinyFloorByHand() throws {
        // Locators at the corners, at tag height (Δz = 0); range 2 m: from a cell centre such as
        // (0.5, 0.5) the corners are 0.71, 1.58, 1.58 and 2.12 m away, so 3 are in range. Rows
        // (0.707, 0.707), (−0.949, 0.316), (0.316, −0.949): N = [[1.5, −0.1], [−0.1, 1.5]],
        // det 2.24, trace Q = 3/2.24, HDOP = √(3/2.24) ≈ 1.157 in every cell by symmetry.
        let corners = [Point3(x: 0, y: 0, z: 1), Point3(x: 2, y: 0, z: 1), Point3(x: 0, y: 2, z: 1), Point3(x: 2, y: 2, z: 1)]
        let floor = Floor(id: "t", widthMeters: 2, heightMeters: 2, tagHeightMeters: 1, locators: GeometryFixture.locators(corners))
        let report = try GeometryReport(floor: floor, options: GeometryReportOptions(gridMeters: 1, maximumRangeMeters: 2))
        let expected = (3 / 2.24).squareRoot()
        #expect(report.grid.count == 4)
        for cell in report.cells {
            #expect(cell.locatorsInRange == 3)
            #expect(abs((cell.hdop ?? 0) - expected) < 1e-12)
        }
        #expect(report.statistics.coverage == 1)
        #expect(abs((report.statistics.hdopP95 ?? 0) - expected) < 1e-12)
        #expect(report.warnings.isEmpty, "\(report.warnings)")

        // With a 1.5 m range only the nearest corner is in range: nothing is covered, and it says so.
        let short = try GeometryReport(floor: floor, options: GeometryReportOptions(gridMeters: 1, maximumRangeMeters: 1.5))
        #expect(short.statistics.coverage == 0 && short.statistics.solvableCells == 0 && short.statistics.hdopP50 == nil)
        #expect(short.warnings.map(\.key) == ["geometry.outOfRange"])
        #expect(short.warnings.first?.message.hasPrefix("100.0 % of the floor has fewer than 3 locators within 1.5 m") == true)
    }

    @Test("the batched dgemm path agrees with the kernel path to 1e-9 on planar and spatial layouts")
    func batchedMatchesKernel() throws {
        var rng = SeededGenerator(seed: 20261130)
        var floors = [GeometryFixture.hall, GeometryFixture.poorGeometry]
        for trial in 0..<4 {
            let spatial = trial % 2 == 1
            let count = 4 + trial * 3
            let points = (0..<count).map { _ in
                Point3(x: rng.uniform(-2, 32), y: rng.uniform(-2, 22), z: spatial ? rng.uniform(0, 15) : rng.uniform(2.4, 2.8))
            }
            floors.append(Floor(id: FloorID("r\(trial)"), originX: -3, originY: 1, widthMeters: 33, heightMeters: 19,
                                tagHeightMeters: 1.2, locators: GeometryFixture.locators(points)))
        }
        var compared = 0, spatialSeen = false
        for floor in floors {
            for range in [12.0, 30.0] {
                let k = try GeometryReport(floor: floor, options: GeometryReportOptions(gridMeters: 0.7, maximumRangeMeters: range, path: .kernel))
                let b = try GeometryReport(floor: floor, options: GeometryReportOptions(gridMeters: 0.7, maximumRangeMeters: range, path: .batched))
                spatialSeen = spatialSeen || k.mode == .spatial
                #expect(k.cells.count == b.cells.count)
                for (x, y) in zip(k.cells, b.cells) {
                    #expect(x.locatorsInRange == y.locatorsInRange)
                    switch (x.hdop, y.hdop) {
                    case (nil, nil): break
                    case let (h1?, h2?):
                        compared += 1
                        #expect(abs(h1 - h2) <= 1e-9 * max(1, h1), "floor \(floor.id): \(h1) vs \(h2)")
                        #expect(abs((x.vdop ?? 0) - (y.vdop ?? 0)) <= 1e-9 * max(1, x.vdop ?? 0))
                    default:
                        Issue.record("floor \(floor.id): one path solvable, the other not: \(x) vs \(y)")
                    }
                }
                #expect(k.statistics == b.statistics || abs((k.statistics.hdopP95 ?? 0) - (b.statistics.hdopP95 ?? 0)) < 1e-9)
            }
        }
        #expect(compared > 5_000)
        #expect(spatialSeen)
    }

    @Test("locators on one line are warned as collinear; a hall with locators on all walls is not")
    func collinearWarned() throws {
        let line = (0..<4).map { Point3(x: 1 + 2.5 * Double($0), y: 1 + 0.5 * Double($0), z: 2.5) }
        let floor = Floor(id: "l", widthMeters: 10, heightMeters: 6, tagHeightMeters: 1, locators: GeometryFixture.locators(line))
        let report = try GeometryReport(floor: floor)
        let keys = report.warnings.map(\.key)
        #expect(keys.contains("geometry.locatorsCollinear"))
        #expect(report.statistics.solvableCells == 0 || (report.statistics.hdopMax ?? 0) > 5)
        let hall = try GeometryReport(floor: GeometryFixture.hall)
        #expect(!hall.warnings.map(\.key).contains("geometry.locatorsCollinear"), "\(hall.warnings)")
        #expect(hall.statistics.coverage > 0.9)
    }

    @Test("the poor-geometry room: nearly collinear locators, HDOP > 5 area with its box, a zone by the wall warned")
    func poorGeometryWarnings() throws {
        var floor = GeometryFixture.poorGeometry
        // Along the locators' wall the rows are nearly parallel to it: y is poorly determined there.
        floor.zones.append(Zone(id: "doorway", polygon: [Point2(x: 3, y: 0), Point2(x: 6, y: 0), Point2(x: 6, y: 0.5), Point2(x: 3, y: 0.5)]))
        let report = try GeometryReport(floor: floor)
        let keys = report.warnings.map(\.key)
        #expect(keys.contains("geometry.locatorsCollinear"))
        #expect(keys.contains("geometry.poorHDOP"))
        let poor = try #require(report.warnings.first { $0.key == "geometry.poorHDOP" })
        #expect(poor.message.contains("of the floor has HDOP > 5 (within x "), "\(poor.message)")
        #expect((report.statistics.hdopMax ?? 0) > 5)
        let zones = report.warnings.filter { $0.key == "geometry.zonePoorGeometry" }.map(\.message)
        #expect(zones.count == 1 && zones.first?.hasPrefix("zone 'doorway'") == true, "\(zones)")
    }

    @Test("a spatial layout on one tilted plane is warned as coplanar and reports VDOP; a true 3-D layout is not warned")
    func coplanarWarned() throws {
        // z = 0.5·x + 1 for every locator: height spread 10 m > 0.2 × the horizontal diagonal → spatial.
        let tilted = [(0.0, 0.0), (20.0, 0.0), (20.0, 15.0), (0.0, 15.0), (10.0, 7.0)].map { Point3(x: $0.0, y: $0.1, z: 0.5 * $0.0 + 1) }
        let floor = Floor(id: "s", widthMeters: 20, heightMeters: 15, tagHeightMeters: 1.2, locators: GeometryFixture.locators(tilted))
        let report = try GeometryReport(floor: floor, options: GeometryReportOptions(gridMeters: 1))
        #expect(report.mode == .spatial)
        #expect(report.warnings.map(\.key).contains("geometry.locatorsCoplanar"), "\(report.warnings)")
        var lifted = floor
        lifted.locators[4].position.z = 9
        lifted.locators[1].position.z = 1
        let solid = try GeometryReport(floor: lifted, options: GeometryReportOptions(gridMeters: 1))
        #expect(solid.mode == .spatial)
        #expect(!solid.warnings.map(\.key).contains("geometry.locatorsCoplanar"), "\(solid.warnings)")
        #expect(solid.statistics.vdopMax != nil && solid.cells.contains { $0.vdop != nil })
    }

    @Test("a locator outside the floor rectangle is named in a warning")
    func locatorOutsideFloor() throws {
        var floor = GeometryFixture.hall
        floor.locators[2].position.x = 41.5
        let report = try GeometryReport(floor: floor)
        let w = report.warnings.filter { $0.key == "geometry.locatorOutsideFloor" }
        #expect(w.count == 1)
        #expect(w.first?.message.hasPrefix("locator 0x2002 at (41.50, 0.30) is outside") == true)
    }

    @Test("--suggest on the poor-geometry room finds a position that lowers p95 HDOP and raises coverage")
    func suggestionImproves() throws {
        let report = try GeometryReport(floor: GeometryFixture.poorGeometry)
        let s = try report.suggestion()
        #expect(s.improves)
        let before = try #require(s.before.hdopP95), after = try #require(s.after.hdopP95)
        #expect(after < 0.5 * before, "p95 \(before) → \(after)")
        #expect(s.after.coverage > s.before.coverage)
        // The best place is away from the locators' wall (y ≈ 0.2): in the far half of the room.
        #expect(s.position.y > 4, "\(s.position)")
        #expect(s.position.z == 2.5)
        #expect(s.candidates > 50)
    }

    @Test("a grid over the cell limit and a floor without extent are errors, not huge allocations")
    func gridLimits() {
        let floor = GeometryFixture.hall
        #expect(throws: LocusError.self) { try GeometryReport(floor: floor, options: GeometryReportOptions(gridMeters: 0.01)) }
        var flat = floor
        flat.widthMeters = 0
        do {
            _ = try GeometryReport(floor: flat)
            Issue.record("expected E3001")
        } catch {
            #expect(error.code == .noFloorMap)
        }
    }
}
