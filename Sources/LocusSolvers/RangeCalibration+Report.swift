import LocusCore

/// The report of a calibration with truth, written next to its data: each floor's part of
/// `locus calibrate --truth` (JSON and text) and the notes on the locators it could not estimate
/// (LocusEvaluation's `CalibrationSummary` puts the parts together with the run's own figures).
extension RangeCalibration {
    /// This floor's object of `floors` in `locus calibrate --truth --json`: `floor`, `height` (where
    /// the tag height came from), `iterations`, `locators`: `address`, `samples`, `bias_m`,
    /// `median_m`, `sigma_m`, `downweighted` (and `slope`, `intercept_m` with `fitsSlope`).
    package func json(floor id: FloorID, heightSource: String) -> JSONValue {
        func metres(_ value: Double?) -> JSONValue { value.map { .number($0, .fixed(4)) } ?? .null }
        return .object([
            ("floor", .string(id.rawValue)),
            ("height", .string(heightSource)),
            ("iterations", .integer(iterations)),
            ("locators", .array(locators.map { l in
                var m: [(String, JSONValue)] = [
                    ("address", .string(l.address.description)),
                    ("samples", .integer(l.sampleCount)),
                    ("bias_m", metres(l.biasMeters)),
                    ("median_m", metres(l.medianErrorMeters)),
                    ("sigma_m", metres(l.sigmaMeters)),
                    ("downweighted", .integer(l.downweightedCount)),
                ]
                if configuration.fitsSlope {
                    m.append(("slope", l.slope.map { .number($0, .fixed(5)) } ?? .null))
                    m.append(("intercept_m", metres(l.interceptMeters)))
                }
                return .object(m)
            })),
        ])
    }

    /// This floor's lines of the text report: where the tag height came from, the reweighting passes
    /// (not for the median), and the per-locator table (samples, bias, median, σ; slope and intercept
    /// with `fitsSlope`).
    package func text(floor id: FloorID, heightSource: String) -> String {
        func cell(_ value: Double?, _ decimals: Int = 4) -> String { value.map { DecimalText.string($0, decimals: decimals) } ?? "-" }
        func pad(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        var s = "floor \(id) (tag height from \(heightSource)"
        if configuration.estimator != .median { s += ", \(plural(iterations, "reweighting pass", "reweighting passes"))" }
        s += ")\n"
        var header = pad("address", 9) + pad("samples", 9) + pad("bias_m", 9) + pad("median_m", 10) + pad("sigma_m", 9)
        if configuration.fitsSlope { header += pad("slope", 9) + pad("icept_m", 9) }
        s += header + "\n"
        for l in locators {
            var line = pad(l.address.description, 9) + pad("\(l.sampleCount)", 9) + pad(cell(l.biasMeters), 9)
                + pad(cell(l.medianErrorMeters), 10) + pad(cell(l.sigmaMeters), 9)
            if configuration.fitsSlope { line += pad(cell(l.slope), 9) + pad(cell(l.interceptMeters), 9) }
            s += line + "\n"
        }
        return s
    }

    /// One note per locator left unestimated (too few samples: the site's value is kept), e.g.
    /// "locator 0x9E07: 3 samples, fewer than 10: its biasM is kept".
    package var notes: [String] {
        locators.filter { $0.biasMeters == nil }.map { l in
            "locator \(l.address): \(plural(l.sampleCount, "sample")), fewer than \(configuration.minimumSamples): its biasM is kept"
        }
    }
}
