import Locus
import LocusCore
import LocusIO
import LocusSolvers

/// A whole `locus geometry` run as a library call: a floor's DOP map, coverage, warnings, the
/// one-more-locator suggestion and the survey check against a recording. The command line and the
/// C ABI call this and draw the heatmap from its outcome (`GeometryHeatmap`, LocusReports).
package struct GeometryJob {
    let sitePath: String
    /// The floor to judge (nil: the site's first).
    let floor: FloorID?
    let options: GeometryReportOptions
    /// The grid as the user wrote it, for the message of a grid with too many cells.
    let gridText: String?
    /// Range error σ, metres: adds the expected accuracy HDOP × σ.
    let accuracySigmaMeters: Double?
    /// Find where one more locator would help most.
    let suggests: Bool
    /// A recording to check each locator's surveyed position against.
    let tracePath: String?

    /// A geometry run on the site at `sitePath`; the other parameters as the fields they set say
    /// (`locus geometry`'s options).
    package init(sitePath: String, floor: FloorID? = nil, options: GeometryReportOptions = .standard, gridText: String? = nil,
                 accuracySigmaMeters: Double? = nil, suggests: Bool = false, tracePath: String? = nil) {
        self.sitePath = sitePath
        self.floor = floor
        self.options = options
        self.gridText = gridText
        self.accuracySigmaMeters = accuracySigmaMeters
        self.suggests = suggests
        self.tracePath = tracePath
    }

    /// Loads the site, computes the report (and the suggestion and the survey check).
    /// - Throws: E1001 a grid over `options.maximumCells` cells, E3002 unknown floor, E3001 floor
    ///   without extent (with `floors[i].widthM`), E3xxx/E5002 invalid site, E5001 file errors, the
    ///   survey check's E4001.
    package func run() throws(LocusError) -> GeometryOutcome {
        let path = sitePath
        let site = try SiteDecoder.load(path: path)
        let floorIndex: Int
        do { floorIndex = try site.floorIndex(floor) } catch { throw error.inFile(path) }
        let floor = site.floors[floorIndex]
        if let cells = Self.cellCount(floor: floor, gridMeters: options.gridMeters), cells > Double(options.maximumCells) {
            throw LocusError(.usage, "option '--grid' \(gridText ?? DecimalText.string(options.gridMeters, decimals: 3)) gives \(Int(cells)) cells on the "
                             + "\(DecimalText.string(floor.widthMeters, decimals: 1)) × \(DecimalText.string(floor.heightMeters, decimals: 1)) m floor, "
                             + "more than the \(options.maximumCells) allowed: use a coarser grid (see: locus geometry --help)")
        }
        let report: GeometryReport
        do {
            report = try GeometryReport(floor: floor, options: options)
        } catch {
            var e = error
            if e.code == .noFloorMap { e.context.jsonPath = "floors[\(floorIndex)].widthM" }
            throw e.inFile(path)
        }
        let suggestion = suggests ? try report.suggestion() : nil
        var title = "Locator geometry — "
        title += site.building.name.isEmpty ? site.building.id : site.building.name
        title += ", floor \(floor.id)" + (floor.name.isEmpty ? "" : " (\(floor.name))")
        let checked = try tracePath.map { (trace: String) throws(LocusError) in
            try Self.surveyCheck(trace: trace, site: site, floorIndex: floorIndex)
        }
        let survey = checked?.survey, confirmation = checked?.confirmation, surveyNotPossible = checked?.notPossible
        let marks = (survey?.locators ?? []).enumerated().compactMap { i, l -> SurveyMark? in
            guard l.isFlagged, let d = l.positionOffset else { return nil }
            let p = floor.locators[i].position
            return SurveyMark(address: l.address, surveyed: Point2(x: p.x, y: p.y), fitted: Point2(x: p.x + d.x, y: p.y + d.y),
                              offsetMeters: (d.x * d.x + d.y * d.y + d.z * d.z).squareRoot(),
                              confirmed: confirmation.map { $0.acceptsMoves && $0.moved.contains(l.address.description) } ?? false)
        }
        return GeometryOutcome(site: site, sitePath: path, report: report, suggestion: suggestion, title: title, survey: survey,
                               confirmation: confirmation, surveyNotPossible: surveyNotPossible, surveyMarks: marks,
                               tracePath: tracePath ?? "",
                               accuracySigmaMeters: accuracySigmaMeters)
    }

    /// ⌈W/a⌉·⌈H/a⌉ as `GeometryGrid` counts it; nil when the floor has no extent (the report says why).
    static func cellCount(floor: Floor, gridMeters a: Double) -> Double? {
        guard floor.widthMeters > 0, floor.heightMeters > 0 else { return nil }
        return max(1, (floor.widthMeters / a - 1e-9).rounded(.up)) * max(1, (floor.heightMeters / a - 1e-9).rounded(.up))
    }

    /// The survey check of the floor's locators against `trace` (`SelfCalibration`, bias only; from
    /// its range differences, `DifferenceSelfCalibration`, when the floor has no ranges in it — as
    /// `locus calibrate` chooses), and, when it flags a locator, whether the held-out blocks confirm
    /// the move: the validation `locus calibrate --fix-positions` runs before it moves a locator
    /// (`SiteCalibration.calibrate` on the floor's rows in blocks of `HoldoutBlocks.defaultBlockSeconds`:
    /// a move must beat the biases alone on the held-out blocks and be reproduced by them).
    /// A recording whose bundle adjustment diverges (E4004: too few of its ranges over-determine the
    /// tag — the Hanyang runs, 4 locators in 3-D) checks nothing: `notPossible` says why, and the
    /// geometry report stands (before, the whole run failed with E4004).
    /// - Throws: the trace reader's errors; E4001 when the trace holds too few usable epochs on it.
    static func surveyCheck(trace path: String, site: Site, floorIndex: Int)
        throws(LocusError) -> (survey: SelfCalibration?, confirmation: CalibrationValidation?, notPossible: String?) {
        let trace = try TraceReader.read(source: try ByteSource(path: path))
        /// The floor's rows of `rows` (the other floors' left empty: only this floor is checked).
        func floorData(_ rows: RangeTrace) -> [SelfCalibrationData] {
            let all = CalibrationJob.selfCalibrationData(trace: rows, site: site, defaultFloor: floorIndex).data
            return site.floors.indices.map { $0 == floorIndex ? all[$0] : SelfCalibrationData(measurements: [], floor: site.floors[$0]) }
        }
        let data = floorData(trace)
        let floor = site.floors[floorIndex]
        let planar = TrilaterationConfiguration.standard.resolvedMode(for: floor.locators.map(\.position)) == .planar
        let survey: SelfCalibration
        do {
            survey = try SelfCalibration.estimate(floor: floor, data: data[floorIndex], planar: planar)
        } catch where error.code == .solverDiverged {
            return (nil, nil, error.message)
        } catch {
            throw LocusError(error.code, "survey check of floor '\(floor.id)': \(error.message)", context: .init(file: path))
        }
        guard survey.locators.contains(where: \.isFlagged) else { return (survey, nil, nil) }
        let halves = HoldoutBlocks.halves(of: trace, blockSeconds: HoldoutBlocks.defaultBlockSeconds, data: floorData)
        var options = SiteCalibration.Options()
        options.fixesPositions = true
        do {
            let checked = try SiteCalibration.calibrate(site: site, data: data, halves: halves, options: options,
                                                        solver: EngineConfiguration(EngineOptions()).solver)
            var confirmation = checked.validation
            if let v = confirmation, !v.judged, v.heldOutBlocks < CalibrationValidation.minimumHeldOutBlocks {
                // Too short to judge: said as such (the calibration's reason names `--holdout-block`,
                // which geometry does not have).
                confirmation?.notJudged(CalibrationValidation.tooShort(halves.blocks))
            }
            return (survey, confirmation, nil)
        } catch {
            throw LocusError(error.code, "survey check of floor '\(floor.id)': \(error.message)", context: .init(file: path))
        }
    }
}

