import LocusCore

extension SelfCalibrationPositionCheck {
    /// The check as JSON (ranges and differences alike; the `position_check` member of `locus calibrate
    /// --json` and of `locus geometry --trace --json`): `checkable`, `directions` (best first), `sd_m`,
    /// `effective_blocks` (per direction, the time blocks its σ is worth), `summary`, `reason` (why not
    /// checkable, or null) and `test` (null when nothing is checkable): `statistic` (Hotelling's T²),
    /// `dof` [p, ν − p + 1], `p_value`, `alpha`, `min_effect_m`, `offset_along_m`, `blocks`, `decision`
    /// ("flagged" or "fits"); and `left_as_surveyed` (null unless flagged): per direction that is not
    /// checkable, `direction`, `fitted_m` (the fitted component, not moved) and `sd_m`.
    var json: JSONValue {
        func metres(_ value: Double) -> JSONValue { value.isFinite ? .number(value, .fixed(4)) : .null }
        func direction(_ v: Vector3) -> JSONValue { .array([.number(v.x, .fixed(3)), .number(v.y, .fixed(3)), .number(v.z, .fixed(3))]) }
        var members: [(String, JSONValue)] = [
            ("checkable", .bool(checkable)),
            ("directions", .array(directions.map(direction))),
            ("sd_m", .array(sdMeters.map(metres))),
            ("effective_blocks", .array(effectiveBlocks.map { .number($0, .fixed(1)) })),
            ("summary", .string(summary)),
        ]
        members.append(("reason", notCheckableReason.map { .string($0) } ?? .null))
        members.append(("test", test.map { t in
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
        members.append(("left_as_surveyed", remainder.map { r in
            .array(r.map {
                .object([
                    ("direction", direction($0.direction)),
                    ("fitted_m", metres($0.fittedMeters)),
                    ("sd_m", metres($0.sdMeters)),
                ])
            })
        } ?? .null))
        return .object(members)
    }
}
