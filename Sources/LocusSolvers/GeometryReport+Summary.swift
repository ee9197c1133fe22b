import LocusCore

/// The report in words and as JSON, written next to its data: the summary of `locus geometry` (text
/// and `--json`), the heatmap's caption, the page overlay of `locus serve`, and the DOP map the
/// heatmap colours (LocusEvaluation adds the run's own members: the survey check, the SVG's path, the
/// other floors; LocusReports draws).
extension GeometryReport {
    /// The `--json` summary's members up to the suggestion (LocusEvaluation's `GeometryOutcome`
    /// appends `survey` and `svg`): SPEC keys `cells`, `hdop_p50`, `hdop_p95`, `hdop_max`, `coverage`,
    /// `warnings`, and `floor`, `mode`, `locators`, `grid_m`, `columns`, `rows`, `max_range_m`,
    /// `solvable_cells`, `vdop_max` (spatial), `out_of_range_fraction`, `poor_fraction`, `suggestion`
    /// {`x`, `y`, `z`, `improves`, `before`, `after`, `candidates`}; with `accuracySigmaMeters` σ also
    /// `accuracy` {`range_sigma_m`, `p50_cm`, `p95_cm`, `max_cm` (HDOP × σ in centimetres; null when no
    /// cell is solvable), `coverage_limit_cm`}. A TDoA map carries `"measurement": "tdoa"` after
    /// `mode`; a ranging map has no `measurement` key, so its summary stays byte for byte what it was
    /// (the golden files): absent means `"range"`.
    package func summaryJSON(suggestion: GeometrySuggestion?, accuracySigmaMeters: Double?) -> [(String, JSONValue)] {
        let s = statistics
        var members: [(String, JSONValue)] = [
            ("floor", .string(floor.id.rawValue)),
            ("mode", .string(mode == .spatial ? "spatial" : "planar")),
        ]
        if options.measurement == .tdoa { members.append(("measurement", .string(options.measurement.rawValue))) }
        members += [
            ("locators", .integer(locators.count)),
            ("grid_m", .number(grid.cellWidthMeters, .fixed(4))),
            ("columns", .integer(grid.columns)), ("rows", .integer(grid.rows)),
            ("max_range_m", .number(options.maximumRangeMeters, .fixed(2))),
            ("cells", .integer(s.cells)),
            ("solvable_cells", .integer(s.solvableCells)),
        ]
        members += s.summaryJSON
        if let v = s.vdopMax { members.append(("vdop_max", .number(v, .fixed(4)))) }
        members.append(("out_of_range_fraction", .number(s.cells > 0 ? Double(s.outOfRangeCells) / Double(s.cells) : 0, .fixed(4))))
        members.append(("poor_fraction", .number(s.cells > 0 ? Double(s.poorCells) / Double(s.cells) : 0, .fixed(4))))
        if let sigma = accuracySigmaMeters {
            func cm(_ x: Double?) -> JSONValue { x.map { .number($0 * sigma * 100, .fixed(2)) } ?? .null }
            members.append(("accuracy", .object([("range_sigma_m", .number(sigma, .fixed(4))), ("p50_cm", cm(s.hdopP50)),
                                                 ("p95_cm", cm(s.hdopP95)), ("max_cm", cm(s.hdopMax)),
                                                 ("coverage_limit_cm", cm(options.coverageHDOP))])))
        }
        members.append(("warnings", .array(warnings.map { .string($0.description) })))
        if let g = suggestion {
            members.append(("suggestion", .object([
                ("x", .number(g.position.x, .fixed(3))), ("y", .number(g.position.y, .fixed(3))), ("z", .number(g.position.z, .fixed(3))),
                ("improves", .bool(g.improves)),
                ("before", .object(g.before.summaryJSON)), ("after", .object(g.after.summaryJSON)),
                ("candidates", .integer(g.candidates)),
            ])))
        }
        return members
    }

