@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSolvers
import Testing

@Suite("Degenerate trilateration inputs")
struct TrilaterationDegenerateTests {
    static let square = [Point3(x: 0, y: 0, z: 3), Point3(x: 10, y: 0, z: 3), Point3(x: 10, y: 10, z: 3), Point3(x: 0, y: 10, z: 3)]

    static func code(_ solver: some Trilaterating, _ locators: [Point3], _ ranges: [Double]) -> LocusErrorCode? {
        do {
            _ = try solver.solve(locators: locators, rangesMeters: ranges)
            return nil
        } catch {
            return error.code
        }
    }

    static func solvers(_ c: TrilaterationConfiguration) -> [any Trilaterating] {
        [KernelTrilaterator(configuration: c), LapackTrilaterator(configuration: c)]
    }

    @Test("too few ranges is E4001 (3 planar, 4 spatial)")
    func tooFew() {
        for solver in Self.solvers(TrilaterationConfiguration(mode: .planar, tagHeightMeters: 1)) {
            #expect(Self.code(solver, Array(Self.square.prefix(2)), [5, 5]) == .tooFewRanges)
            #expect(Self.code(solver, [], []) == .tooFewRanges)
        }
        for solver in Self.solvers(TrilaterationConfiguration(mode: .spatial)) {
            let three = [Point3(x: 0, y: 0, z: 0), Point3(x: 5, y: 0, z: 3), Point3(x: 0, y: 5, z: 1)]
            #expect(Self.code(solver, three, [4, 4, 4]) == .tooFewRanges)
        }
    }

    @Test("collinear, coincident (planar) and coplanar (spatial) locators are E4002")
    func degenerateGeometry() {
        let line = [Point3(x: 0, y: 0, z: 3), Point3(x: 5, y: 0, z: 3), Point3(x: 10, y: 0, z: 3), Point3(x: 15, y: 0, z: 3)]
        let nearLine = line.enumerated().map { Point3(x: $1.x, y: 1e-9 * Double($0 % 2), z: $1.z) }
        let coincident = [Point3(x: 1, y: 1, z: 3), Point3(x: 1, y: 1, z: 3), Point3(x: 1, y: 1, z: 2.9)]
        let twoSpots = [Point3(x: 0, y: 0, z: 3), Point3(x: 0, y: 0, z: 3), Point3(x: 5, y: 5, z: 3), Point3(x: 5, y: 5, z: 3)]
        for solver in Self.solvers(TrilaterationConfiguration(mode: .planar, tagHeightMeters: 1, isRobust: false)) {
            #expect(Self.code(solver, line, [6, 5, 6, 9]) == .degenerateGeometry)
            #expect(Self.code(solver, nearLine, [6, 5, 6, 9]) == .degenerateGeometry)
            #expect(Self.code(solver, coincident, [3, 3, 3]) == .degenerateGeometry)
            #expect(Self.code(solver, twoSpots, [4, 4, 5, 5]) == .degenerateGeometry)
        }
        for solver in Self.solvers(TrilaterationConfiguration(mode: .spatial)) {
            #expect(Self.code(solver, Self.square, [8, 8, 8, 8]) == .degenerateGeometry)
        }
    }

    @Test("negative or non-finite ranges are E4003")
    func invalidRanges() {
        for solver in Self.solvers(TrilaterationConfiguration(mode: .planar, tagHeightMeters: 1)) {
            #expect(Self.code(solver, Self.square, [5, -0.1, 5, 5]) == .invalidRange)
            #expect(Self.code(solver, Self.square, [5, .nan, 5, 5]) == .invalidRange)
            #expect(Self.code(solver, Self.square, [5, 5, .infinity, 5]) == .invalidRange)
        }
    }

    @Test("ranges whose squares overflow give E4004, never NaN")
    func overflowDiverges() {
        for solver in Self.solvers(TrilaterationConfiguration(mode: .planar, tagHeightMeters: 1)) {
            #expect(Self.code(solver, Self.square, [1e200, 5, 5, 5]) == .solverDiverged)
        }
    }

    @Test("an invalid configuration is E1003")
    func invalidConfiguration() {
        for solver in Self.solvers(TrilaterationConfiguration(sigmaMeters: 0)) {
            #expect(Self.code(solver, Self.square, [5, 5, 5, 5]) == .invalidArgument)
        }
    }

    @Test("DOP of collinear locators is E4002; a grid cell there is nil")
    func degenerateDOP() {
        let line = [Point3(x: 0, y: 0, z: 1), Point3(x: 5, y: 0, z: 1), Point3(x: 10, y: 0, z: 1)]
        #expect(throws: LocusError.self) {
            try GeometryQuality.dop(locators: line, at: Point3(x: 5, y: 0, z: 1), mode: .planar, tagHeightMeters: 1)
        }
        do {
            _ = try GeometryQuality.dop(locators: line, at: Point3(x: 5, y: 0, z: 1), mode: .planar, tagHeightMeters: 1)
        } catch {
            #expect(error.code == .degenerateGeometry)
        }
        let grid = GeometryQuality.dopGrid(locators: line, points: [Point2(x: 5, y: 0)], mode: .planar, tagHeightMeters: 1)
        #expect(grid == [nil])
    }
}

