import Locus
import LocusCore
import LocusSolvers

/// The figures `locus calibrate` reports: a per-locator table as text, or one JSON object.
struct CalibrationSummary {
    var floors: [CalibrationJob.FloorResult]
    var samples: Int
    var withoutTruth: Int
    var skipped: SkipTally
    /// The estimator and whether slopes were fitted (`RangeCalibrationConfiguration`).
    var estimator: RangeCalibrationConfiguration.Estimator
    var fitsSlope: Bool
    var outPath: String?
    /// The trace's name, for the text.
    var tracePath: String
    /// The held-out validation (nil: turned off).
    var validation: CalibrationValidation?

    /// `samples`, `without_truth`, `skipped` (reason → count), `estimator`, `slope`, `floors` (per floor
    /// `RangeCalibration.json(floor:heightSource:)`: `floor`, `height`, `iterations`, `locators`);
    /// `validation` (`CalibrationValidation.json`, null when turned off); `out` when a site was written.
    var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("samples", .integer(samples)),
            ("without_truth", .integer(withoutTruth)),
            ("skipped", .object(skipped.nonZero.map { ($0.reason.rawValue, JSONValue.integer($0.count)) })),
            ("estimator", .string(estimator.rawValue)),
            ("slope", .bool(fitsSlope)),
        ]
        members.append(("floors", .array(floors.map { $0.calibration.json(floor: $0.floor.id, heightSource: $0.heightSource) })))
        members.append(("validation", validation?.json ?? .null))
        if let out = outPath { members.append(("out", .string(out))) }
        return .object(members)
    }

    func text(tracePath: String) -> String {
        var s = "calibrate \(tracePath): \(plural(samples, "range")) with truth"
        if withoutTruth > 0 { s += ", \(withoutTruth) outside the truth's time span (not used)" }
        s += "; estimator \(estimator.rawValue)\(fitsSlope ? " with slope" : "")\n"
        if skipped.total > 0 {
            s += "skipped rows: " + skipped.nonZero.map { r in "\(r.reason.rawValue) \(r.count) (first at line \(skipped.firstLine(r.reason)))" }
                .joined(separator: ", ") + "\n"
        }
        for r in floors { s += r.calibration.text(floor: r.floor.id, heightSource: r.heightSource) }
        if let validation { s += validation.text }
        if let out = outPath { s += "calibrated site written to \(out)\n" }
        return s
    }
}
