import LocusCore
import LocusSolvers
import LocusZones

extension SiteLint {
    /// Whether a zone can be reached by the floor's locators: the `zone.beyondRange` and
    /// `zone.outsideCoverage` messages, nil when the check passes (or does not apply).
    ///
    /// - `zone.beyondRange`: the floor has locators and every one is farther than
    ///   `options.maximumRangeMeters` from the zone — planar distance from its (x, y) to the polygon,
    ///   0 inside, as `ZoneJudge`'s coverage check measures it; so no range from anywhere in the
    ///   zone reaches any locator. The message names the nearest locator and its distance.
    /// - `zone.outsideCoverage`: with at least as many locators as the mode needs (3 planar, 4
    ///   spatial), the zone's check points — its vertices and its area centroid
    ///   (`PolygonValidation.centroid`) — where a tag (at the floor's `tagHeightM`) cannot be
    ///   positioned: fewer locators than needed within `options.maximumRangeMeters` (3-D distance,
    ///   as `locus geometry` counts them), or a DOP that `GeometryQuality.dop` cannot compute from
    ///   those locators (E4001/E4002: they are collinear, coplanar or coincident as seen from
    ///   there). The message names up to three such points.
    ///
    /// Zones with an invalid polygon (never from the decoder) get neither. O(vertices × n).
    static func reachWarnings(floor: Floor, zone: Zone, mode: TrilaterationMode, options: Options)
        -> (beyondRange: String?, outsideCoverage: String?) {
        guard !floor.locators.isEmpty, let polygon = try? ZonePolygon(validating: zone.polygon, zone: zone.id) else {
            return (nil, nil)
        }
        let range = options.maximumRangeMeters
        var nearest = floor.locators[0], nearestDistance = Double.infinity
        for locator in floor.locators {
            let d = polygon.distance(to: locator.position.horizontal)
            if d < nearestDistance { nearest = locator; nearestDistance = d }
        }
        if nearestDistance > range {
            return ("zone '\(zone.id)' is beyond the range of every locator: the nearest, \(nearest.address), is "
                    + "\(GeometryReport.text(nearestDistance, 1)) m away (range \(GeometryReport.text(range, 1)) m), "
                    + "so no tag in it can be positioned", nil)
        }

        let needed = mode == .spatial ? 4 : 3
        guard floor.locators.count >= needed else { return (nil, nil) }
        let positions = floor.locators.map(\.position)
        let checkPoints = polygon.vertices + [PolygonValidation.centroid(polygon.vertices)]
        var failures: [String] = []
        for q in checkPoints {
            let at = Point3(x: q.x, y: q.y, z: floor.tagHeightMeters)
            let inRange = positions.filter { $0.distance(to: at) <= range }
            let point = "(\(GeometryReport.text(q.x, 2)), \(GeometryReport.text(q.y, 2)))"
            if inRange.count < needed {
                failures.append("\(point) has \(plural(inRange.count, "locator")) within \(GeometryReport.text(range, 1)) m")
                continue
            }
            do {
                _ = try GeometryQuality.dop(locators: inRange, at: at, mode: mode, tagHeightMeters: floor.tagHeightMeters,
                                            configuration: options.trilateration)
            } catch {
                failures.append("\(point) sees its \(plural(inRange.count, "locator")) in range in a degenerate geometry")
            }
        }
        guard !failures.isEmpty else { return (nil, nil) }
        let listed = failures.prefix(3).joined(separator: "; ") + (failures.count > 3 ? "; …" : "")
        let extent = failures.count == checkPoints.count ? "outside" : "partly outside"
        return (nil, "zone '\(zone.id)' is \(extent) positioning coverage: at \(failures.count) of its "
                + "\(checkPoints.count) check points (vertices and centroid) positions cannot be determined: \(listed)")
    }
}