@Suite("Trilateration model")
struct TrilaterationModelTests {
    @Test("the analytic Jacobian matches central differences", arguments: [TrilaterationKernel.Model.planar, .spatial])
    func jacobianMatchesNumerical(model: TrilaterationKernel.Model) {
        var g = SeededGenerator(seed: 70)
        let h = 1e-6
        for _ in 0..<50 {
            let locators = (0..<6).map { _ in Point3(x: g.uniform(-10, 10), y: g.uniform(-10, 10), z: g.uniform(0, 3)) }
            let p = Point3(x: g.uniform(-5, 5), y: g.uniform(-5, 5), z: g.uniform(0.5, 2))
            var ranges = [Double](repeating: 0, count: 6), jacobian = [Double](repeating: 0, count: 18)
            var plus = ranges, minus = ranges, scratch = jacobian
            TrilaterationKernel.model(locators: locators, count: 6, model: model, tagHeightMeters: 1.3, at: p,
                                      rangesMeters: &ranges, jacobian: &jacobian, leadingDimension: 6)
            for k in 0..<model.unknowns {
                var pp = p, pm = p
                switch k {
                case 0: pp.x += h; pm.x -= h
                case 1: pp.y += h; pm.y -= h
                default: pp.z += h; pm.z -= h
                }
                TrilaterationKernel.model(locators: locators, count: 6, model: model, tagHeightMeters: 1.3, at: pp,
                                          rangesMeters: &plus, jacobian: &scratch, leadingDimension: 6)
                TrilaterationKernel.model(locators: locators, count: 6, model: model, tagHeightMeters: 1.3, at: pm,
                                          rangesMeters: &minus, jacobian: &scratch, leadingDimension: 6)
                for i in 0..<6 {
                    let numerical = (plus[i] - minus[i]) / (2 * h)
                    #expect(abs(numerical - jacobian[i + 6 * k]) <= 1e-7)
                }
            }
            if model == .planar {
                // Planar model ranges use the known tag height, not p.z.
                let dz = 1.3 - locators[0].z, dx = p.x - locators[0].x, dy = p.y - locators[0].y
                #expect(abs(ranges[0] - (dx * dx + dy * dy + dz * dz).squareRoot()) <= 1e-12)
            }
        }
    }

    @Test("automatic mode is planar for ceiling locators and spatial for spread heights")
    func automaticMode() throws {
        let ceiling = [Point3(x: 0, y: 0, z: 2.8), Point3(x: 10, y: 0, z: 3.0), Point3(x: 10, y: 8, z: 2.6), Point3(x: 0, y: 8, z: 2.9)]
        let truth = Point3(x: 4, y: 3, z: 1.1)
        let planar = try Trilaterator(configuration: TrilaterationConfiguration(tagHeightMeters: 1.1))
            .solve(locators: ceiling, rangesMeters: ceiling.map { $0.distance(to: truth) })
        #expect(planar.mode == .planar)
        #expect(planar.position.z == 1.1)
        #expect(squaredError(planar.position, truth, mode: .spatial).squareRoot() <= 1e-9)
        let spread = [Point3(x: 0, y: 0, z: 0.3), Point3(x: 10, y: 0, z: 3.0), Point3(x: 10, y: 8, z: 0.4),
                      Point3(x: 0, y: 8, z: 3.2), Point3(x: 5, y: 4, z: 3.1)]
        let spatial = try Trilaterator(configuration: TrilaterationConfiguration(tagHeightMeters: 0))
            .solve(locators: spread, rangesMeters: spread.map { $0.distance(to: truth) })
        #expect(spatial.mode == .spatial)
        #expect(spatial.vdop != nil)
        #expect(squaredError(spatial.position, truth, mode: .spatial).squareRoot() <= 1e-9)
    }

    @Test("the chi-square table gives the 99.5 % quantiles")
    func chiSquareTable() {
        #expect(abs(TrilaterationKernel.chiSquareQuantile995(degreesOfFreedom: 1) - 7.8794385766) <= 1e-9)
        #expect(abs(TrilaterationKernel.chiSquareQuantile995(degreesOfFreedom: 10) - 25.1881795720) <= 1e-9)
        // Wilson–Hilferty beyond the table: chi2_0.995(100) = 140.1694894…
        #expect(abs(TrilaterationKernel.chiSquareQuantile995(degreesOfFreedom: 100) - 140.1695) <= 0.2)
        #expect(TrilaterationKernel.chiSquareQuantile995(degreesOfFreedom: 0) == .infinity)
    }
}
