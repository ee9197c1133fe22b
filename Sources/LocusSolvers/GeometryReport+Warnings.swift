import LocusCore
import LocusNumerics

/// The shape of a locator layout: principal spreads of the centred coordinates. Internal: other
/// modules get its verdict (`GeometryReport.flatLayout(_:spatial:floorWidthMeters:floorHeightMeters:)`),
/// not its figures.
struct LayoutShape: Sendable, Equatable {
    /// Unit direction of least spread (the layout's "thickness" axis); planar: u_z = 0.
    var minorAxis: Vector3
    /// Extent max uᵀpᵢ − min uᵀpᵢ of the locators along `minorAxis`, metres.
    var thicknessMeters: Double
    /// √(λ_min/λ_max) of the scatter matrix Σ (pᵢ − p̄)(pᵢ − p̄)ᵀ (0 for a perfect line/plane).
    var spreadRatio: Double

    /// The shape of `points` in the plane (`spatial == false`: x, y only) or in space: the
    /// eigen-decomposition of the 2×2 or 3×3 scatter matrix (`SymmetricEigen`, LAPACK `dsyev`:
    /// offline work, one implementation). nil for fewer than 2 points or all points coincident.
    init?(points: [Point3], spatial: Bool) {
        guard points.count >= 2 else { return nil }
        let n = Double(points.count), size = spatial ? 3 : 2
        let mx = points.reduce(0) { $0 + $1.x } / n, my = points.reduce(0) { $0 + $1.y } / n
        let mz = spatial ? points.reduce(0) { $0 + $1.z } / n : 0
        // Σ (pᵢ − p̄)(pᵢ − p̄)ᵀ, column-major size × size.
        var scatter = [Double](repeating: 0, count: size * size)
        for p in points {
            let d = [p.x - mx, p.y - my, p.z - mz]
            for c in 0..<size { for r in 0..<size { scatter[c * size + r] += d[r] * d[c] } }
        }
        // Eigenvalues ascending: the first is the least spread, its vector the minor axis.
        guard let eigen = try? SymmetricEigen(scatter, size: size), let largest = eigen.values.last, largest > 0 else { return nil }
        var u = Vector3(x: eigen.vectors[0], y: eigen.vectors[1], z: spatial ? eigen.vectors[2] : 0)
        // A direction has two signs: the one whose largest component is positive (messages print it).
        let components = [u.x, u.y, u.z]
        if let big = components.max(by: { abs($0) < abs($1) }), big < 0 { u = Vector3(x: -u.x, y: -u.y, z: -u.z) }
        let projections = points.map { $0.x * u.x + $0.y * u.y + $0.z * u.z }
        minorAxis = u
        thicknessMeters = (projections.max() ?? 0) - (projections.min() ?? 0)
        spreadRatio = (max(0, eigen.values[0]) / largest).squareRoot()
    }
}

extension GeometryReport {
    /// Below this √(λ_min/λ_max) of the locators' scatter a layout is flat whatever its size.
    static let flatSpreadRatio = 1e-3

