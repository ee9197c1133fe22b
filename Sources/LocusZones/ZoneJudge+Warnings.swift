import LocusCore

extension ZoneJudge {
    /// The configuration warnings for `floor`'s zones, in zone order, then in `Kind` order.
    ///
    /// - `inCount` 0; `inCount ≥ 2` with `inCountInterval` < Δt (`options.positionPeriodSeconds`);
    ///   `outPeriod` < Δt.
    /// - Floor rectangle [originX, originX + widthM] × [originY, originY + heightM] (checked only
    ///   when widthM and heightM are > 0): all polygon vertices outside → `outsideFloor`; some →
    ///   `partlyOutsideFloor`.
    /// - Coverage: a locator covers a zone when the planar distance from its (x, y) to the zone
    ///   polygon (0 inside) is ≤ `options.coverageRangeMeters`; fewer than
    ///   `options.minimumCoveringLocators` covering locators → `noLocatorCoverage`.
    ///
    /// Zones with an invalid polygon get only the rule warnings (the polygon itself is an error
    /// reported by `init(floor:)`). O(zones × (vertices + locators × vertices)).
    package static func warnings(for floor: Floor, options: ZoneJudgeOptions = .standard) -> [ZoneConfigurationWarning] {
        var out: [ZoneConfigurationWarning] = []
        for zone in floor.zones {
            let r = zone.rules
            if r.inCount == 0 {
                out.append(.init(kind: .inCountZero, zone: zone.id,
                                 message: "zone '\(zone.id)' has inCount 0 and never enters"))
            } else if r.inCount >= 2, r.inCountIntervalSeconds < options.positionPeriodSeconds {
                out.append(.init(kind: .inCountIntervalTooShort, zone: zone.id,
                                 message: "zone '\(zone.id)' needs inCount \(r.inCount) detections at most "
                                     + "\(r.inCountIntervalSeconds) s apart, shorter than the position period "
                                     + "\(options.positionPeriodSeconds) s: it can never enter"))
            }
            if r.outPeriodSeconds < options.positionPeriodSeconds {
                out.append(.init(kind: .outPeriodTooShort, zone: zone.id,
                                 message: "zone '\(zone.id)' has outPeriod \(r.outPeriodSeconds) s, shorter than the "
                                     + "position period \(options.positionPeriodSeconds) s: a tag standing in it exits "
                                     + "and re-enters at every fix"))
            }
            guard let polygon = try? ZonePolygon(validating: zone.polygon, zone: zone.id) else { continue }
            if floor.widthMeters > 0, floor.heightMeters > 0 {
                let x0 = floor.originX, y0 = floor.originY
                let x1 = x0 + floor.widthMeters, y1 = y0 + floor.heightMeters
                let outside = polygon.vertices.filter { $0.x < x0 || $0.x > x1 || $0.y < y0 || $0.y > y1 }.count
                if outside == polygon.vertices.count {
                    out.append(.init(kind: .outsideFloor, zone: zone.id,
                                     message: "zone '\(zone.id)' lies entirely outside floor '\(floor.id)' "
                                         + "(\(x0)…\(x1) × \(y0)…\(y1) m)"))
                } else if outside > 0 {
                    out.append(.init(kind: .partlyOutsideFloor, zone: zone.id,
                                     message: "zone '\(zone.id)' lies partly outside floor '\(floor.id)' "
                                         + "(\(outside) of \(polygon.vertices.count) vertices outside "
                                         + "\(x0)…\(x1) × \(y0)…\(y1) m)"))
                }
            }
            let covering = floor.locators.filter {
                polygon.distance(to: $0.position.horizontal) <= options.coverageRangeMeters
            }.count
            if covering < options.minimumCoveringLocators {
                out.append(.init(kind: .noLocatorCoverage, zone: zone.id,
                                 message: "zone '\(zone.id)' has \(plural(covering, "locator")) within "
                                     + "\(options.coverageRangeMeters) m; \(options.minimumCoveringLocators) "
                                     + "are needed to position tags there"))
            }
        }
        return out
    }
}
