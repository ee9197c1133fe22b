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
        let survey = try tracePath.map { (trace: String) throws(LocusError) in
            try Self.surveyCheck(trace: trace, site: site, floorIndex: floorIndex)
        }
        let marks = (survey?.locators ?? []).enumerated().compactMap { i, l -> SurveyMark? in
            guard l.isFlagged, let d = l.positionOffset else { return nil }
            let p = floor.locators[i].position
            return SurveyMark(address: l.address, surveyed: Point2(x: p.x, y: p.y), fitted: Point2(x: p.x + d.x, y: p.y + d.y),
                              offsetMeters: (d.x * d.x + d.y * d.y + d.z * d.z).squareRoot())
        }
        return GeometryOutcome(site: site, sitePath: path, report: report, suggestion: suggestion, title: title, survey: survey,
                               surveyMarks: marks, tracePath: tracePath ?? "", accuracySigmaMeters: accuracySigmaMeters)
    }

    /// ⌈W/a⌉·⌈H/a⌉ as `GeometryGrid` counts it; nil when the floor has no extent (the report says why).
    static func cellCount(floor: Floor, gridMeters a: Double) -> Double? {
        guard floor.widthMeters > 0, floor.heightMeters > 0 else { return nil }
        return max(1, (floor.widthMeters / a - 1e-9).rounded(.up)) * max(1, (floor.heightMeters / a - 1e-9).rounded(.up))
    }

    /// The survey check of the floor's locators against `trace` (`SelfCalibration`, bias only; from
    /// its range differences, `DifferenceSelfCalibration`, when the floor has no ranges in it — as
    /// `locus calibrate` chooses).
    /// - Throws: the trace reader's errors; E4001 when the trace holds too few usable epochs on it.
    static func surveyCheck(trace path: String, site: Site, floorIndex: Int) throws(LocusError) -> SelfCalibration {
        let trace = try TraceReader.read(source: try ByteSource(path: path))
        let arranged = CalibrationJob.selfCalibrationData(trace: trace, site: site, defaultFloor: floorIndex)
        let data = arranged.data[floorIndex]
        let floor = site.floors[floorIndex]
        let planar = TrilaterationConfiguration.standard.resolvedMode(for: floor.locators.map(\.position)) == .planar
        do {
            return try SelfCalibration.estimate(floor: floor, data: data, planar: planar)
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
    /// The survey check's flagged locators, for the heatmap.
    package var surveyMarks: [SurveyMark]
    var tracePath: String
    package var accuracySigmaMeters: Double?

    /// The `--json` summary (`svg`: the heatmap's path, when one was written).
    package func json(svg: String?) -> JSONValue {
        Self.summary(report, suggestion: suggestion, svg: svg, survey: survey?.survey(trace: tracePath).json,
                     accuracySigmaMeters: accuracySigmaMeters)
    }

    /// The summary for people.
    package func text(svg: String?) -> String {
        var out = Self.text(report, suggestion: suggestion, site: site, path: sitePath, svg: svg, accuracySigmaMeters: accuracySigmaMeters)
        if let survey { out += survey.survey(trace: tracePath).text }
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

    init(address: LocatorAddress, surveyed: Point2, fitted: Point2, offsetMeters: Double) {
        self.address = address
        self.surveyed = surveyed
        self.fitted = fitted
        self.offsetMeters = offsetMeters
    }
}
