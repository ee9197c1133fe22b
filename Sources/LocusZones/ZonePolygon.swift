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
    let minX: Double, minY: Double, maxX: Double, maxY: Double
    /// Enclosed area |A|, A = ½ Σ (xᵢ yᵢ₊₁ − xᵢ₊₁ yᵢ) (shoelace), square metres.
    let areaSquareMeters: Double

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
        // One rule set for the site decoder and the judge: PolygonValidation (LocusCore). Very large
        // coordinates are validated on a copy scaled by a power of two (exact), so that products
        // cannot overflow and the exact sign tests keep their meaning.
        let v = PolygonValidation.normalized(points)
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        for a in v { minX = min(minX, a.x); minY = min(minY, a.y); maxX = max(maxX, a.x); maxY = max(maxY, a.y) }
        let largest = v.isEmpty ? 0 : max(abs(minX), abs(maxX), abs(minY), abs(maxY))
        let factor = largest > 1e100 ? Double(sign: .plus, exponent: -largest.exponent, significand: 1) : 1
        let w = factor == 1 ? v : v.map { Point2(x: $0.x * factor, y: $0.y * factor) }
        if let problem = PolygonValidation.validate(w) {
            throw LocusError(problem.code, name + problem.message, context: context)
        }
        let twiceArea = 2 * PolygonValidation.signedArea(w)
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
    func contains(_ p: Point2) -> Bool {
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
    func isWithin(_ reachMeters: Double, of p: Point2) -> Bool {
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
}
