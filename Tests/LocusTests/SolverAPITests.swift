import Glibc
import Locus
import Testing

/// The public Swift API of the solver without an engine (`import Locus`, no `@testable`): the same
/// search and figures as `locus_solve` / `locus_dop` of the C ABI.
@Suite("Trilaterator and GeometryQuality (public API)")
struct SolverAPITests {
    static let hall: [Point3] = [(0, 0), (20, 0), (20, 12), (0, 12), (10, 0), (20, 6), (10, 12), (0, 6)]
        .map { Point3(x: $0.0, y: $0.1, z: 2.5) }

    static func ranges(_ locators: [Point3], to p: Point3) -> [Double] {
        locators.map { $0.distance(to: p) }
    }

    @Test("Planar: exact ranges give the tag back at its known height, converged, nothing rejected")
    func planar() throws {
        let tag = Point3(x: 7.25, y: 4.5, z: 1.1)
        let solver = Trilaterator(configuration: TrilaterationConfiguration(mode: .planar, tagHeightMeters: 1.1))
        let s = try solver.solve(locators: Self.hall, rangesMeters: Self.ranges(Self.hall, to: tag))
        #expect(s.mode == .planar)
        #expect(abs(s.position.x - tag.x) < 1e-9 && abs(s.position.y - tag.y) < 1e-9 && s.position.z == 1.1)
        #expect(s.isConverged && s.rejectedCount == 0 && s.rejectedMask == 0 && s.locatorsUsed == 8)
        #expect(s.residualRMSMeters < 1e-9 && s.vdop == nil && s.hdop == s.pdop)
        // The covariance is the formal one, σ² (JᵀJ)⁻¹ with σ = 0.1 m: its trace is (σ · HDOP)².
        let trace = s.covariance.xx + s.covariance.yy
        #expect(abs(trace - 0.01 * s.hdop * s.hdop) < 1e-12)
    }

    @Test("Spatial mode solves x, y and z; automatic mode takes a layout this flat (3.7 m of height over a 23 m diagonal) as planar")
    func spatial() throws {
        let locators = [Point3(x: 0, y: 0, z: 0.3), Point3(x: 20, y: 0, z: 2.9), Point3(x: 20, y: 12, z: 0.4),
                        Point3(x: 0, y: 12, z: 3.1), Point3(x: 10, y: 6, z: 4.0), Point3(x: 10, y: 0, z: 1.5)]
        let tag = Point3(x: 12, y: 5, z: 1.4)
        let s = try Trilaterator(configuration: TrilaterationConfiguration(mode: .spatial))
            .solve(locators: locators, rangesMeters: Self.ranges(locators, to: tag))
        #expect(s.mode == .spatial && s.vdop != nil)
        #expect(s.position.distance(to: tag) < 1e-8)
        let automatic = try Trilaterator().solve(locators: locators, rangesMeters: Self.ranges(locators, to: tag))
        #expect(automatic.mode == .planar && automatic.vdop == nil)
    }

    @Test("A range 1.5 m long (NLOS) is rejected by the robust search and named in the mask; without it the fix is pulled")
    func rejectsLongRange() throws {
        let tag = Point3(x: 13, y: 7, z: 1.1)
        var r = Self.ranges(Self.hall, to: tag)
        r[5] += 1.5
        let robust = try Trilaterator(configuration: TrilaterationConfiguration(mode: .planar, tagHeightMeters: 1.1))
            .solve(locators: Self.hall, rangesMeters: r)
        #expect(robust.rejectedCount == 1 && robust.rejectedMask == 1 << 5 && robust.locatorsUsed == 7)
        #expect(robust.position.distance(to: tag) < 1e-8)
        let plain = try Trilaterator(configuration: TrilaterationConfiguration(mode: .planar, tagHeightMeters: 1.1, isRobust: false))
            .solve(locators: Self.hall, rangesMeters: r)
        #expect(plain.rejectedCount == 0 && plain.position.distance(to: tag) > 0.1)
    }

    @Test("Errors are LocusErrors with their codes: too few ranges, a negative range, an invalid setting")
    func errors() {
        let planar = Trilaterator(configuration: TrilaterationConfiguration(mode: .planar, tagHeightMeters: 1.1))
        func code(_ solver: Trilaterator, _ locators: [Point3], _ ranges: [Double]) -> LocusErrorCode? {
            do { _ = try solver.solve(locators: locators, rangesMeters: ranges); return nil } catch { return error.code }
        }
        #expect(code(planar, Array(Self.hall.prefix(2)), [5, 6]) == .tooFewRanges)
        #expect(code(planar, Array(Self.hall.prefix(4)), [5, -6, 7, 8]) == .invalidRange)
        #expect(code(Trilaterator(configuration: TrilaterationConfiguration(sigmaMeters: 0)), Self.hall,
                     Self.ranges(Self.hall, to: Point3(x: 5, y: 5, z: 1.1))) == .invalidArgument)
        let collinear = (0..<4).map { Point3(x: Double($0) * 3, y: 0, z: 2.5) }
        #expect(code(planar, collinear, [3, 3, 4, 6]) == .degenerateGeometry)
    }

    @Test("A kept workspace and spans give the same solution as arrays, beyond 64 locators too")
    func workspace() throws {
        let ring = (0..<80).map { k -> Point3 in
            let a = Double(k) * 2 * Double.pi / 80
            return Point3(x: 10 + 9 * cos(a), y: 6 + 5 * sin(a), z: 2.5 + 0.01 * Double(k % 3))
        }
        let solver = Trilaterator(configuration: TrilaterationConfiguration(mode: .planar, tagHeightMeters: 1.1))
        var workspace = TrilaterationWorkspace(capacity: 80)
        for (k, tag) in [Point3(x: 9, y: 5, z: 1.1), Point3(x: 12.5, y: 7.25, z: 1.1)].enumerated() {
            var r = Self.ranges(ring, to: tag)
            r[k] += 0.02
            let viaArrays = try solver.solve(locators: ring, rangesMeters: r)
            let viaSpans = try solver.solve(locators: ring.span, rangesMeters: r.span, workspace: &workspace)
            #expect(viaArrays == viaSpans)
            #expect(viaSpans.position.distance(to: tag) < 0.01)
        }
    }

    @Test("DOP matches the closed form: four locators at distance d around the tag, height difference Δz, give HDOP = r/d")
    func dopClosedForm() throws {
        let d = 6.0, dz = 1.4, at = Point3(x: 10, y: 6, z: 1.1)
        let locators = [(d, 0.0), (-d, 0), (0, d), (0, -d)].map { Point3(x: at.x + $0.0, y: at.y + $0.1, z: at.z + dz) }
        let q = try GeometryQuality.dop(locators: locators, at: at, mode: .planar, tagHeightMeters: at.z)
        let r = (d * d + dz * dz).squareRoot()
        #expect(abs(q.hdop - r / d) < 1e-12 && q.pdop == q.hdop && q.vdop == nil)
        #expect(throws: LocusError.self) {
            _ = try GeometryQuality.dop(locators: Array(locators.prefix(1)), at: at, mode: .planar, tagHeightMeters: at.z)
        }
    }
}