    /// `locus lint`'s flat-layout test of a floor's locators (`floor.locatorsCollinear` /
    /// `floor.locatorsCoplanar`), by `locus geometry`'s rule: the layout's thickness t along its
    /// minor principal axis u (`LayoutShape`) is below `flatLayoutFraction` (10 %) of a yardstick,
    /// or √(λ_min/λ_max) < `flatSpreadRatio`. The yardstick, planar: the floor's extent across u,
    /// W|uₓ| + H|u_y|, when the floor has one (both sides > 0), otherwise the layout's own extent
    /// along its major axis; spatial: the diagonal of the layout's 3-D bounding box.
    ///
    /// Returns t (metres), u (its largest component positive) and the yardstick as a message says
    /// it ("the floor is 12.0 m across it"); nil when the layout is not flat or has no shape
    /// (fewer than 2 points, or all coincident).
    package static func flatLayout(_ points: [Point3], spatial: Bool, floorWidthMeters: Double, floorHeightMeters: Double)
        -> (thicknessMeters: Double, minorAxis: Vector3, yardstick: String)? {
        guard let shape = LayoutShape(points: points, spatial: spatial) else { return nil }
        let u = shape.minorAxis
        let reference: Double, yardstick: String
        if spatial {
            let xs = points.map(\.x), ys = points.map(\.y), zs = points.map(\.z)
            let dx = (xs.max() ?? 0) - (xs.min() ?? 0), dy = (ys.max() ?? 0) - (ys.min() ?? 0)
            let dz = (zs.max() ?? 0) - (zs.min() ?? 0)
            reference = (dx * dx + dy * dy + dz * dz).squareRoot()
            yardstick = "the layout spans \(text(reference, 1)) m"
        } else if floorWidthMeters > 0, floorHeightMeters > 0 {
            reference = floorWidthMeters * abs(u.x) + floorHeightMeters * abs(u.y)
            yardstick = "the floor is \(text(reference, 1)) m across it"
        } else {
            let along = points.map { -$0.x * u.y + $0.y * u.x }
            reference = (along.max() ?? 0) - (along.min() ?? 0)
            yardstick = "it is \(text(reference, 1)) m long"
        }
        guard shape.thicknessMeters < flatLayoutFraction * reference || shape.spreadRatio < flatSpreadRatio else {
            return nil
        }
        return (shape.thicknessMeters, u, yardstick)
    }
}

extension GeometryReport {
    /// Layout thickness below this fraction of the floor's extent across it is called collinear
    /// (planar) or coplanar (spatial: of the layout's own largest extent).
    static let flatLayoutFraction = 0.1

