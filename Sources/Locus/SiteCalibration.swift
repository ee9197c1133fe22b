import LocusCore
import LocusSolvers

/// Calibration of a site's locators from a recording, without ground truth: each locator's range
/// bias (and relative range scale), its range noise, and a check of its surveyed position — the
/// calibration `locus calibrate` runs without `--truth` (the same code), and `locus_calibrate` in the C ABI.
///
/// The ranges of each floor are grouped by tag into epochs (a round of ranging), and every epoch's
/// tag position is fitted jointly with the locators' parameters (a bundle adjustment with robust
/// weights; docs/calibration.md). What the recording cannot determine is reported, not guessed:
/// see `FloorReport.warnings` and `LocatorReport.note`.
///
/// The calibration proves itself on data it did not fit (`Options.holdoutBlockSeconds`, 10 s by
/// default): fitted on alternate blocks of time, it is scored on the others by the median
/// leave-one-out range residual against the site as surveyed (`CalibrationValidation`). Without truth
/// it must be shown better; when it is not, or is worse, `Report.site` is the site as given and
/// `Report.validation` says why (`fittedSite` still holds the fit). Moves of flagged locators
/// (`fixesPositions`) are made only when the held-out blocks confirm them.
///
/// ```swift
/// let report = try SiteCalibration.withoutTruth(site: site, ranges: recording)
/// for l in report.floors[0].locators where l.isFlagged { print(l.address, l.note ?? "") }
/// if let v = report.validation { print(v.text) }   // "… median |range residual| 0.0812 → 0.0701 m (−13.7 %): accepted"
/// let calibrated = report.site   // biasM filled in when accepted
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
        /// Length of the alternating blocks of the held-out validation, seconds (`HoldoutBlocks`;
        /// finite, > 0); nil: no validation, the fit is used as it is (`Report.validation` nil).
        public var holdoutBlockSeconds: Double? = HoldoutBlocks.defaultBlockSeconds

        /// The defaults: biases only, no position written, 50 ranges, the first floor, validated on
        /// blocks of 10 s.
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

    /// The result: per floor that the ranges reach, the calibrated site and its held-out validation.
    public struct Report: Sendable {
        public var floors: [FloorReport]
        /// The site to use: `fittedSite` when the validation accepts it or cannot judge it (or with no
        /// validation), else the site as given.
        public var site: Site
        /// The site with the fitted biases (and scales; and positions with `fixesPositions` where the
        /// validation accepted the moves), whatever the validation said.
        public var fittedSite: Site
        /// The held-out validation (nil when `Options.holdoutBlockSeconds` is nil).
        public var validation: CalibrationValidation?
        /// Ranges left out: their floor or locator is not in the site, or their time or range is not
        /// finite (or the range is negative).
        public var unusedRangeCount: Int
    }

    /// Calibrates every floor of `site` that `ranges` reach (measured ranges, biases not removed),
    /// validated on held-out blocks (`Options.holdoutBlockSeconds`).
    /// - Throws: `E3002` for an unknown `defaultFloor`; `E1003` for a block length that is not finite
    ///   and positive; `E4001` when a floor holds fewer than 10 usable epochs; `E4002` when LAPACK fails.
    public static func withoutTruth(site: Site, ranges: [RangeMeasurement], options: Options = Options()) throws(LocusError) -> Report {
        let defaultFloor: Int
        if let id = options.defaultFloor {
            guard let index = site.floorIndex(of: id) else { throw LocusError(.unknownFloor, "no floor '\(id)' in the site") }
            defaultFloor = index.rawValue
        } else {
            defaultFloor = 0
        }
        if let b = options.holdoutBlockSeconds, !(b.isFinite && b > 0) {
            throw LocusError(.invalidArgument, "holdoutBlockSeconds must be finite and positive, or nil for no validation")
        }
        var byFloor = [[RangeMeasurement]](repeating: [], count: site.floors.count)
        var unused = 0
        for r in ranges {
            guard r.timeSeconds.isFinite, r.rangeMeters.isFinite, r.rangeMeters >= 0 else { unused += 1; continue }
            guard let f = r.floor.map({ site.floorIndex(of: $0)?.rawValue }) ?? defaultFloor else { unused += 1; continue }
            guard site.floors[f].locators.contains(where: { $0.address == r.locator }) else { unused += 1; continue }
            byFloor[f].append(r)
        }
        func data(_ keep: (RangeMeasurement) -> Bool) -> [SelfCalibrationData] {
            site.floors.indices.map { SelfCalibrationData(measurements: byFloor[$0].filter(keep), floor: site.floors[$0]) }
        }
        let halves: Halves? = options.holdoutBlockSeconds.map { seconds in
            let kept = byFloor.joined()
            let blocks = HoldoutBlocks(times: kept.lazy.map(\.timeSeconds), blockSeconds: seconds)
            let held = kept.lazy.filter { blocks.isHeldOut($0.timeSeconds) }.count
            return (blocks, data { !blocks.isHeldOut($0.timeSeconds) }, data { blocks.isHeldOut($0.timeSeconds) },
                    kept.count - held, held)
        }
        let solver = EngineConfiguration(EngineOptions()).solver
        let c = try calibrate(site: site, data: data { _ in true }, halves: halves, options: options, solver: solver)
        let accepted = c.validation?.accepted ?? true
        return Report(floors: c.floors.map(\.calibration), site: accepted ? c.site : site, fittedSite: c.site,
                      validation: c.validation, unusedRangeCount: unused)
    }
}
