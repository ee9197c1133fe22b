import LocusCore
import LocusIO
import LocusSolvers

/// The figures `locus calibrate` reports: a per-locator table as text, or one JSON object.
package struct CalibrationSummary {
    var floors: [CalibrationJob.FloorResult]
    var samples: Int
    var withoutTruth: Int
    var skipped: SkipTally
    var configuration: RangeCalibrationConfiguration
    var outPath: String?
    /// The trace's name, for the text.
    var tracePath: String
    /// The held-out validation (nil: turned off).
    var validation: CalibrationValidation?

    private static func metres(_ value: Double?) -> JSONValue { value.map { .number($0, .fixed(4)) } ?? .null }

    /// `samples`, `without_truth`, `skipped` (reason → count), `estimator`, `slope`, `floors`: per floor
    /// `floor`, `height`, `iterations`, `locators`: `address`, `samples`, `bias_m`, `median_m`, `sigma_m`,
    /// `downweighted` (and `slope`, `intercept_m` with `--slope`); `validation` (`CalibrationValidation.json`,
    /// null when turned off); `out` when a site was written.
    var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("samples", .integer(samples)),
            ("without_truth", .integer(withoutTruth)),
            ("skipped", .object(skipped.nonZero.map { ($0.reason.rawValue, JSONValue.integer($0.count)) })),
            ("estimator", .string(configuration.estimator.rawValue)),
            ("slope", .bool(configuration.fitsSlope)),
        ]
        members.append(("floors", .array(floors.map { r in
            .object([
                ("floor", .string(r.floor.id.rawValue)),
                ("height", .string(r.heightSource)),
                ("iterations", .integer(r.calibration.iterations)),
                ("locators", .array(r.calibration.locators.map { l in
                    var m: [(String, JSONValue)] = [
                        ("address", .string(l.address.description)),
                        ("samples", .integer(l.sampleCount)),
                        ("bias_m", Self.metres(l.biasMeters)),
                        ("median_m", Self.metres(l.medianErrorMeters)),
                        ("sigma_m", Self.metres(l.sigmaMeters)),
                        ("downweighted", .integer(l.downweightedCount)),
                    ]
                    if configuration.fitsSlope {
                        m.append(("slope", l.slope.map { .number($0, .fixed(5)) } ?? .null))
                        m.append(("intercept_m", Self.metres(l.interceptMeters)))
                    }
                    return .object(m)
                })),
            ])
        })))
        members.append(("validation", validation?.json ?? .null))
        if let out = outPath { members.append(("out", .string(out))) }
        return .object(members)
    }

    func text(tracePath: String) -> String {
        var s = "calibrate \(tracePath): \(plural(samples, "range")) with truth"
        if withoutTruth > 0 { s += ", \(withoutTruth) outside the truth's time span (not used)" }
        s += "; estimator \(configuration.estimator.rawValue)\(configuration.fitsSlope ? " with slope" : "")\n"
        if skipped.total > 0 {
            s += "skipped rows: " + skipped.nonZero.map { r in "\(r.reason.rawValue) \(r.count) (first at line \(skipped.firstLine(r.reason)))" }
                .joined(separator: ", ") + "\n"
        }
        func cell(_ value: Double?, _ decimals: Int = 4) -> String { value.map { DecimalText.string($0, decimals: decimals) } ?? "-" }
        func pad(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        for r in floors {
            s += "floor \(r.floor.id) (tag height from \(r.heightSource)"
            if configuration.estimator != .median { s += ", \(plural(r.calibration.iterations, "reweighting pass", "reweighting passes"))" }
            s += ")\n"
            var header = pad("address", 9) + pad("samples", 9) + pad("bias_m", 9) + pad("median_m", 10) + pad("sigma_m", 9)
            if configuration.fitsSlope { header += pad("slope", 9) + pad("icept_m", 9) }
            s += header + "\n"
            for l in r.calibration.locators {
                var line = pad(l.address.description, 9) + pad("\(l.sampleCount)", 9) + pad(cell(l.biasMeters), 9)
                    + pad(cell(l.medianErrorMeters), 10) + pad(cell(l.sigmaMeters), 9)
                if configuration.fitsSlope { line += pad(cell(l.slope), 9) + pad(cell(l.interceptMeters), 9) }
                s += line + "\n"
            }
        }
        if let validation { s += validation.text }
        if let out = outPath { s += "calibrated site written to \(out)\n" }
        return s
    }
}
