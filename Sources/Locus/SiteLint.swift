import LocusCore
import LocusSolvers
import LocusZones

/// The warnings of a valid site (`locus lint`; errors are `SiteDecoder.validate`'s): legal
/// configurations that will not behave as intended, floor by floor, each with a stable key and the
/// JSON path of what it is about.
///
/// Per floor, in this order:
/// - `floor.tooFewLocators`: fewer than 3 locators (nothing can be positioned).
/// - `floor.noSessionId`: no `sessionId` (`positioningReady` is false; the engine still positions).
/// - the layout of its locators (3 or more; at most one of, see `layoutWarning`):
///   `floor.locatorsClustered`, `floor.locatorsCollinear` (planar), `floor.locatorsCoplanar` (spatial).
/// - `locator.outsideFloor`, per locator, when the floor has an extent.
/// - per zone, in site order: `ZoneJudge.warnings` (`zone.inCount.zero`,
///   `zone.inCountInterval.tooShort`, `zone.outPeriod.tooShort`, `zone.outsideFloor`,
///   `zone.partlyOutsideFloor`, `zone.noLocatorCoverage`), then `zone.beyondRange` (which stands in
///   for `zone.noLocatorCoverage`: the stronger statement) and `zone.outsideCoverage` (see
///   `reachWarnings`).
///
/// The mode of a floor (planar or spatial) is the solver's: `TrilaterationConfiguration.resolvedMode`
/// over all its locators. Complexity per floor O(n² + zones × vertices × n) for n locators.
enum SiteLint {
    /// Settings of the checks; `standard` is what `locus lint` uses.
    struct Options: Sendable, Equatable {
        /// The position period Δt = 1/rate the zone rules are judged against, seconds.
        var positionPeriodSeconds: Double
        /// Largest tag–locator distance at which a locator ranges, metres: `locus geometry`'s
        /// default (30 m), as the zone judge's default coverage range.
        var maximumRangeMeters: Double
        /// Locators all closer than this to one another (horizontal distance) are one cluster,
        /// metres.
        var clusterDiameterMeters: Double
        /// Mode rule, singularity threshold and largest DOP, shared with the solver.
        var trilateration: TrilaterationConfiguration

        /// Options with every field given (see `standard` for the defaults).
        init(positionPeriodSeconds: Double, maximumRangeMeters: Double, clusterDiameterMeters: Double,
                     trilateration: TrilaterationConfiguration) {
            self.positionPeriodSeconds = positionPeriodSeconds
            self.maximumRangeMeters = maximumRangeMeters
            self.clusterDiameterMeters = clusterDiameterMeters
            self.trilateration = trilateration
        }

        /// 4 Hz (Δt = 0.25 s), 30 m range, clusters under 0.5 m, the solver's standard configuration.
        /// 0.5 m: a few times UWB's ranging noise (~0.1 m); locators closer than that are one point
        /// seen from a tag metres away, so no direction is determined.
        static let standard = Options(
            positionPeriodSeconds: 1 / EngineOptions().rateHertz,
            maximumRangeMeters: GeometryReportOptions.standard.maximumRangeMeters,
            clusterDiameterMeters: 0.5, trilateration: .standard)

        /// The zone-rule options these settings imply (coverage range = `maximumRangeMeters`).
        var zoneJudgeOptions: ZoneJudgeOptions {
            ZoneJudgeOptions(positionPeriodSeconds: positionPeriodSeconds, coverageRangeMeters: maximumRangeMeters)
        }
    }

    /// Every warning of `site`, floor by floor (see the type's documentation for the keys and
    /// their order).
    static func warnings(for site: Site, options: Options = .standard) -> [SiteLintWarning] {
        var out: [SiteLintWarning] = []
        for (i, floor) in site.floors.enumerated() {
            out += warnings(for: floor, path: "floors[\(i)]", options: options)
        }
        return out
    }

    /// The warnings of one floor at JSON path `path`.
    static func warnings(for floor: Floor, path: String, options: Options) -> [SiteLintWarning] {
        var out: [SiteLintWarning] = []
        func add(_ key: String, _ at: String, _ message: String) {
            out.append(SiteLintWarning(key: key, floor: floor.id, path: at, message: message))
        }
        if floor.locators.count < 3 {
            add("floor.tooFewLocators", path,
                "floor '\(floor.id)' has \(plural(floor.locators.count, "locator")): at least 3 are needed to position")
        }
        if floor.sessionID == nil {
            add("floor.noSessionId", path,
                "floor '\(floor.id)' has no sessionId: positioningReady is false (the engine still positions)")
        }
        let positions = floor.locators.map(\.position)
        let mode = options.trilateration.resolvedMode(for: positions)
        if let layout = layoutWarning(floor: floor, mode: mode, options: options) {
            add(layout.key, path, layout.message)
        }
        for (j, message) in outsideFloorMessages(floor) {
            add("locator.outsideFloor", path + ".locators[\(j)]", message)
        }

        var ruleWarnings: [ZoneID: [ZoneConfigurationWarning]] = [:]
        for w in ZoneJudge.warnings(for: floor, options: options.zoneJudgeOptions) { ruleWarnings[w.zone, default: []].append(w) }
        for (k, zone) in floor.zones.enumerated() {
            let zonePath = path + ".zones[\(k)]"
            let reach = reachWarnings(floor: floor, zone: zone, mode: mode, options: options)
            for w in ruleWarnings[zone.id] ?? [] where !(w.kind == .noLocatorCoverage && reach.beyondRange != nil) {
                add(w.kind.rawValue, zonePath, w.message)
            }
            if let message = reach.beyondRange { add("zone.beyondRange", zonePath, message) }
            let noCoverage = ruleWarnings[zone.id]?.contains { $0.kind == .noLocatorCoverage } ?? false
            if !noCoverage, let message = reach.outsideCoverage { add("zone.outsideCoverage", zonePath, message) }
        }
        return out
    }
}
