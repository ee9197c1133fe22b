import LocusCore
import LocusSolvers

/// Calibration of a site's locators from a recording, without ground truth: each locator's range
/// bias (and relative range scale), its range noise, and a check of its surveyed position — the
/// calibration `locus calibrate` runs without `--truth`, and `locus_calibrate` in the C ABI.
///
/// The ranges of each floor are grouped by tag into epochs (a round of ranging), and every epoch's
/// tag position is fitted jointly with the locators' parameters (a bundle adjustment with robust
/// weights; docs/calibration.md). What the recording cannot determine is reported, not guessed:
/// see `FloorReport.warnings` and `LocatorReport.note`.
///
/// ```swift
/// let report = try SiteCalibration.withoutTruth(site: site, ranges: recording)
/// for l in report.floors[0].locators where l.isFlagged { print(l.address, l.note ?? "") }
/// let calibrated = report.site   // biasM filled in
/// ```
public enum SiteCalibration {
    /// Settings.
    public struct Options: Sendable, Hashable {
        /// Also fit each locator's range scale s (r = (1 + s)·d + b), relative to their mean, which stays the site's.
        public var fitsSlope = false
        /// Move each flagged locator to its fitted position in `Report.site` (the biases are then
        /// those fitted with the corrections).
        public var fixesPositions = false
        /// Ranges a locator needs to be calibrated.
        public var minimumRanges = 50
        /// The floor of ranges that name none (nil: the site's first floor).
        public var defaultFloor: FloorID?

        /// The defaults: biases only, no position written, 50 ranges, the first floor.
        public init() {}
    }

    /// One locator's result: its bias (and scale) with standard deviations, its range noise, whether
    /// the recording determines it, and the survey check (`positionOffset`, `isFlagged`, `note`).
    /// The solver's own result type (LocusSolvers), not a copy of it.
    public typealias LocatorReport = SelfCalibratedLocator

    /// One floor's result: `floor`, `locators`, the residual RMS and the ranges rejected (NLOS),
    /// the epochs used, whether the recording separates the biases' common offset (and its standard
    /// deviation), the tag's share of the biases, and what the recording could not determine
    /// (`warnings`). The solver's own result type (LocusSolvers), not a copy of it.
    public typealias FloorReport = SelfCalibration

    /// The result: per floor that the ranges reach, and the calibrated site.
    public struct Report: Sendable {
        public var floors: [FloorReport]
        /// `site` with the fitted biases (and scales; and positions with `fixesPositions`).
        public var site: Site
        /// Ranges left out: their floor or locator is not in the site.
        public var unusedRangeCount: Int
    }

    /// Calibrates every floor of `site` that `ranges` reach (measured ranges, biases not removed).
    /// - Throws: `E3002` for an unknown `defaultFloor`; `E4001` when a floor holds fewer than 10
    ///   usable epochs; `E4002` when LAPACK fails.
    public static func withoutTruth(site: Site, ranges: [RangeMeasurement], options: Options = Options()) throws(LocusError) -> Report {
        let defaultFloor: Int
        if let id = options.defaultFloor {
            guard let index = site.floorIndex(of: id) else { throw LocusError(.unknownFloor, "no floor '\(id)' in the site") }
            defaultFloor = index.rawValue
        } else {
            defaultFloor = 0
        }
        var byFloor = [[RangeMeasurement]](repeating: [], count: site.floors.count)
        var unused = 0
        for r in ranges {
            guard let f = r.floor.map({ site.floorIndex(of: $0)?.rawValue }) ?? defaultFloor else { unused += 1; continue }
            guard site.floors[f].locators.contains(where: { $0.address == r.locator }) else { unused += 1; continue }
            byFloor[f].append(r)
        }
        let configuration = SelfCalibrationConfiguration(fitsSlope: options.fitsSlope, minimumRanges: options.minimumRanges,
                                                         fixesPositions: options.fixesPositions)
        var out = site
        var floors: [FloorReport] = []
        for (f, floor) in site.floors.enumerated() where !byFloor[f].isEmpty {
            let planar = TrilaterationConfiguration.standard.resolvedMode(for: floor.locators.map(\.position)) == .planar
            let data = SelfCalibrationData(measurements: byFloor[f], floor: floor)
            let c: SelfCalibration
            do {
                c = try SelfCalibration.estimate(floor: floor, data: data, planar: planar, configuration: configuration)
            } catch {
                throw LocusError(error.code, "floor '\(floor.id)': \(error.message)", context: error.context)
            }
            out.floors[f] = c.applied(to: floor)
            floors.append(c)
        }
        return Report(floors: floors, site: out, unusedRangeCount: unused)
    }
}
