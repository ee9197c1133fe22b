import LocusCore
import LocusSolvers

extension SiteLint {
    /// Thickness below which a flat layout is called exactly collinear/coplanar rather than nearly,
    /// metres: 1 mm, the resolution of a survey written to the millimetre.
    static let exactFlatnessMeters = 0.001

    /// The one layout warning of a floor with at least 3 locators, nil when the layout is sound.
    ///
    /// - `floor.locatorsClustered`: every pair of locators is closer than
    ///   `options.clusterDiameterMeters` horizontally (coincident locators included). Reported
    ///   instead of collinear: a cluster has no direction to speak of.
    /// - `floor.locatorsCollinear` (planar mode) / `floor.locatorsCoplanar` (spatial mode): the
    ///   layout's thickness t along its minor principal axis u is below 10 % of a yardstick, or its
    ///   spread ratio √(λ_min/λ_max) < 10⁻³ — `locus geometry`'s rule, judged by LocusSolvers
    ///   (`GeometryReport.flatLayout`, which says what the yardstick is). "Exactly" flat below
    ///   `exactFlatnessMeters`.
    ///
    /// Why not the DOP at the locators' centroid (the check this replaces): the centroid of
    /// collinear locators lies on their line, where HᵀH is singular only in exact arithmetic.
    /// Coordinates written to the millimetre leave rcond ≈ 10⁻⁹ > 10⁻¹⁰ and a PDOP in the
    /// hundreds < 10⁴, so the solver's "cannot compute" guards pass and a collinear layout went
    /// unwarned — let alone a nearly collinear one (Fixtures/sites/poor-geometry.json, HDOP 34 at
    /// worst). Flatness is a property of the layout, not of one point, so it is measured on the
    /// layout.
    static func layoutWarning(floor: Floor, mode: TrilaterationMode, options: Options)
        -> (key: String, message: String)? {
        let positions = floor.locators.map(\.position)
        guard positions.count >= 3 else { return nil }
        let n = plural(positions.count, "locator")
        let diameter = horizontalDiameter(positions)
        if diameter < options.clusterDiameterMeters {
            return ("floor.locatorsClustered",
                    "floor '\(floor.id)': the \(n) all lie within \(GeometryReport.text(diameter, 2)) m of one another "
                    + "(< \(GeometryReport.text(options.clusterDiameterMeters, 2)) m): seen from a tag they are one point, "
                    + "so positions cannot be determined")
        }
        let spatial = mode == .spatial
        guard let flat = GeometryReport.flatLayout(positions, spatial: spatial, floorWidthMeters: floor.widthMeters,
                                                   floorHeightMeters: floor.heightMeters) else { return nil }
        let u = flat.minorAxis
        let exact = flat.thicknessMeters < exactFlatnessMeters
        let what = spatial ? "coplanar" : "collinear", figure = spatial ? "plane" : "line"
        let consequence = exact ? "positions across it cannot be determined" : "positions across it are poorly determined"
        return (spatial ? "floor.locatorsCoplanar" : "floor.locatorsCollinear",
                "floor '\(floor.id)': the \(n) are \(exact ? "" : "nearly ")\(what): they lie within "
                + "\(GeometryReport.text(flat.thicknessMeters, 3)) m of a \(figure) (\(flat.yardstick)); \(consequence) "
                + "(direction (\(GeometryReport.text(u.x, 2)), \(GeometryReport.text(u.y, 2))"
                + "\(spatial ? ", " + GeometryReport.text(u.z, 2) : "")))")
    }

    /// The largest horizontal distance between two of `points`, metres (0 for fewer than 2). O(n²).
    static func horizontalDiameter(_ points: [Point3]) -> Double {
        var largest = 0.0
        for i in points.indices {
            for j in points.indices where j > i {
                largest = max(largest, points[i].horizontal.distance(to: points[j].horizontal))
            }
        }
        return largest
    }

    /// `locator.outsideFloor`: each locator whose (x, y) lies outside the closed floor rectangle
    /// [originX, originX + widthM] × [originY, originY + heightM], as (index, message); none when
    /// the floor has no extent (widthM or heightM 0).
    static func outsideFloorMessages(_ floor: Floor) -> [(Int, String)] {
        guard floor.widthMeters > 0, floor.heightMeters > 0 else { return [] }
        let x0 = floor.originX, y0 = floor.originY, x1 = x0 + floor.widthMeters, y1 = y0 + floor.heightMeters
        var out: [(Int, String)] = []
        for (j, locator) in floor.locators.enumerated() {
            let p = locator.position
            guard p.x < x0 || p.x > x1 || p.y < y0 || p.y > y1 else { continue }
            out.append((j, "locator \(locator.address) at (\(GeometryReport.text(p.x, 2)), \(GeometryReport.text(p.y, 2))) "
                        + "is outside floor '\(floor.id)' (\(GeometryReport.text(x0, 2))…\(GeometryReport.text(x1, 2)) × "
                        + "\(GeometryReport.text(y0, 2))…\(GeometryReport.text(y1, 2)) m)"))
        }
        return out
    }
}