    /// The human summary up to the suggestion (`path` names the site): a compact table (with the
    /// accuracy in cm when σ is given), the warnings, the suggestion.
    package func summaryText(path: String, suggestion: GeometrySuggestion?, accuracySigmaMeters: Double?) -> String {
        let s = statistics
        func f(_ x: Double?, _ d: Int = 2) -> String { x.map { DecimalText.string($0, decimals: d) } ?? "n/a" }
        func pct(_ part: Int) -> String { f(s.cells > 0 ? 100 * Double(part) / Double(s.cells) : 0, 1) + " %" }
        var out = "geometry \(path): floor \(floor.id)\(floor.name.isEmpty ? "" : " (\(floor.name))"), "
        out += "\(mode == .spatial ? "spatial" : "planar"), "
        if options.measurement == .tdoa { out += "TDoA (uplink, reference: the nearest locator heard), " }
        out += "\(plural(locators.count, "locator")), "
        out += "\(grid.columns) × \(grid.rows) cells of \(f(grid.cellWidthMeters)) m, range \(f(options.maximumRangeMeters, 0)) m\n"
        out += "  HDOP       p50 \(f(s.hdopP50))   p95 \(f(s.hdopP95))   max \(f(s.hdopMax))"
        if let v = s.vdopMax { out += "   (VDOP max \(f(v)))" }
        out += "\n"
        if let sigma = accuracySigmaMeters {
            func cm(_ x: Double?) -> String { x.map { f($0 * sigma * 100, 1) + " cm" } ?? "n/a" }
            let what = options.measurement == .tdoa ? "arrival σ" : "range σ"
            out += "  accuracy   p50 \(cm(s.hdopP50))   p95 \(cm(s.hdopP95))   max \(cm(s.hdopMax))   (HDOP × \(what) \(f(sigma, 3)) m)\n"
        }
        out += "  coverage   \(pct(s.coveredCells)) of the floor (HDOP ≤ \(f(options.coverageHDOP, 0)), ≥ \(locatorsNeeded) locators in range)\n"
        out += "  no fix     \(pct(s.cells - s.solvableCells))   HDOP > \(f(options.poorHDOP, 0))  \(pct(s.poorCells))\n"
        if warnings.isEmpty {
            out += "no warnings\n"
        } else {
            out += "warnings (\(warnings.count)):\n"
            for w in warnings { out += "  \(w)\n" }
        }
        if let g = suggestion {
            out += "suggest: one more locator at (\(f(g.position.x)), \(f(g.position.y)), \(f(g.position.z))) m"
            out += g.improves ? "\n" : " — marginal: no position gains 5 % in p95 HDOP or 0.5 % in coverage\n"
            out += "  p95 HDOP \(f(g.before.hdopP95)) → \(f(g.after.hdopP95)),  max \(f(g.before.hdopMax)) → \(f(g.after.hdopMax)),  "
            out += "coverage \(f(100 * g.before.coverage, 1)) % → \(f(100 * g.after.coverage, 1)) %   (\(plural(g.candidates, "position")) tried)\n"
        }
        return out
    }

