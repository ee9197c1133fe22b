import LocusCore

/// A validated simple polygon with precomputed edges and bounding box, metres.
///
/// Built by `init(validating:zone:)`: at least 3 distinct vertices, either winding, a repeated
/// closing vertex and repeated consecutive vertices dropped, no self-intersection (touching counts),
/// non-zero area. The boundary counts as inside (up to floating-point rounding of the edge test).
/// Validation is exact in scale (powers of two) up to the largest doubles; distances are meaningful
/// while coordinate differences squared stay finite (|coordinates| below about 1e150 m).
package struct ZonePolygon: Sendable, Hashable {
    /// One edge from a = (ax, ay) to b (whose y is `by`, the next vertex's exact y), with
    /// d = b − a and 1/|d|² (48 bytes).
    struct Edge: Sendable, Hashable {
        var ax: Double, ay: Double, by: Double
        var dx: Double, dy: Double
        var inverseLengthSquared: Double
    }

    /// The vertices in their given order, without a closing repeat or consecutive duplicates.
    package let vertices: [Point2]
    let edges: [Edge]
    /// Bounding box, metres.
    package let minX: Double, minY: Double, maxX: Double, maxY: Double
    /// Enclosed area |A|, A = ½ Σ (xᵢ yᵢ₊₁ − xᵢ₊₁ yᵢ) (shoelace), square metres.
    package let areaSquareMeters: Double

    /// Same vertices in the same order (the edges follow from them).
    package static func == (a: ZonePolygon, b: ZonePolygon) -> Bool { a.vertices == b.vertices }
    /// Hashes the vertices.
    package func hash(into hasher: inout Hasher) { hasher.combine(vertices) }

    /// Validates `points` and precomputes the edges and bounding box. O(n²) for the
    /// self-intersection test (n vertices).
    /// - Parameters:
    ///   - points: vertices in either winding; a repeated closing vertex is allowed.
    ///   - zone: the zone's id, for the message.
    ///   - jsonPath: where the polygon lies (e.g. `zones[3].polygon`), for the error context.
    /// - Throws: `E3105` a non-finite coordinate; `E3108` fewer than 3 distinct vertices;
    ///   `E3110` zero area; `E3109` edges that cross or touch.
    package init(validating points: [Point2], zone: ZoneID? = nil, jsonPath: String? = nil) throws(LocusError) {
        let context = LocusError.Context(jsonPath: jsonPath)
        let name = zone.map { "zone '\($0)': " } ?? ""
        for p in points where !(p.x.isFinite && p.y.isFinite) {
            throw LocusError(.siteNonFiniteNumber, "\(name)polygon vertex (\(p.x), \(p.y)) is not finite", context: context)
        }
        var v: [Point2] = []
        v.reserveCapacity(points.count)
        for p in points where v.last != p { v.append(p) }
        while v.count > 1, let first = v.first, v.last == first { v.removeLast() }
        guard v.count >= 3 else {
            throw LocusError(.polygonTooFewVertices,
                             "\(name)polygon has \(v.count) distinct vertices; at least 3 are needed", context: context)
        }
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        for a in v { minX = min(minX, a.x); minY = min(minY, a.y); maxX = max(maxX, a.x); maxY = max(maxY, a.y) }
        // Validation runs on a copy scaled by a power of two (exact) when coordinates are so large
        // that products would overflow, so the exact zero tests keep their meaning.
        let largest = max(abs(minX), abs(maxX), abs(minY), abs(maxY))
        let factor = largest > 1e100 ? Double(sign: .plus, exponent: -largest.exponent, significand: 1) : 1
        let w = factor == 1 ? v : v.map { Point2(x: $0.x * factor, y: $0.y * factor) }
        // Shoelace about the first vertex (less cancellation far from the origin).
        var twiceArea = 0.0
        for i in 1..<(w.count - 1) {
            let a = w[i], b = w[i + 1]
            twiceArea += (a.x - w[0].x) * (b.y - w[0].y) - (b.x - w[0].x) * (a.y - w[0].y)
        }
        let wx = (maxX - minX) * factor, wy = (maxY - minY) * factor
        let scale = wx * wx + wy * wy
        let allCollinear = w.indices.allSatisfy { abs(Self.orientation(w[0], w[1], w[$0])) <= 1e-12 * scale }
        if !allCollinear, let (i, j) = Self.firstIntersection(w) {
            throw LocusError(.polygonSelfIntersecting,
                             "\(name)polygon edges \(i) and \(j) cross or touch (the polygon must be simple)",
                             context: context)
        }
        // A simple polygon that is not flat has non-zero area; this also catches rounding-level slivers.
        guard !allCollinear, abs(twiceArea) > 1e-12 * scale else {
            throw LocusError(.polygonZeroArea, "\(name)polygon encloses no area", context: context)
        }
        var edges: [Edge] = []
        edges.reserveCapacity(v.count)
        for i in 0..<v.count {
            let a = v[i], b = v[(i + 1) % v.count]
            let dx = b.x - a.x, dy = b.y - a.y
            edges.append(Edge(ax: a.x, ay: a.y, by: b.y, dx: dx, dy: dy,
                              inverseLengthSquared: 1 / (dx * dx + dy * dy)))
        }
        self.vertices = v
        self.edges = edges
        self.minX = minX; self.minY = minY; self.maxX = maxX; self.maxY = maxY
        self.areaSquareMeters = abs(twiceArea) / 2 / (factor * factor)
    }

    /// True when `p` lies inside the polygon or on its boundary (even–odd crossing rule, with an
    /// exact on-edge test first). O(n).
    package func contains(_ p: Point2) -> Bool {
        guard p.x >= minX, p.x <= maxX, p.y >= minY, p.y <= maxY else { return false }
        return edges.withUnsafeBufferPointer { Self.contains(p, edges: $0) }
    }

    /// Planar distance from `p` to the polygon, metres: 0 inside and on the boundary, otherwise
    /// minᵢ |p − closest point of edge i|. O(n).
    package func distance(to p: Point2) -> Double {
        if contains(p) { return 0 }
        var best = Double.infinity
        for e in edges { best = min(best, Self.squaredDistance(p, e)) }
        return best.squareRoot()
    }

    /// True when the distance from `p` to the polygon is at most `reachMeters` (SPEC §4.1
    /// "qualifies"), decided as d² ≤ reach² with an early exit. O(n).
    package func isWithin(_ reachMeters: Double, of p: Point2) -> Bool {
        guard p.x >= minX - reachMeters, p.x <= maxX + reachMeters,
              p.y >= minY - reachMeters, p.y <= maxY + reachMeters else { return false }
        return edges.withUnsafeBufferPointer {
            Self.isWithin(reachSquaredSquareMeters: reachMeters * reachMeters, of: p, edges: $0)
        }
    }

    // MARK: edge kernels (shared with the judge's flat edge table)

    /// Even–odd crossing test with the boundary inside, over the edges of one polygon.
    @inline(__always)
    static func contains(_ p: Point2, edges: UnsafeBufferPointer<Edge>) -> Bool {
        var inside = false
        for e in edges {
            let px = p.x - e.ax, py = p.y - e.ay
            if e.dx * py - e.dy * px == 0 {
                let dot = px * e.dx + py * e.dy
                if dot >= 0, dot <= e.dx * e.dx + e.dy * e.dy { return true }
            }
            if (e.ay > p.y) != (e.by > p.y) {
                let xCross = e.ax + (p.y - e.ay) * e.dx / e.dy
                if p.x < xCross { inside.toggle() }
            }
        }
        return inside
    }

    /// d(p, polygon)² ≤ r² in one pass over the edges: true as soon as an edge is within r or
    /// holds p exactly; otherwise the even–odd crossing parity says whether p is inside. Points
    /// outside the bounding box have even parity, so no box test is needed.
    @inline(__always)
    static func isWithin(reachSquaredSquareMeters: Double, of p: Point2, edges: UnsafeBufferPointer<Edge>) -> Bool {
        var inside = false
        for e in edges {
            let px = p.x - e.ax, py = p.y - e.ay
            let dot = px * e.dx + py * e.dy
            let tau = min(1, max(0, dot * e.inverseLengthSquared))
            let ex = px - tau * e.dx, ey = py - tau * e.dy
            if ex * ex + ey * ey <= reachSquaredSquareMeters { return true }
            if e.dx * py - e.dy * px == 0, dot >= 0, dot <= e.dx * e.dx + e.dy * e.dy { return true }
            if (e.ay > p.y) != (e.by > p.y), p.x < e.ax + (p.y - e.ay) * e.dx / e.dy { inside.toggle() }
        }
        return inside
    }

    /// Squared distance from `p` to edge e: with u = p − a and τ = clamp((u·d)/|d|², 0, 1),
    /// |u − τ d|², square metres.
    @inline(__always)
    static func squaredDistance(_ p: Point2, _ e: Edge) -> Double {
        let px = p.x - e.ax, py = p.y - e.ay
        let tau = min(1, max(0, (px * e.dx + py * e.dy) * e.inverseLengthSquared))
        let ex = px - tau * e.dx, ey = py - tau * e.dy
        return ex * ex + ey * ey
    }

    // MARK: validation helpers

    /// Orientation (b − a) × (c − a): > 0 counter-clockwise, < 0 clockwise, 0 collinear.
    private static func orientation(_ a: Point2, _ b: Point2, _ c: Point2) -> Double {
        (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
    }

    /// For collinear p: true when p lies within the bounding box of segment a–b.
    private static func onSegment(_ a: Point2, _ b: Point2, _ p: Point2) -> Bool {
        p.x >= min(a.x, b.x) && p.x <= max(a.x, b.x) && p.y >= min(a.y, b.y) && p.y <= max(a.y, b.y)
    }

    /// True when closed segments p1–p2 and q1–q2 share at least one point.
    private static func segmentsIntersect(_ p1: Point2, _ p2: Point2, _ q1: Point2, _ q2: Point2) -> Bool {
        let d1 = orientation(q1, q2, p1), d2 = orientation(q1, q2, p2)
        let d3 = orientation(p1, p2, q1), d4 = orientation(p1, p2, q2)
        if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) { return true }
        if d1 == 0 && onSegment(q1, q2, p1) { return true }
        if d2 == 0 && onSegment(q1, q2, p2) { return true }
        if d3 == 0 && onSegment(p1, p2, q1) { return true }
        if d4 == 0 && onSegment(p1, p2, q2) { return true }
        return false
    }

    /// The first pair of edges (i < j) that intersect improperly: non-adjacent edges sharing a
    /// point, or adjacent edges folding back onto each other. Nil for a simple polygon.
    private static func firstIntersection(_ v: [Point2]) -> (Int, Int)? {
        let n = v.count
        for i in 0..<n {
            let a = v[i], b = v[(i + 1) % n], c = v[(i + 2) % n]
            // Adjacent edges a–b and b–c overlap when collinear and turning back.
            if orientation(a, b, c) == 0 && (b.x - a.x) * (c.x - b.x) + (b.y - a.y) * (c.y - b.y) < 0 {
                return (i, (i + 1) % n)
            }
            for j in stride(from: i + 2, to: n, by: 1) {
                if i == 0 && j == n - 1 { continue } // adjacent through the closing vertex
                if segmentsIntersect(a, b, v[j], v[(j + 1) % n]) { return (i, j) }
            }
        }
        return nil
    }
}
