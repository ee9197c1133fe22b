import Locus
import LocusCore
import LocusSolvers

/// The report of a calibration without truth: a per-locator table as text, or one JSON object.
struct SelfCalibrationReport {
    var floors: [CalibrationJob.SelfFloorResult]
    var skipped: SkipTally
    var fitsSlope: Bool
    var fixPositions: Bool
    var outPath: String?
    var elapsedSeconds: Double
    /// The trace's name, for the text.
    var tracePath: String
    /// Whether `out` has flagged locators moved (`--fix-positions`, the moves validated).
    var movedLocators = false
    /// The held-out validation (nil: turned off).
    var validation: CalibrationValidation?

    /// `mode` "without_truth", `measurement` (only when a floor was fitted to range differences:
    /// "differences", or "ranges and differences"), `locators` (every floor's, each with its `floor`)
    /// and `floors` (per floor): each floor's parts, `SelfCalibration.json()`; `residual_rms_m`
    /// (all floors' inlier residuals), `skipped`, `slope`, `fix_positions`, `elapsed_s`, `validation`
    /// (`CalibrationValidation.json`, null when turned off), `out` (when written).
    var json: JSONValue {
        var locators: [JSONValue] = [], floorMembers: [JSONValue] = []
        var sum = 0.0, count = 0
        for r in floors {
            let c = r.calibration
            let inliers = c.locators.reduce(0) { $0 + $1.rangeCount } - c.outlierCount
            sum += c.residualRMSMeters * c.residualRMSMeters * Double(inliers)
            count += inliers
            let parts = c.json()
            locators += parts.locators
            floorMembers.append(parts.floor)
        }
        var members: [(String, JSONValue)] = [
            ("mode", .string("without_truth")),
            ("locators", .array(locators)),
            ("residual_rms_m", count > 0 ? .number((sum / Double(count)).squareRoot(), .fixed(4)) : .null),
            ("floors", .array(floorMembers)),
            ("skipped", .object(skipped.nonZero.map { ($0.reason.rawValue, JSONValue.integer($0.count)) })),
            ("slope", .bool(!floors.isEmpty && fitsSlope)),
            ("fix_positions", .bool(fixPositions)),
            ("elapsed_s", .number(elapsedSeconds, .fixed(3))),
            ("validation", validation?.json ?? .null),
        ]
        if let out = outPath { members.append(("out", .string(out))) }
        if floors.contains(where: { $0.calibration.isFromDifferences }) {
            let all = floors.allSatisfy { $0.calibration.isFromDifferences }
            members.insert(("measurement", .string(all ? "differences" : "ranges and differences")), at: 1)
        }
        return .object(members)
    }

    func text(tracePath: String) -> String {
        var s = "calibrate \(tracePath) without truth (bundle adjustment over the recording's epochs)\n"
        if !floors.isEmpty, floors.allSatisfy({ $0.calibration.isFromDifferences }) {
            s = "calibrate \(tracePath) without truth from range differences (bundle adjustment over the recording's blinks)\n"
        }
        if skipped.total > 0 {
            s += "skipped rows: " + skipped.nonZero.map { r in "\(r.reason.rawValue) \(r.count) (first at line \(skipped.firstLine(r.reason)))" }
                .joined(separator: ", ") + "\n"
        }
        for r in floors { s += r.calibration.text() }
        if let validation { s += validation.text }
        let flagged = floors.flatMap { $0.calibration.locators.filter(\.isFlagged).map(\.address.description) }
        if !fixPositions, !flagged.isEmpty {
            s += "flagged \(flagged.joined(separator: ", ")): left where surveyed (only the biases are calibrated); "
                + "--fix-positions moves a flagged locator when the held-out blocks confirm the move\n"
        }
        if let out = outPath { s += "calibrated site written to \(out)\(movedLocators ? " (flagged locators moved)" : "")\n" }
        return s
    }
}