    /// The heatmap's caption under its title: the map (mode, measurement, grid, range, locators), its
    /// figures (HDOP, or the accuracy HDOP × σ in cm with `accuracySigmaMeters`; coverage; warnings)
    /// and, with a suggestion, the one more locator and what it gains.
    package func caption(suggestion: GeometrySuggestion?, accuracySigmaMeters: Double?) -> (map: String, figures: String, suggestion: String?) {
        func n(_ x: Double, _ d: Int) -> String { DecimalText.string(x, decimals: d) }
        func opt(_ x: Double?) -> String { x.map { n($0, 2) } ?? "n/a" }
        let stats = statistics
        let tdoa = options.measurement == .tdoa
        var line2 = "\(mode == .spatial ? "spatial (3-D)" : "planar (2-D)") · "
        if tdoa { line2 += "TDoA uplink, nearest locator the reference · " }
        line2 += "\(grid.columns) × \(grid.rows) cells of "
        line2 += "\(n(grid.cellWidthMeters, 2)) m · range \(n(options.maximumRangeMeters, 0)) m · \(plural(locators.count, "locator"))"
        var line3: String
        if let sigma = accuracySigmaMeters {
            func cm(_ x: Double?) -> String { x.map { n($0 * sigma * 100, 1) } ?? "n/a" }
            line3 = "accuracy p50 \(cm(stats.hdopP50)) · p95 \(cm(stats.hdopP95)) · max \(cm(stats.hdopMax)) cm "
            line3 += "(HDOP × \(tdoa ? "arrival" : "range") σ \(n(sigma * 100, 1)) cm)"
        } else {
            line3 = "HDOP p50 \(opt(stats.hdopP50)) · p95 \(opt(stats.hdopP95)) · max \(opt(stats.hdopMax))"
            if let v = stats.vdopMax { line3 += " · VDOP max \(n(v, 2))" }
        }
        line3 += " · coverage \(n(100 * stats.coverage, 1)) % · \(plural(warnings.count, "warning"))"
        var line4: String? = nil
        if let s = suggestion {
            var text = "+1 locator at (\(n(s.position.x, 1)), \(n(s.position.y, 1))) m: p95 \(opt(s.before.hdopP95)) → \(opt(s.after.hdopP95)), "
            text += "coverage \(n(100 * s.before.coverage, 1)) → \(n(100 * s.after.coverage, 1)) %"
            if !s.improves { text += " — marginal gain" }
            line4 = text
        }
        return (line2, line3, line4)
    }

    /// Each warning as `key: message`, in the report's order (the heatmap lists them under the drawing).
    package var warningTexts: [String] { warnings.map(\.description) }

    /// The DOP map as the heatmap colours it: the cell edges along x (columns + 1, x₀ + i·Δx) and
    /// along y (rows + 1, y₀ + j·Δy), metres, and each cell's HDOP (nil: no fix) in `grid` index order
    /// (row-major, row 0 at the bottom).
    public var hdopMap: (xEdgesMeters: [Double], yEdgesMeters: [Double], hdop: [Double?]) {
        ((0...grid.columns).map { grid.originX + Double($0) * grid.cellWidthMeters },
         (0...grid.rows).map { grid.originY + Double($0) * grid.cellHeightMeters },
         cells.map(\.hdop))
    }

    /// The floor's HDOP map for `locus serve`'s accuracy overlay (`/api/geometry/<floor index>`):
    /// `{"floor": "1F", "x0": 0.25, "y0": 0.25, "stepX": 0.5, "stepY": 0.5, "nx": 80, "ny": 50,
    /// "sigmaM": 0.1, "hdop": [1.21, …, null, …]}`: cell centres at `x0 + i·stepX`, `y0 + j·stepY`
    /// (metres), `hdop` row-major with `j` (y, from the bottom) outer; `null` where fewer locators are
    /// in reach than a fix needs. Position σ ≈ HDOP · `sigmaM`.
    package func overlayJSON(sigmaMeters: Double) -> JSONValue {
        let g = grid
        return .object([
            ("floor", .string(floor.id.rawValue)),
            ("x0", .number(g.originX + g.cellWidthMeters / 2, .fixed(4))),
            ("y0", .number(g.originY + g.cellHeightMeters / 2, .fixed(4))),
            ("stepX", .number(g.cellWidthMeters, .fixed(4))),
            ("stepY", .number(g.cellHeightMeters, .fixed(4))),
            ("nx", .integer(g.columns)), ("ny", .integer(g.rows)),
            ("sigmaM", .number(sigmaMeters, .shortest)),
            ("hdop", .array(cells.map { c in c.hdop.map { $0.isFinite ? .number($0, .fixed(3)) : .null } ?? .null })),
        ])
    }
}

extension GeometryStatistics {
    /// `hdop_p50`, `hdop_p95`, `hdop_max` (null when no cell is solvable) and `coverage`.
    var summaryJSON: [(String, JSONValue)] {
        func opt(_ x: Double?) -> JSONValue { x.map { .number($0, .fixed(4)) } ?? .null }
        return [("hdop_p50", opt(hdopP50)), ("hdop_p95", opt(hdopP95)), ("hdop_max", opt(hdopMax)),
                ("coverage", .number(coverage, .fixed(4)))]
    }
}
