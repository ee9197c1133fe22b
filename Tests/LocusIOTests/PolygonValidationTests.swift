import LocusCore
import Testing

@Suite("Polygon validation")
struct PolygonValidationTests {
    private func polygon(_ xy: [(Double, Double)]) -> [Point2] { xy.map { Point2(x: $0.0, y: $0.1) } }

    @Test("valid polygons in either winding, with or without a closing vertex, pass", arguments: [
        [(0, 0), (4, 0), (4, 3), (0, 3)],
        [(0, 0), (0, 3), (4, 3), (4, 0)],
        [(0, 0), (4, 0), (4, 3), (0, 3), (0, 0)],
        [(0, 0), (4, 0), (2, 3)],
        [(0, 0), (6, 0), (6, 6), (3, 2), (0, 6)], // concave
        [(0, 0), (2, 0), (4, 0), (4, 3), (0, 3)], // a collinear vertex on an edge is fine
    ] as [[(Double, Double)]])
    func valid(points: [(Double, Double)]) {
        #expect(PolygonValidation.validate(polygon(points)) == nil)
    }

    @Test("invalid polygons yield their problem", arguments: [
        ([(0, 0), (4, 0)], PolygonProblem.tooFewVertices(distinct: 2)),
        ([(0, 0), (4, 0), (0, 0)], .tooFewVertices(distinct: 2)),
        ([(1, 1), (1, 1), (1, 1), (1, 1)], .tooFewVertices(distinct: 1)),
        ([(0, 0), (4, 0), (4, 0), (0, 0)], .tooFewVertices(distinct: 2)),
        ([(0, 0), (2, 1), (4, 2)], .zeroArea),
        ([(0, 0), (4, 0), (2, 0), (1, 1e-12)], .zeroArea),
        ([(0, 0), (4, 4), (4, 0), (0, 4)], .selfIntersecting(edge: 0, otherEdge: 2)),
        ([(0, 0), (4, 0), (1, 0), (1, 3)], .selfIntersecting(edge: 0, otherEdge: 1)), // folds back on itself
        ([(0, 0), (4, 0), (4, 4), (2, 0), (0, 4)], .selfIntersecting(edge: 0, otherEdge: 2)), // vertex touches an edge
        ([(0, 0), (2, 2), (4, 0), (4, 4), (2, 2), (0, 4)], .selfIntersecting(edge: 0, otherEdge: 3)), // figure eight through a vertex
    ] as [([(Double, Double)], PolygonProblem)])
    func invalid(points: [(Double, Double)], problem: PolygonProblem) {
        #expect(PolygonValidation.validate(polygon(points)) == problem)
    }

    @Test("normalized drops consecutive repeats and the closing vertex; signed area follows the winding")
    func normalizedAndArea() {
        let square = polygon([(0, 0), (4, 0), (4, 0), (4, 3), (0, 3), (0, 0)])
        #expect(PolygonValidation.normalized(square) == polygon([(0, 0), (4, 0), (4, 3), (0, 3)]))
        #expect(abs(PolygonValidation.signedArea(PolygonValidation.normalized(square)) - 12) <= 1e-12)
        #expect(abs(PolygonValidation.signedArea(polygon([(0, 0), (0, 3), (4, 3), (4, 0)])) + 12) <= 1e-12)
    }
}
