import Testing
import LocusCore
@testable import LocusZones

@Suite("Zone polygon geometry and validation")
struct ZonePolygonTests {
    static let square = [Point2(x: 0, y: 0), Point2(x: 4, y: 0), Point2(x: 4, y: 3), Point2(x: 0, y: 3)]
    /// An L shape (concave): [0,4]×[0,1] ∪ [0,1]×[0,4].
    static let ell = [Point2(x: 0, y: 0), Point2(x: 4, y: 0), Point2(x: 4, y: 1), Point2(x: 1, y: 1),
                      Point2(x: 1, y: 4), Point2(x: 0, y: 4)]

    @Test("distance is 0 inside and on the boundary, and the nearest-edge distance outside, in both windings",
          arguments: [false, true])
    func distances(reversed: Bool) throws {
        let poly = try ZonePolygon(validating: reversed ? Self.ell.reversed() : Self.ell)
        let tolerance = 1e-12
        #expect(poly.distance(to: Point2(x: 0.5, y: 0.5)) == 0)
        #expect(poly.distance(to: Point2(x: 2, y: 1)) == 0)          // on an edge
        #expect(poly.distance(to: Point2(x: 4, y: 0)) == 0)          // on a vertex
        #expect(abs(poly.distance(to: Point2(x: 3, y: 3)) - 2) < tolerance)        // in the notch, to y = 1
        #expect(abs(poly.distance(to: Point2(x: 2, y: 2)) - 1) < tolerance)        // notch corner region
        #expect(abs(poly.distance(to: Point2(x: 7, y: 5)) - 5) < tolerance)        // to vertex (4, 1): 3-4-5
        #expect(abs(poly.distance(to: Point2(x: -2, y: 2)) - 2) < tolerance)
        #expect(poly.contains(Point2(x: 0.5, y: 3.5)))
        #expect(!poly.contains(Point2(x: 2, y: 2)))
        #expect(!poly.contains(Point2(x: 1.0000001, y: 1.0000001)))
        #expect(poly.contains(Point2(x: 1, y: 1)))                   // reflex vertex
        #expect(abs(poly.areaSquareMeters - 7) < tolerance)
    }

    @Test("isWithin agrees with distance(to:) ≤ reach on a grid of points")
    func isWithinAgrees() throws {
        let poly = try ZonePolygon(validating: Self.ell)
        for i in -10...30 {
            for j in -10...30 {
                let p = Point2(x: Double(i) * 0.25 + 0.013, y: Double(j) * 0.25 + 0.007)
                for reach in [0.0, 0.5, 1.7] {
                    #expect(poly.isWithin(reach, of: p) == (poly.distance(to: p) <= reach))
                }
            }
        }
    }

    @Test("a repeated closing vertex and repeated consecutive vertices are dropped")
    func closingVertex() throws {
        let closed = try ZonePolygon(validating: Self.square + [Self.square[0]])
        #expect(closed.vertices == Self.square)
        let doubled = try ZonePolygon(validating: [Self.square[0], Self.square[0], Self.square[1], Self.square[2],
                                                   Self.square[2], Self.square[3]])
        #expect(doubled.vertices == Self.square)
        #expect(closed.contains(Point2(x: 2, y: 1.5)) && !closed.contains(Point2(x: 5, y: 1)))
    }

