@testable import Locus
import LocusCore
import Testing

/// `SiteLint`, the warnings `locus lint` prints, on sites built in code.
@Suite("SiteLint: warnings of a valid site")
struct SiteLintTests {
    static func floor(_ points: [(Double, Double, Double)], width: Double = 0, height: Double = 0,
                      zones: [Zone] = []) -> Floor {
        let locators = points.enumerated().map { k, p in
            Locator(address: LocatorAddress(UInt16(k + 1)), position: Point3(x: p.0, y: p.1, z: p.2))
        }
        return Floor(id: "F", widthMeters: width, heightMeters: height, tagHeightMeters: 1, sessionID: 1,
                     locators: locators, zones: zones)
    }

    static func keys(_ floor: Floor, options: SiteLint.Options = .standard) -> [String] {
        SiteLint.warnings(for: Site(building: .init(id: ""), floors: [floor]), options: options).map { "\($0.key) \($0.path)" }
    }

    @Test("spatial layouts: locators in one tilted plane are coplanar; a fifth off the plane makes them sound")
    func coplanar() {
        // z = (x + y)/2: a spread of 10 m in height over 14 m across, so the floor solves in 3-D.
        let plane: [(Double, Double, Double)] = [(0, 0, 0), (10, 0, 5), (0, 10, 5), (10, 10, 10)]
        #expect(Self.keys(Self.floor(plane)) == ["floor.locatorsCoplanar floors[0]"])
        #expect(Self.keys(Self.floor(plane + [(5, 5, 0)])).isEmpty)
    }

    @Test("coincident locators are a cluster; a triangle 0.5 m across is not (the bound is strict)")
    func clusters() {
        #expect(Self.keys(Self.floor([(3, 3, 2), (3, 3, 2), (3, 3, 2.5)])) == ["floor.locatorsClustered floors[0]"])
        #expect(SiteLint.horizontalDiameter([Point3(x: 0, y: 0, z: 0), Point3(x: 3, y: 4, z: 9)]) == 5)
        #expect(Self.keys(Self.floor([(0, 0, 2), (0.4, 0, 2), (0, 0.3, 2)])).isEmpty)
    }

    @Test("a locator on the floor's edge is inside; only floors with an extent are checked")
    func outsideFloor() {
        let points: [(Double, Double, Double)] = [(0, 0, 2), (40, 0, 2), (40, 25, 2), (-0.01, 12, 2)]
        #expect(Self.keys(Self.floor(points, width: 40, height: 25)) == ["locator.outsideFloor floors[0].locators[3]"])
        #expect(Self.keys(Self.floor(points)).isEmpty)
    }

    @Test("warnings come in the documented order, and the rate reaches the zone rules")
    func order() {
        var zone = Zone(id: "z", polygon: [Point2(x: 60, y: 0), Point2(x: 62, y: 0), Point2(x: 62, y: 2)])
        zone.rules.outPeriodSeconds = 0.3
        var floor = Self.floor([(0, 0, 2), (10, 0, 2), (20, 0, 2), (45, 0, 2)], width: 40, height: 25, zones: [zone])
        floor.sessionID = nil
        #expect(Self.keys(floor) == ["floor.noSessionId floors[0]", "floor.locatorsCollinear floors[0]",
                                     "locator.outsideFloor floors[0].locators[3]", "zone.outsideFloor floors[0].zones[0]",
                                     "zone.noLocatorCoverage floors[0].zones[0]"]) // 1 locator within 30 m: no point check on top
        var fast = SiteLint.Options.standard
        fast.positionPeriodSeconds = 0.5
        #expect(Self.keys(floor, options: fast).contains("zone.outPeriod.tooShort floors[0].zones[0]"))
    }
}
