/// What is wrong with a zone polygon (SPEC §1: at least 3 distinct vertices, simple, non-zero area).
package enum PolygonProblem: Sendable, Hashable {
    /// Fewer than 3 distinct vertices remain (after dropping repeated consecutive vertices).
    case tooFewVertices(distinct: Int)
    /// The polygon encloses no area: every vertex lies within ε·d of one line, d the largest
    /// distance from the first vertex (metres), ε = `PolygonValidation.relativeCollinearityTolerance`.
    case zeroArea
    /// Edge `edge` (from vertex `edge` to vertex `edge + 1`) crosses, touches or overlaps edge
    /// `otherEdge`, which is not its neighbour — or folds back onto its neighbour.
    case selfIntersecting(edge: Int, otherEdge: Int)

    /// The error code a site decoder reports for this problem.
    package var code: LocusErrorCode {
        switch self {
        case .tooFewVertices: .polygonTooFewVertices
        case .zeroArea: .polygonZeroArea
        case .selfIntersecting: .polygonSelfIntersecting
        }
    }

    /// A one-line English explanation, e.g. `edges 0 and 2 cross`.
    package var message: String {
        switch self {
        case .tooFewVertices(let distinct):
            "polygon has \(plural(distinct, "distinct vertex", "distinct vertices")), needs at least 3"
        case .zeroArea:
            "polygon encloses no area (its vertices are collinear)"
        case .selfIntersecting(let edge, let otherEdge):
            "polygon is self-intersecting: edge \(edge) meets edge \(otherEdge)"
        }
    }
}

