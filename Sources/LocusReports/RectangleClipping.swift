import LocusCore

/// Clipping of polygons to an axis-aligned rectangle (a floor), for drawing zones that reach
/// beyond the floor.
enum RectangleClipping {
    /// The part of `polygon` inside [minX, maxX] × [minY, maxY] (Sutherland–Hodgman, one pass per
    /// side), metres; empty when nothing of it is inside. A concave polygon may come back with
    /// zero-width bridges along the rectangle's sides, which draw as nothing. Complexity O(vertices).
    static func clip(_ polygon: [Point2], minX: Double, minY: Double, maxX: Double, maxY: Double) -> [Point2] {
        var points = polygon
        // Each side: inside test and the crossing of segment a→b with the side's line.
        let sides: [(inside: (Point2) -> Bool, cross: (Point2, Point2) -> Point2)] = [
            ({ $0.x >= minX }, { a, b in Point2(x: minX, y: a.y + (b.y - a.y) * (minX - a.x) / (b.x - a.x)) }),
            ({ $0.x <= maxX }, { a, b in Point2(x: maxX, y: a.y + (b.y - a.y) * (maxX - a.x) / (b.x - a.x)) }),
            ({ $0.y >= minY }, { a, b in Point2(x: a.x + (b.x - a.x) * (minY - a.y) / (b.y - a.y), y: minY) }),
            ({ $0.y <= maxY }, { a, b in Point2(x: a.x + (b.x - a.x) * (maxY - a.y) / (b.y - a.y), y: maxY) }),
        ]
        for side in sides {
            guard !points.isEmpty else { break }
            var out: [Point2] = []
            var previous = points[points.count - 1]
            for current in points {
                let currentIn = side.inside(current), previousIn = side.inside(previous)
                if currentIn {
                    if !previousIn { out.append(side.cross(previous, current)) }
                    out.append(current)
                } else if previousIn {
                    out.append(side.cross(previous, current))
                }
                previous = current
            }
            points = out
        }
        return points.count >= 3 && abs(area(points)) > 1e-12 ? points : []
    }

    /// Signed area (shoelace), m².
    static func area(_ polygon: [Point2]) -> Double {
        var sum = 0.0
        for (i, p) in polygon.enumerated() {
            let q = polygon[(i + 1) % polygon.count]
            sum += p.x * q.y - q.x * p.y
        }
        return sum / 2
    }
}
