import LocusCore
import LocusIO
import LocusSolvers

/// The report of a calibration without truth: a per-locator table as text, or one JSON object.
package struct SelfCalibrationReport {
    var floors: [CalibrationJob.SelfFloorResult]
    var skipped: SkipTally
    var fixPositions: Bool
    var outPath: String?
    var elapsedSeconds: Double
    /// The trace's name, for the text.
    var tracePath: String
    /// Whether `out` has flagged locators moved (`--fix-positions`, the moves validated).
    var movedLocators = false
    /// The held-out validation (nil: turned off).
    var validation: CalibrationValidation?

    private static func metres(_ value: Double?) -> JSONValue {
        guard let value, value.isFinite else { return .null }
        return .number(value, .fixed(4))
    }

    /// `mode` "without_truth", `locators` (every floor's, each with its `floor`): `address`, `ranges`,
    /// `bias_m`, `bias_sd_m`, `noise_m`, `slope`/`slope_sd` (with --slope), `position_offset_m`
    /// ([dx, dy, dz] or null), `position_offset_sd_m`, `flagged`, `observable`, `note`;
    /// `residual_rms_m` (all floors' inlier residuals), `floors` (per floor: `epochs`, `iterations`,
    /// `residual_rms_m`, `outliers`, `common_offset` {`separable`, `sd_m`}, `path_spread_m` {`across`,
    /// `along`}, `tag_delay_m`, `warnings`), `skipped`, `elapsed_s`, `validation`
    /// (`CalibrationValidation.json`, null when turned off), `out` (when written).
    var json: JSONValue {
        var locators: [JSONValue] = []
        var sum = 0.0, count = 0
        for r in floors {
            let c = r.calibration
            let inliers = c.locators.reduce(0) { $0 + $1.rangeCount } - c.outlierCount
            sum += c.residualRMSMeters * c.residualRMSMeters * Double(inliers)
            count += inliers
            for l in c.locators {
                var m: [(String, JSONValue)] = [
                    ("floor", .string(r.floor.id.rawValue)),
                    ("address", .string(l.address.description)),
                    ("ranges", .integer(l.rangeCount)),
                    ("bias_m", Self.metres(l.biasMeters)),
                    ("bias_sd_m", Self.metres(l.biasSDMeters)),
                    ("noise_m", Self.metres(l.noiseMeters)),
                ]
                if c.configuration.fitsSlope {
                    m.append(("slope", l.slope.map { .number($0, .fixed(5)) } ?? .null))
                    m.append(("slope_sd", l.slopeSD.map { .number($0, .fixed(5)) } ?? .null))
                }
                m.append(("position_offset_m", l.positionOffset.map { .array([Self.metres($0.x), Self.metres($0.y), Self.metres($0.z)]) } ?? .null))
                m.append(("position_offset_sd_m", Self.metres(l.positionOffsetSDMeters)))
                m.append(("flagged", .bool(l.flagged)))
                m.append(("observable", .bool(l.observable)))
                m.append(("note", l.note.map { .string($0) } ?? .null))
                if c.measurement == .differences { m.append(("arrivals", .integer(l.rangeCount))) }
                m.append(("position_check", l.positionCheck.map { Self.json($0) } ?? .null))
                locators.append(.object(m))
            }
        }
        var members: [(String, JSONValue)] = [
            ("mode", .string("without_truth")),
            ("locators", .array(locators)),
            ("residual_rms_m", count > 0 ? .number((sum / Double(count)).squareRoot(), .fixed(4)) : .null),
            ("floors", .array(floors.map { r in
                let c = r.calibration
                var floor: [(String, JSONValue)] = [
                    ("floor", .string(r.floor.id.rawValue)),
                    ("epochs", .integer(c.epochs)),
                    ("iterations", .integer(c.iterations)),
                    ("residual_rms_m", .number(c.residualRMSMeters, .fixed(4))),
                    ("outliers", .integer(c.outlierCount)),
                    ("common_offset", .object([("separable", .bool(c.commonOffsetSeparable)), ("sd_m", Self.metres(c.commonOffsetSDMeters))])),
                    ("path_spread_m", .object([("across", Self.metres(c.pathSpreadMeters.minor)), ("along", Self.metres(c.pathSpreadMeters.major))])),
                    ("tag_delay_m", Self.metres(c.tagDelayMeters)),
                    ("warnings", .array(c.warnings.map { .string($0) })),
                ]
                if c.measurement == .differences {
                    let estimated = c.locators.compactMap(\.biasMeters)
                    floor.append(("measurement", .string("differences")))
                    floor.append(("differences", .integer(c.differenceCount)))
                    floor.append(("gauge", .object([
                        ("observable", .string("differences of biases")),
                        ("mean_bias_m", Self.metres(estimated.isEmpty ? nil : estimated.reduce(0, +) / Double(estimated.count))),
                        ("held", .string("site")),
                    ])))
                }
                return .object(floor)
            })),
            ("skipped", .object(skipped.nonZero.map { ($0.reason.rawValue, JSONValue.integer($0.count)) })),
            ("slope", .bool(floors.first?.calibration.configuration.fitsSlope ?? false)),
            ("fix_positions", .bool(fixPositions)),
            ("elapsed_s", .number(elapsedSeconds, .fixed(3))),
            ("validation", validation?.json ?? .null),
        ]
        if let out = outPath { members.append(("out", .string(out))) }
        if floors.contains(where: { $0.calibration.measurement == .differences }) {
            let all = floors.allSatisfy { $0.calibration.measurement == .differences }
            members.insert(("measurement", .string(all ? "differences" : "ranges and differences")), at: 1)
        }
        return .object(members)
    }

    /// A position check as JSON (ranges and differences alike): `checkable`, `directions` (best
    /// first), `sd_m`, `effective_blocks` (per direction, the time blocks its σ is worth), `summary`, `reason` (why not checkable, or null) and `test` (null when nothing is
    /// checkable): `statistic` (Hotelling's T²), `dof` [p, ν − p + 1], `p_value`, `alpha`,
    /// `min_effect_m`, `offset_along_m`, `blocks`, `decision` ("flagged" or "fits"); and
    /// `left_as_surveyed` (null unless flagged): per direction that is not checkable, `direction`,
    /// `fitted_m` (the fitted component, not moved) and `sd_m`.
    static func json(_ check: SelfCalibrationPositionCheck) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("checkable", .bool(check.checkable)),
            ("directions", .array(check.directions.map { .array([.number($0.x, .fixed(3)), .number($0.y, .fixed(3)), .number($0.z, .fixed(3))]) })),
            ("sd_m", .array(check.sdMeters.map { metres($0) })),
            ("effective_blocks", .array(check.effectiveBlocks.map { .number($0, .fixed(1)) })),
            ("summary", .string(check.summary)),
        ]
        members.append(("reason", check.notCheckableReason.map { .string($0) } ?? .null))
        members.append(("test", check.test.map { t in
            .object([
                ("statistic", .number(t.statistic, .fixed(2))),
                ("dof", .array([.integer(t.degreesOfFreedom.0), .integer(t.degreesOfFreedom.1)])),
                ("p_value", .number(t.pValue, .fixed(6))),
                ("alpha", .number(t.alpha, .fixed(4))),
                ("min_effect_m", metres(t.minimumEffectMeters)),
                ("offset_along_m", metres(t.offsetAlongMeters)),
                ("blocks", .integer(t.blocks)),
                ("decision", .string(t.flagged ? "flagged" : "fits")),
            ])
        } ?? .null))
        members.append(("left_as_surveyed", check.remainder.map { r in
            .array(r.map {
                .object([
                    ("direction", .array([.number($0.direction.x, .fixed(3)), .number($0.direction.y, .fixed(3)), .number($0.direction.z, .fixed(3))])),
                    ("fitted_m", metres($0.fittedMeters)),
                    ("sd_m", metres($0.sdMeters)),
                ])
            })
        } ?? .null))
        return .object(members)
    }

    func text(tracePath: String) -> String {
        func cell(_ value: Double?, _ decimals: Int = 3) -> String {
            guard let value, value.isFinite else { return "-" }
            return DecimalText.string(value, decimals: decimals)
        }
        func pad(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        var s = "calibrate \(tracePath) without truth (bundle adjustment over the recording's epochs)\n"
        if !floors.isEmpty, floors.allSatisfy({ $0.calibration.measurement == .differences }) {
            s = "calibrate \(tracePath) without truth from range differences (bundle adjustment over the recording's blinks)\n"
        }
        if skipped.total > 0 {
            s += "skipped rows: " + skipped.nonZero.map { r in "\(r.reason.rawValue) \(r.count) (first at line \(skipped.firstLine(r.reason)))" }
                .joined(separator: ", ") + "\n"
        }
        for r in floors {
            let c = r.calibration
            let unit = c.measurement == .differences ? ("blink", "arrival") : ("epoch", "range")
            s += "floor \(r.floor.id): \(plural(c.epochs, unit.0)), \(plural(c.iterations, "step")), residual RMS \(cell(c.residualRMSMeters, 4)) m"
            s += ", \(plural(c.outlierCount, unit.1)) rejected; common offset "
            if c.measurement == .differences {
                s += "not observable from \(plural(c.differenceCount, "range difference")) (the biases' mean held at the site's)"
            } else {
                s += c.commonOffsetSeparable ? "separable (σ \(cell(c.commonOffsetSDMeters, 4)) m)" : "not separable"
            }
            if let delay = c.tagDelayMeters { s += "; tag delay \(cell(delay, 4)) m from ranges between locators" }
            s += "\n"
            let differences = c.measurement == .differences
            var header = pad("address", 9) + pad(differences ? "arrivals" : "ranges", differences ? 9 : 8) + pad("bias_m", 8) + pad("±sd", 7) + pad("noise_m", 8)
            if c.configuration.fitsSlope { header += pad("slope", 9) }
            header += pad("offset_m", 9) + pad("±sd", 7) + "  flag"
            s += header + "\n"
            for l in c.locators {
                var line = pad(l.address.description, 9) + pad("\(l.rangeCount)", differences ? 9 : 8) + pad(cell(l.biasMeters), 8) + pad(cell(l.biasSDMeters), 7)
                    + pad(cell(l.noiseMeters), 8)
                if c.configuration.fitsSlope { line += pad(cell(l.slope, 4), 9) }
                let length = l.positionOffset.map { ($0.x * $0.x + $0.y * $0.y + $0.z * $0.z).squareRoot() }
                line += pad(cell(length), 9) + pad(cell(l.positionOffsetSDMeters), 7) + (l.flagged ? "  FLAGGED" : l.observable ? "" : "  kept")
                s += line + "\n"
            }
            for l in c.locators { if let check = l.positionCheck { s += "  \(l.address) position \(check.summary)\n" } }
        }
        if let validation { s += validation.text }
        if let out = outPath { s += "calibrated site written to \(out)\(movedLocators ? " (flagged locators moved)" : "")\n" }
        return s
    }
}
