import LocusCore

/// The report of a calibration without truth, written next to its data: each floor's part of
/// `locus calibrate --json` and of its text, and the survey check of `locus geometry --trace`
/// (LocusEvaluation puts the parts together; the wire keys are documented there, with the run's own
/// members: skipped rows, validation, elapsed time, the written site).
extension SelfCalibration {
    /// Whether this was fitted to range differences (`DifferenceSelfCalibration`), not to ranges.
    package var isFromDifferences: Bool { measurement == .differences }

    /// Metres with 4 decimals; null when absent or not finite.
    private static func metresJSON(_ value: Double?) -> JSONValue {
        guard let value, value.isFinite else { return .null }
        return .number(value, .fixed(4))
    }

    /// This floor's members of `locus calibrate --json` without truth. `locators`, one object each:
    /// `floor`, `address`, `ranges`, `bias_m`, `bias_sd_m`, `noise_m`, `slope`/`slope_sd` (with
    /// `fitsSlope`), `position_offset_m` ([dx, dy, dz] or null), `position_offset_sd_m`, `flagged`,
    /// `observable`, `note`, `arrivals` (from differences), `position_check`
    /// (`SelfCalibrationPositionCheck.json`). `floor`: `floor`, `epochs`, `iterations`,
    /// `residual_rms_m`, `outliers` (of the site as it stands when no bias is calibrated),
    /// `common_offset` {`separable`, `sd_m`} (false and null when no bias is calibrated), `path_spread_m`
    /// {`across`, `along`}, `tag_delay_m`, `warnings`; from differences also `measurement`,
    /// `differences` and `gauge` {`observable`, `mean_bias_m`, `held`}.
    package func json() -> (locators: [JSONValue], floor: JSONValue) {
        let metres = Self.metresJSON
        let locatorsJSON = locators.map { l -> JSONValue in
            var m: [(String, JSONValue)] = [
                ("floor", .string(floor.rawValue)),
                ("address", .string(l.address.description)),
                ("ranges", .integer(l.rangeCount)),
                ("bias_m", metres(l.biasMeters)),
                ("bias_sd_m", metres(l.biasSDMeters)),
                ("noise_m", metres(l.noiseMeters)),
            ]
            if configuration.fitsSlope {
                m.append(("slope", l.slope.map { .number($0, .fixed(5)) } ?? .null))
                m.append(("slope_sd", l.slopeSD.map { .number($0, .fixed(5)) } ?? .null))
            }
            m.append(("position_offset_m", l.positionOffset.map { .array([metres($0.x), metres($0.y), metres($0.z)]) } ?? .null))
            m.append(("position_offset_sd_m", metres(l.positionOffsetSDMeters)))
            m.append(("flagged", .bool(l.isFlagged)))
            m.append(("observable", .bool(l.isObservable)))
            m.append(("note", l.note.map { .string($0) } ?? .null))
            if isFromDifferences { m.append(("arrivals", .integer(l.rangeCount))) }
            m.append(("position_check", l.positionCheck?.json ?? .null))
            return .object(m)
        }
        var floorJSON: [(String, JSONValue)] = [
            ("floor", .string(floor.rawValue)),
            ("epochs", .integer(epochs)),
            ("iterations", .integer(iterations)),
            ("residual_rms_m", .number(residualRMSMeters, .fixed(4))),
            ("outliers", .integer(outlierCount)),
            ("common_offset", .object([("separable", .bool(commonOffsetSeparable)), ("sd_m", metres(commonOffsetSDMeters))])),
            ("path_spread_m", .object([("across", metres(pathSpreadMeters.minor)), ("along", metres(pathSpreadMeters.major))])),
            ("tag_delay_m", metres(tagDelayMeters)),
            ("warnings", .array(warnings.map { .string($0) })),
        ]
        if isFromDifferences {
            let estimated = locators.compactMap(\.biasMeters)
            floorJSON.append(("measurement", .string("differences")))
            floorJSON.append(("differences", .integer(differenceCount)))
            floorJSON.append(("gauge", .object([
                ("observable", .string("differences of biases")),
                ("mean_bias_m", metres(estimated.isEmpty ? nil : estimated.reduce(0, +) / Double(estimated.count))),
                ("held", .string("site")),
            ])))
        }
        return (locatorsJSON, .object(floorJSON))
    }