    /// The report's findings, in a fixed order:
    /// - `geometry.tooFewLocators`: fewer locators than the mode needs anywhere.
    /// - `geometry.locatorsCollinear` (planar) / `geometry.locatorsCoplanar` (spatial): the layout's
    ///   thickness t along its minor principal axis u is below 10 % of the floor's extent along u
    ///   (W|uₓ| + H|u_y|; spatial: of the layout's own extent along its major axis), or
    ///   √(λ_min/λ_max) < 10⁻³. Positions across that axis are poorly determined.
    /// - `geometry.locatorOutsideFloor`: a locator's (x, y) outside the floor rectangle.
    /// - `geometry.outOfRange`: cells with fewer locators in range than needed (fraction, box).
    /// - `geometry.poorHDOP`: cells with HDOP > `poorHDOP` or degenerate (fraction, box).
    /// - `geometry.zonePoorGeometry`: per zone (site order), its cells' worst HDOP > `coverageHDOP`
    ///   or some of its cells not covered. A zone's cells are those whose centre lies inside its
    ///   polygon (even–odd rule), or the cell holding its vertex mean when no centre does.
    static func warnings(floor: Floor, locators: [Point3], mode: TrilaterationMode, grid: GeometryGrid,
                         cells: [GeometryCell], statistics: GeometryStatistics,
                         options: GeometryReportOptions) -> [GeometryWarning] {
        var out: [GeometryWarning] = []
        let spatial = mode == .spatial
        let needed = options.locatorsNeeded(spatial: spatial)
        if locators.count < needed {
            out.append(GeometryWarning(key: "geometry.tooFewLocators",
                                       message: "floor '\(floor.id)' has \(plural(locators.count, "locator")); "
                                       + "\(needed) are needed in range to position (\(spatial ? "spatial" : "planar") mode"
                                       + (options.measurement == .tdoa ? ", TDoA)" : ")")))
        }
        if locators.count >= 3, let shape = LayoutShape(points: locators, spatial: spatial) {
            let u = shape.minorAxis
            let reference: Double
            if spatial {
                // Yardstick: the diagonal of the layout's 3-D bounding box.
                let xs = locators.map(\.x), ys = locators.map(\.y), zs = locators.map(\.z)
                let dx = (xs.max() ?? 0) - (xs.min() ?? 0), dy = (ys.max() ?? 0) - (ys.min() ?? 0), dz = (zs.max() ?? 0) - (zs.min() ?? 0)
                reference = (dx * dx + dy * dy + dz * dz).squareRoot()
            } else {
                reference = floor.widthMeters * abs(u.x) + floor.heightMeters * abs(u.y)
            }
            if shape.thicknessMeters < flatLayoutFraction * reference || shape.spreadRatio < Self.flatSpreadRatio {
                let what = spatial ? "coplanar" : "collinear"
                let across = spatial ? "the layout spans \(Self.text(reference, 1)) m" : "the floor is \(Self.text(reference, 1)) m across that line"
                out.append(GeometryWarning(
                    key: spatial ? "geometry.locatorsCoplanar" : "geometry.locatorsCollinear",
                    message: "the \(locators.count) locators are nearly \(what): they lie within \(Self.text(shape.thicknessMeters, 2)) m "
                    + "of a \(spatial ? "plane" : "line") (\(across)); positions across it are poorly determined "
                    + "(direction (\(Self.text(u.x, 2)), \(Self.text(u.y, 2))\(spatial ? ", " + Self.text(u.z, 2) : "")))"))
            }
        }
        let x0 = floor.originX, y0 = floor.originY, x1 = floor.originX + floor.widthMeters, y1 = floor.originY + floor.heightMeters
        for (i, p) in locators.enumerated() where p.x < x0 || p.x > x1 || p.y < y0 || p.y > y1 {
            let name = i < floor.locators.count ? "locator \(floor.locators[i].address)" : "locator #\(i + 1)"
            out.append(GeometryWarning(key: "geometry.locatorOutsideFloor",
                                       message: "\(name) at (\(Self.text(p.x, 2)), \(Self.text(p.y, 2))) is outside the floor rectangle "
                                       + "(\(Self.text(x0, 2))…\(Self.text(x1, 2)), \(Self.text(y0, 2))…\(Self.text(y1, 2)))"))
        }
        if statistics.outOfRangeCells > 0 {
            let box = Self.boundingBox(grid: grid) { cells[$0].locatorsInRange < needed }
            out.append(GeometryWarning(key: "geometry.outOfRange",
                                       message: "\(Self.percent(statistics.outOfRangeCells, grid.count)) of the floor has fewer than \(needed) "
                                       + "locators within \(Self.text(options.maximumRangeMeters, 1)) m\(box)"))
        }
        if statistics.poorCells > 0 {
            let box = Self.boundingBox(grid: grid) { j in
                if let h = cells[j].hdop { return h > options.poorHDOP }
                return cells[j].locatorsInRange >= needed
            }
            out.append(GeometryWarning(key: "geometry.poorHDOP",
                                       message: "\(Self.percent(statistics.poorCells, grid.count)) of the floor has HDOP > "
                                       + "\(Self.text(options.poorHDOP, 0))\(box)"))
        }
        for zone in floor.zones {
            let members = zoneCells(zone, grid: grid)
            guard !members.isEmpty else { continue }
            var worst = 0.0, uncovered = 0
            for j in members {
                if let h = cells[j].hdop, cells[j].locatorsInRange >= needed {
                    worst = max(worst, h)
                    if h > options.coverageHDOP { uncovered += 1 }
                } else {
                    uncovered += 1
                }
            }
            let unsolvable = members.filter { cells[$0].hdop == nil }.count
            guard uncovered > 0 else { continue }
            var message = "zone '\(zone.id)'"
            if unsolvable > 0 {
                message += ": \(Self.percent(unsolvable, members.count)) of it cannot be positioned"
                if unsolvable < members.count { message += ", worst HDOP elsewhere \(Self.text(worst, 1))" }
            } else {
                message += ": worst HDOP \(Self.text(worst, 1)) (> \(Self.text(options.coverageHDOP, 0)) on "
                    + "\(Self.percent(uncovered, members.count)) of it)"
            }
            out.append(GeometryWarning(key: "geometry.zonePoorGeometry", message: message))
        }
        return out
    }