    @Test("invalid polygons throw their codes", arguments: [
        ([(0.0, 0.0), (1.0, 1.0)], LocusErrorCode.polygonTooFewVertices),
        ([(0, 0), (1, 1), (0, 0)], .polygonTooFewVertices),
        ([(0, 0), (1, 1), (2, 2)], .polygonZeroArea),
        ([(0, 0), (2, 2), (2, 0), (0, 2)], .polygonSelfIntersecting),                   // bow tie
        ([(0, 0), (4, 0), (4, 3), (2, 3), (2, 5), (2, 3), (0, 3)], .polygonSelfIntersecting), // spike
        ([(0, 0), (4, 0), (2, 2), (4, 4), (0, 4), (2, 2)], .polygonSelfIntersecting),   // touching vertices
        ([(0, 0), (Double.nan, 0), (1, 1)], .siteNonFiniteNumber),
    ] as [([(Double, Double)], LocusErrorCode)])
    func invalid(points: [(Double, Double)], code: LocusErrorCode) {
        #expect(throws: LocusError.self) { try ZonePolygon(validating: points.map { Point2(x: $0.0, y: $0.1) }) }
        do {
            _ = try ZonePolygon(validating: points.map { Point2(x: $0.0, y: $0.1) }, zone: "z", jsonPath: "zones[0].polygon")
        } catch {
            #expect(error.code == code)
            #expect(error.context.jsonPath == "zones[0].polygon")
            #expect(error.message.contains("'z'"))
        }
    }

    @Test("the judge rejects duplicate ids and negative or non-finite rules with their codes")
    func invalidZones() {
        let good = rectangle("a", 0, 0, 1, 1)
        func code(_ zones: [Zone]) -> LocusErrorCode? {
            do { _ = try ZoneJudge(floor: Floor(id: "F", zones: zones)); return nil } catch { return error.code }
        }
        #expect(code([good]) == nil)
        #expect(code([good, good]) == .siteDuplicateID)
        #expect(code([rectangle("b", 0, 0, 1, 1, rules(inDist: -1))]) == .siteNegativeValue)
        #expect(code([rectangle("b", 0, 0, 1, 1, rules(inCount: -1))]) == .siteNegativeValue)
        #expect(code([rectangle("b", 0, 0, 1, 1, rules(outPeriod: .infinity))]) == .siteNonFiniteNumber)
        #expect(code([Zone(id: "c", polygon: [Point2(x: 0, y: 0), Point2(x: 1, y: 0)])]) == .polygonTooFewVertices)
    }

    @Test("input after finish and non-finite input throw E1002 and E1003")
    func callErrors() throws {
        var judge = try ZoneJudge(floor: Floor(id: "F", zones: [rectangle("a", 0, 0, 1, 1)]))
        var events: [ZoneEvent] = []
        #expect(throws: LocusError(.invalidArgument, "fix of tag 'T' has a non-finite time or position")) {
            try judge.judge(fix(.nan, "T", 0, 0), into: &events)
        }
        let other = PositionFix(timeSeconds: 0, tag: "T", floor: "G", position: Point3(x: 0, y: 0, z: 0),
                                covariance: .zero, quality: FixQuality(hdop: 1, pdop: 1, residualRMSMeters: 0, locatorsUsed: 3))
        do { try judge.judge(other, into: &events); Issue.record("a fix of another floor was accepted") } catch {
            #expect(error.code == .invalidArgument)
        }
        judge.finish(into: &events)
        do { try judge.advance(toSeconds: 1, into: &events); Issue.record("advance after finish") } catch {
            #expect(error.code == .callOrder)
        }
    }
}

@Suite("Zone judge at extreme coordinates")
struct ZoneJudgeExtremeCoordinateTests {
    @Test("zones 1e308 m apart (the extent overflows) validate, and the judge neither traps nor loses near zones")
    func farApartZones() throws {
        let near = rectangle("near", 0, 0, 4, 3)
        let far = rectangle("far", 1e308, 1e308, 1e308 + 1e293, 1e308 + 1e293)
        let west = rectangle("west", -1e308, 0, -1e308 + 1e293, 1e293)
        let events = try run([near, far, west], [fix(0, "T1", 2, 1), fix(1, "T2", 1e308, 1e308), fix(2, "T1", 2, 1)])
        #expect(events.first == "0.0 T1 near enter")
        #expect(events.filter { $0.contains("T1") } == ["0.0 T1 near enter"])
        let big = try ZonePolygon(validating: far.polygon)
        #expect(big.areaSquareMeters > 0 && big.contains(Point2(x: 1e308, y: 1e308)))
    }
}