/// Checks that a zone polygon is simple and has area; shared by the site decoder and the zone engine.
///
/// The checks, in order:
/// 1. `normalized` drops consecutive repeated vertices (including a closing vertex equal to the first);
///    fewer than 3 distinct vertices is `.tooFewVertices`.
/// 2. All vertices collinear (within ε·d, see `PolygonProblem.zeroArea`) is `.zeroArea`. (A simple
///    polygon whose vertices are not collinear always encloses area, so the shoelace sum is not
///    used here: it also vanishes for a symmetric bow tie, which is reported as self-intersecting.)
/// 3. Every pair of non-adjacent edges must be disjoint (closed segments: a proper crossing, a
///    touching endpoint or a collinear overlap all count); adjacent edges may share only their common
///    vertex (an edge folding back onto its neighbour is an overlap). Otherwise `.selfIntersecting`.
///
/// Orientation tests use exact floating-point signs of the cross product; the polygon may be in
/// either winding. Complexity O(n²) in the number of vertices — zone polygons are small.
package enum PolygonValidation {
    /// ε of the zero-area (collinearity) test, relative to the polygon's size (dimensionless).
    static let relativeCollinearityTolerance = 1e-9

    /// The vertices without consecutive repeats; a last vertex equal to the first is dropped too.
    /// Complexity O(n).
    package static func normalized(_ points: [Point2]) -> [Point2] {
        var result: [Point2] = []
        result.reserveCapacity(points.count)
        for point in points where result.last != point {
            result.append(point)
        }
        while result.count > 1, let first = result.first, result.last == first {
            result.removeLast()
        }
        return result
    }

    /// Signed shoelace area A = ½ Σᵢ (xᵢ yᵢ₊₁ − xᵢ₊₁ yᵢ), square metres; positive when
    /// counter-clockwise. Zero for fewer than 3 vertices. Complexity O(n).
    package static func signedArea(_ points: [Point2]) -> Double {
        guard points.count >= 3 else { return 0 }
        // Relative to the first vertex, to keep cancellation small far from the origin.
        let origin = points[0]
        var twiceArea = 0.0
        for i in 1..<(points.count - 1) {
            let a = points[i], b = points[i + 1]
            twiceArea += (a.x - origin.x) * (b.y - origin.y) - (b.x - origin.x) * (a.y - origin.y)
        }
        return twiceArea / 2
    }

    /// The area centroid of a simple polygon, metres: (Σ (xᵢ + xᵢ₊₁)·cᵢ, Σ (yᵢ + yᵢ₊₁)·cᵢ) / 3Σcᵢ with
    /// cᵢ = xᵢ yᵢ₊₁ − xᵢ₊₁ yᵢ; the vertex mean when the area is ~0 (|Σcᵢ| ≤ 10⁻¹²). Either winding.
    /// Where `locus simulate` walks tags and `locus lint` checks a zone's coverage. Complexity O(n).
    package static func centroid(_ polygon: [Point2]) -> Point2 {
        var a = 0.0, cx = 0.0, cy = 0.0
        for i in polygon.indices {
            let p = polygon[i], q = polygon[(i + 1) % polygon.count]
            let cross = p.x * q.y - q.x * p.y
            a += cross
            cx += (p.x + q.x) * cross
            cy += (p.y + q.y) * cross
        }
        guard abs(a) > 1e-12 else {
            let n = Double(max(1, polygon.count))
            return Point2(x: polygon.reduce(0) { $0 + $1.x } / n, y: polygon.reduce(0) { $0 + $1.y } / n)
        }
        return Point2(x: cx / (3 * a), y: cy / (3 * a))
    }

    /// The first problem of the polygon, or nil when it is a valid zone polygon.
    /// The input may carry a repeated closing vertex. Complexity O(n²).
    package static func validate(_ points: [Point2]) -> PolygonProblem? {
        var vertices = normalized(points)
        // Coordinates so large that cross products would overflow (|v| > 1e100) are checked on a
        // copy scaled by a power of two — exact, so every sign test keeps its meaning.
        let largest = vertices.reduce(0.0) { max($0, abs($1.x), abs($1.y)) }
        if largest > 1e100, largest.isFinite {
            let factor = Double(sign: .plus, exponent: -largest.exponent, significand: 1)
            vertices = vertices.map { Point2(x: $0.x * factor, y: $0.y * factor) }
        }
        var distinct: [Point2] = []
        for point in vertices where !distinct.contains(point) {
            distinct.append(point)
            if distinct.count >= 3 { break }
        }
        if distinct.count < 3 { return .tooFewVertices(distinct: distinct.count) }

        if areCollinear(vertices) { return .zeroArea }

        let n = vertices.count
        for i in 0..<n {
            let a = vertices[i], b = vertices[(i + 1) % n]
            for j in (i + 1)..<n {
                let c = vertices[j], d = vertices[(j + 1) % n]
                let adjacentAfter = j == i + 1          // b == c
                let adjacentBefore = i == 0 && j == n - 1 // d == a
                if adjacentAfter {
                    if foldsBack(shared: b, from: a, to: d) { return .selfIntersecting(edge: i, otherEdge: j) }
                } else if adjacentBefore {
                    if foldsBack(shared: a, from: b, to: c) { return .selfIntersecting(edge: i, otherEdge: j) }
                } else if segmentsIntersect(a, b, c, d) {
                    return .selfIntersecting(edge: i, otherEdge: j)
                }
            }
        }
        return nil
    }

    /// True when every vertex lies within ε·d of the line through the first vertex and the vertex
    /// farthest from it (d that largest distance, ε = `relativeCollinearityTolerance`). O(n).
    static func areCollinear(_ points: [Point2]) -> Bool {
        guard let origin = points.first else { return true }
        var far = origin
        var farDistance = 0.0
        for p in points {
            let d = p.distance(to: origin)
            if d > farDistance { farDistance = d; far = p }
        }
        guard farDistance > 0 else { return true }
        for p in points {
            // Distance from p to the line origin–far: |(far − origin) × (p − origin)| / d.
            if abs(cross(origin, far, p)) / farDistance > relativeCollinearityTolerance * farDistance { return false }
        }
        return true
    }

    /// True when the closed segments [p1, p2] and [q1, q2] share at least one point (proper crossing,
    /// an endpoint on the other segment, or collinear overlap).
    static func segmentsIntersect(_ p1: Point2, _ p2: Point2, _ q1: Point2, _ q2: Point2) -> Bool {
        let d1 = cross(q1, q2, p1), d2 = cross(q1, q2, p2)
        let d3 = cross(p1, p2, q1), d4 = cross(p1, p2, q2)
        if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) {
            return true
        }
        if d1 == 0 && isWithinBox(p1, q1, q2) { return true }
        if d2 == 0 && isWithinBox(p2, q1, q2) { return true }
        if d3 == 0 && isWithinBox(q1, p1, p2) { return true }
        if d4 == 0 && isWithinBox(q2, p1, p2) { return true }
        return false
    }

    /// Two edges meeting at `shared` overlap beyond it: the other ends are collinear with it and on
    /// the same side (the polygon doubles back along itself).
    private static func foldsBack(shared: Point2, from: Point2, to: Point2) -> Bool {
        let ux = from.x - shared.x, uy = from.y - shared.y
        let vx = to.x - shared.x, vy = to.y - shared.y
        return ux * vy - uy * vx == 0 && ux * vx + uy * vy > 0
    }

    /// z-component of (b − a) × (c − a): > 0 when c lies left of the directed line a→b.
    private static func cross(_ a: Point2, _ b: Point2, _ c: Point2) -> Double {
        (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
    }

    /// p lies in the axis-aligned box spanned by a and b (used once p is known collinear with a, b).
    private static func isWithinBox(_ p: Point2, _ a: Point2, _ b: Point2) -> Bool {
        min(a.x, b.x) <= p.x && p.x <= max(a.x, b.x) && min(a.y, b.y) <= p.y && p.y <= max(a.y, b.y)
    }
}