    /// Indices of the cells whose centre is inside `zone`'s polygon (even–odd rule), or of the one
    /// cell holding the polygon's vertex mean when the zone is smaller than a cell.
    /// Complexity O(cells in the zone's bounding box · vertices).
    static func zoneCells(_ zone: Zone, grid: GeometryGrid) -> [Int] {
        let poly = zone.polygon
        guard poly.count >= 3 else { return [] }
        let xs = poly.map(\.x), ys = poly.map(\.y)
        let (minX, maxX, minY, maxY) = (xs.min() ?? 0, xs.max() ?? 0, ys.min() ?? 0, ys.max() ?? 0)
        func column(_ x: Double) -> Int { Int(((x - grid.originX) / grid.cellWidthMeters - 0.5).rounded(.down)) }
        func row(_ y: Double) -> Int { Int(((y - grid.originY) / grid.cellHeightMeters - 0.5).rounded(.down)) }
        let i0 = max(0, column(minX)), i1 = min(grid.columns - 1, column(maxX) + 1)
        let j0 = max(0, row(minY)), j1 = min(grid.rows - 1, row(maxY) + 1)
        var out: [Int] = []
        if i0 <= i1 && j0 <= j1 {
            for j in j0...j1 {
                for i in i0...i1 where isInside(grid.centre(column: i, row: j), polygon: poly) { out.append(j * grid.columns + i) }
            }
        }
        if out.isEmpty {
            let mx = xs.reduce(0, +) / Double(xs.count), my = ys.reduce(0, +) / Double(ys.count)
            let i = Int(((mx - grid.originX) / grid.cellWidthMeters).rounded(.down))
            let j = Int(((my - grid.originY) / grid.cellHeightMeters).rounded(.down))
            if (0..<grid.columns).contains(i) && (0..<grid.rows).contains(j) { out.append(j * grid.columns + i) }
        }
        return out
    }

    /// Even–odd point-in-polygon test (ray to +x).
    static func isInside(_ p: Point2, polygon: [Point2]) -> Bool {
        var inside = false
        var k = polygon.count - 1
        for i in 0..<polygon.count {
            let a = polygon[i], b = polygon[k]
            if (a.y > p.y) != (b.y > p.y) {
                let x = a.x + (p.y - a.y) * (b.x - a.x) / (b.y - a.y)
                if p.x < x { inside.toggle() }
            }
            k = i
        }
        return inside
    }

    /// " (x 1.0…4.5 m, y 0.0…2.0 m)" around the cells where `isMember` holds, "" when none.
    static func boundingBox(grid: GeometryGrid, _ isMember: (Int) -> Bool) -> String {
        var i0 = Int.max, i1 = Int.min, j0 = Int.max, j1 = Int.min
        for j in 0..<grid.rows {
            for i in 0..<grid.columns where isMember(j * grid.columns + i) {
                i0 = min(i0, i); i1 = max(i1, i); j0 = min(j0, j); j1 = max(j1, j)
            }
        }
        guard i0 <= i1 else { return "" }
        let x0 = grid.originX + Double(i0) * grid.cellWidthMeters, x1 = grid.originX + Double(i1 + 1) * grid.cellWidthMeters
        let y0 = grid.originY + Double(j0) * grid.cellHeightMeters, y1 = grid.originY + Double(j1 + 1) * grid.cellHeightMeters
        return " (within x \(text(x0, 1))…\(text(x1, 1)) m, y \(text(y0, 1))…\(text(y1, 1)) m)"
    }

    /// "12.5 %" of part in whole.
    static func percent(_ part: Int, _ whole: Int) -> String {
        text(whole > 0 ? 100 * Double(part) / Double(whole) : 0, 1) + " %"
    }

    /// `x` with `decimals` digits after the point (half away from zero, no `-0`), for messages.
    package static func text(_ x: Double, _ decimals: Int) -> String {
        guard x.isFinite else { return x.isNaN ? "nan" : (x > 0 ? "inf" : "-inf") }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(x) * scale).rounded(.toNearestOrAwayFromZero)
        guard scaled < 9e15 else { return String(x) }
        let digits = String(UInt64(scaled))
        let negative = x < 0 && scaled != 0
        guard decimals > 0 else { return (negative ? "-" : "") + digits }
        let padded = String(repeating: "0", count: max(0, decimals + 1 - digits.count)) + digits
        let cut = padded.index(padded.endIndex, offsetBy: -decimals)
        return (negative ? "-" : "") + padded[..<cut] + "." + padded[cut...]
    }
}
