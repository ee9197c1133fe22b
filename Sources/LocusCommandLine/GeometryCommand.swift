import LocusCore
import LocusEvaluation
import LocusIO
import LocusReports
import LocusSolvers

/// `locus geometry`: judges a floor's locator layout before installing hardware (SPEC §5) — DOP
/// over a grid, coverage, warnings, an SVG heatmap, and where one more locator would help most.
enum GeometryCommand: LocusCommand {
    /// The option table (drives parsing and `--help`).
    static let spec = CommandSpec(
        name: "geometry",
        summary: "Judge locator geometry over a floor: HDOP map, coverage, warnings, SVG heatmap, --suggest.",
        options: [
            .value("site", "SITE", "Site JSON (SPEC §1).", required: true),
            .value("floor", "ID", "Floor to judge (default: the site's first floor)."),
            .value("grid", "METRES", "Cell size of the grid (default 0.5; at most 1,000,000 cells)."),
            .value("max-range", "METRES", "Largest tag–locator distance that still ranges (default 30)."),
            .value("svg", "OUT.svg", "Write the heatmap: HDOP per cell on a scale fitted to the map's range, floor, zones, locators (those off the floor at its edge), legend, scale bar, wrapped warnings."),
            .value("accuracy", "SIGMA_M", "Range error σ in metres (e.g. 0.1): the heatmap shows the expected horizontal accuracy HDOP × σ in cm, and the summary adds its p50/p95/max."),
            .flag("suggest", "Find where one more locator would most improve the worst area, and by how much."),
            .value("trace", "TRACE", "Check each locator's surveyed position against a recording on this floor (the survey check of 'locus calibrate' without truth): flagged locators are listed and marked on the SVG with the position the recording fits, and confirmed (or not) on held-out blocks of 10 s as calibrate --fix-positions judges a move."),
            .value("method", "PATH", "Numeric path of the ranging DOP map: batched (one dgemm per block of cells, default) or kernel (C kernel per cell, the reference). A --tdoa map has one path.", choices: ["kernel", "batched"]),
            .flag("tdoa", "Plan a TDoA site: map the DOP of uplink range differences (each cell hears every locator within --max-range, the nearest is the reference) instead of ranges. Coverage then needs 4 locators heard (5 on a spatial floor); outside the locators' hull (dashed on the heatmap) TDoA degrades much faster than ranging. --json adds \"measurement\": \"tdoa\"."),
            .flag("json", "Print the summary as one JSON object."),
        ],
        discussion: """
        Per cell centre (tag at the floor's tagHeightM) the locators within --max-range give
        H (unit line-of-sight rows), Q = (HᵀH)⁻¹ and HDOP = √(Q₁₁+Q₂₂): the position error is about
        HDOP × the range error. Coverage is the fraction of cells with HDOP ≤ 2 and at least 3
        locators in range (4 on a spatial floor). Warnings: collinear/coplanar locators, locators
        outside the floor, areas out of range or with HDOP > 5 (with their bounding box), zones in
        poor geometry. --suggest tries positions every ~1 m along the walls and on an interior grid
        (at the median locator height) and picks the one with the lowest 95th-percentile HDOP.
        --tdoa: the DOP of uplink differences ρ_B − ρ_A against the nearest heard locator A
        (DifferenceGeometry: Fisher information of the arrivals less the unknown emission time);
        position error ≈ HDOP × one arrival's error. Coverage: HDOP ≤ 2 with ≥ 4 locators heard
        (spatial: 5); warnings and --suggest are judged on that map.
        The heatmap's colours adapt to the map: shades of green (HDOP ≤ 2, covered) span the map's own
        range, yellow (2), orange (3), red (5) and dark red (> 5, very poor) keep their meaning; the
        title is green when coverage ≥ 95 % and max HDOP ≤ 2, amber when ≥ 80 % and ≤ 5, else red.
        Exit codes: 0 judged (warnings allowed), 1 failure at run time (e.g. an unwritable --svg),
        2 usage error or invalid site.
        """)

    /// Parses the options into a `GeometryJob`, runs it, writes the SVG, prints the summary.
    /// - Throws: as `GeometryJob.run`; E1001 for a malformed option; E5005 for `--svg`.
    static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32 {
        let standard = GeometryReportOptions.standard
        let options = GeometryReportOptions(
            gridMeters: try arguments.double("grid", default: standard.gridMeters, in: 0.001...10_000),
            maximumRangeMeters: try arguments.double("max-range", default: standard.maximumRangeMeters, in: 0.01...100_000),
            path: arguments.string("method") == "kernel" ? .kernel : .batched,
            measurement: arguments.flag("tdoa") ? .tdoa : .range)
        let job = GeometryJob(
            sitePath: arguments.string("site") ?? "", floor: arguments.string("floor").map { FloorID($0) }, options: options,
            gridText: arguments.string("grid"),
            accuracySigmaMeters: arguments.string("accuracy") == nil ? nil : try arguments.double("accuracy", default: 0, in: 0.000_1...100),
            suggests: arguments.flag("suggest"), tracePath: arguments.string("trace"))
        let outcome = try job.run()
        let svg = arguments.string("svg")
        if let svg { try FileBytes.write(GeometryHeatmap.svg(outcome), to: svg) }
        console.out(arguments.flag("json") ? JSONWriter(style: .compact).string(outcome.json(svg: svg)) + "\n" : outcome.text(svg: svg))
        return 0
    }
}