/// What a geometry run found: the report and what was asked besides, with the summary as JSON and text.
package struct GeometryOutcome {
    var site: Site
    var sitePath: String
    package var report: GeometryReport
    package var suggestion: GeometrySuggestion?
    /// The heatmap's title: building and floor.
    package var title: String
    var survey: SelfCalibration?
    /// The held-out validation of moving the flagged locators (nil when none is flagged).
    var confirmation: CalibrationValidation?
    /// Why the recording checks nothing (its bundle adjustment diverges); nil when it was checked.
    var surveyNotPossible: String?
    /// The survey check's flagged locators, for the heatmap.
    package var surveyMarks: [SurveyMark]
    var tracePath: String
    package var accuracySigmaMeters: Double?

    /// The `--json` summary (`svg`: the heatmap's path, when one was written).
    package func json(svg: String?) -> JSONValue {
        Self.summary(report, suggestion: suggestion, svg: svg, survey: surveyJSON, accuracySigmaMeters: accuracySigmaMeters)
    }

    /// The survey check's `--json` object, with `confirmation` (the held-out validation of the moves,
    /// `CalibrationValidation.json`; null when nothing is flagged) after its members.
    private var surveyJSON: JSONValue? {
        if let why = surveyNotPossible {
            return .object([("trace", .string(tracePath)), ("flagged", .integer(0)), ("locators", .array([])),
                            ("not_possible", .string(why)), ("confirmation", .null)])
        }
        guard let members = survey?.survey(trace: tracePath).json.members else { return nil }
        return .object(members.map { ($0.key, $0.value) } + [("confirmation", confirmation?.json ?? .null)])
    }

    /// The survey check's line on the held-out blocks: whether they confirm the flagged locators' moves.
    private var confirmationText: String {
        guard let v = confirmation else { return "" }
        if v.acceptsMoves, let before = v.surveyed, let after = v.calibrated {
            return "  held-out blocks confirm moving \(v.moved.joined(separator: ", ")): median |range residual| "
                + "\(DecimalText.string(before, decimals: 4)) → \(DecimalText.string(after, decimals: 4)) m\n"
        }
        return "  held-out blocks do not confirm the flags: \(v.reason ?? "not judged")\n"
    }

    /// The summary for people.
    package func text(svg: String?) -> String {
        var out = Self.text(report, suggestion: suggestion, site: site, path: sitePath, svg: svg, accuracySigmaMeters: accuracySigmaMeters)
        if let survey { out += survey.survey(trace: tracePath).text + confirmationText }
        if let why = surveyNotPossible { out += "survey check against \(tracePath): not possible, no locator checked: \(why)\n" }
        return out
    }

    /// The `--json` summary: the report's (`GeometryReport.summaryJSON`: SPEC keys `cells`,
    /// `hdop_p50`, `hdop_p95`, `hdop_max`, `coverage`, `warnings`, and more), then `survey` (the survey
    /// check, `SelfCalibration.survey(trace:)`) and `svg` (the heatmap's path) when there are any.
    static func summary(_ r: GeometryReport, suggestion: GeometrySuggestion?, svg: String?, survey: JSONValue? = nil,
                        accuracySigmaMeters: Double? = nil) -> JSONValue {
        var members = r.summaryJSON(suggestion: suggestion, accuracySigmaMeters: accuracySigmaMeters)
        if let survey { members.append(("survey", survey)) }
        if let svg { members.append(("svg", .string(svg))) }
        return .object(members)
    }

    /// The human summary: the report's (`GeometryReport.summaryText`: a compact table, the warnings, the
    /// suggestion), then the other floors and the heatmap's path.
    static func text(_ r: GeometryReport, suggestion: GeometrySuggestion?, site: Site, path: String, svg: String?,
                     accuracySigmaMeters: Double? = nil) -> String {
        var out = r.summaryText(path: path, suggestion: suggestion, accuracySigmaMeters: accuracySigmaMeters)
        if site.floors.count > 1 {
            out += "other floors: \(site.floors.filter { $0.id != r.floor.id }.map(\.id.rawValue).joined(separator: ", ")) (use --floor)\n"
        }
        if let svg { out += "heatmap: \(svg)\n" }
        return out
    }
}

/// A locator the survey check flagged, for the heatmap: where it was surveyed, where the recording
/// fits it.
package struct SurveyMark {
    package var address: LocatorAddress
    package var surveyed: Point2
    package var fitted: Point2
    package var offsetMeters: Double
    /// Whether the held-out blocks confirm the move (`GeometryJob.surveyCheck`).
    package var confirmed: Bool

    init(address: LocatorAddress, surveyed: Point2, fitted: Point2, offsetMeters: Double, confirmed: Bool) {
        self.address = address
        self.surveyed = surveyed
        self.fitted = fitted
        self.offsetMeters = offsetMeters
        self.confirmed = confirmed
    }
}