    /// This floor's lines of the text report: the figures (epochs or blinks, steps, residual RMS,
    /// rejections, the common offset, the tag delay), the per-locator table (bias ± σ, noise, slope
    /// with `fitsSlope`, the position offset ± σ, FLAGGED or kept) and each position check's summary.
    package func text() -> String {
        func cell(_ value: Double?, _ decimals: Int = 3) -> String {
            guard let value, value.isFinite else { return "-" }
            return DecimalText.string(value, decimals: decimals)
        }
        func pad(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        let differences = isFromDifferences
        let unit = differences ? ("blink", "arrival") : ("epoch", "range")
        var s = "floor \(floor): \(plural(epochs, unit.0)), \(plural(iterations, "step")), residual RMS \(cell(residualRMSMeters, 4)) m"
        s += ", \(plural(outlierCount, unit.1)) rejected; common offset "
        if differences {
            s += "not observable from \(plural(differenceCount, "range difference")) (the biases' mean held at the site's)"
        } else {
            s += locators.allSatisfy({ $0.biasMeters == nil }) ? "not fitted (no bias calibrated)"
                : commonOffsetSeparable ? "separable (σ \(cell(commonOffsetSDMeters, 4)) m)" : "not separable"
        }
        if let delay = tagDelayMeters { s += "; tag delay \(cell(delay, 4)) m from ranges between locators" }
        s += "\n"
        var header = pad("address", 9) + pad(differences ? "arrivals" : "ranges", differences ? 9 : 8) + pad("bias_m", 8) + pad("±sd", 7) + pad("noise_m", 8)
        if configuration.fitsSlope { header += pad("slope", 9) }
        header += pad("offset_m", 9) + pad("±sd", 7) + "  flag"
        s += header + "\n"
        for l in locators {
            var line = pad(l.address.description, 9) + pad("\(l.rangeCount)", differences ? 9 : 8) + pad(cell(l.biasMeters), 8) + pad(cell(l.biasSDMeters), 7)
                + pad(cell(l.noiseMeters), 8)
            if configuration.fitsSlope { line += pad(cell(l.slope, 4), 9) }
            let length = l.positionOffset.map { ($0.x * $0.x + $0.y * $0.y + $0.z * $0.z).squareRoot() }
            line += pad(cell(length), 9) + pad(cell(l.positionOffsetSDMeters), 7) + (l.isFlagged ? "  FLAGGED" : l.isObservable ? "" : l.biasMeters != nil ? "  partly" : "  kept")
            s += line + "\n"
        }
        for l in locators { if let check = l.positionCheck { s += "  \(l.address) position \(check.summary)\n" } }
        return s
    }

    /// The survey check against the recording `trace` (`locus geometry --trace`). JSON: `trace`,
    /// `flagged` (count), `locators`: `address`, `flagged`, `offset_m` ([dx, dy, dz]), `offset_sd_m`,
    /// `note`, `position_check` (`SelfCalibrationPositionCheck.json`: directions, σ, the test). Text:
    /// the flagged locators with their notes, how many were checkable, why the others were not, the
    /// warnings.
    package func survey(trace: String) -> (json: JSONValue, text: String) {
        let metres = Self.metresJSON
        let json = JSONValue.object([
            ("trace", .string(trace)),
            ("flagged", .integer(locators.filter(\.isFlagged).count)),
            ("locators", .array(locators.map { l in
                .object([
                    ("address", .string(l.address.description)),
                    ("flagged", .bool(l.isFlagged)),
                    ("offset_m", l.positionOffset.map { .array([metres($0.x), metres($0.y), metres($0.z)]) } ?? .null),
                    ("offset_sd_m", metres(l.positionOffsetSDMeters)),
                    ("note", l.note.map { .string($0) } ?? .null),
                    ("position_check", l.positionCheck?.json ?? .null),
                ])
            })),
        ])
        let flagged = locators.filter(\.isFlagged)
        var text = "survey check against \(trace): "
        text += flagged.isEmpty ? "every locator fits its surveyed position\n" : "\(plural(flagged.count, "locator")) flagged\n"
        for l in flagged { text += "  \(l.address) \(l.note ?? "")\n" }
        let checked = locators.filter { $0.positionCheck?.checkable == true }.count
        text += "  checkable: \(checked) of \(plural(locators.count, "locator"))\n"
        for l in locators where !l.isFlagged {
            if let check = l.positionCheck, !check.checkable { text += "  \(l.address) position \(check.summary)\n" }
        }
        for w in warnings { text += "  note: \(w)\n" }
        return (json, text)
    }
}
