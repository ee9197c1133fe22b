import Foundation
import LocusCore
import LocusIO
import LocusSolvers

/// `locus calibrate`: each locator's range bias and noise from a recording with known positions,
/// and the site with `biasM` filled in (SPEC §5).
package enum CalibrateCommand: LocusCommand {
    /// The option table (drives parsing and `--help`).
    package static let spec = CommandSpec(
        name: "calibrate",
        summary: "Estimate each locator's range bias (biasM) and noise: from ranges at known positions (--truth), or from the ranges alone.",
        options: [
            .value("site", "SITE", "Site JSON (SPEC §1); its biasM values are ignored: biases are estimated from the raw ranges.", required: true),
            .value("trace", "TRACE", "Range trace CSV: t,anchor,range_m[,tag][,floor] (SPEC §2).", required: true),
            .value("truth", "TRUTH", "Truth CSV t,[tag,]x,y[,z]: where each tag was (interpolated linearly in time). Without it the biases are estimated from the ranges alone, jointly with the tag's path, and every locator's surveyed position is checked."),
            .value("out", "SITE_OUT", "Write the site with the estimated biasM (and biasSlope with --slope); locators without enough samples keep theirs."),
            .value("floor", "ID", "Floor for rows without a floor column (default: the site's first floor)."),
            .value("estimator", "KIND", "tukey: Huber then Tukey bisquare M-estimate, one LAPACKE least squares over all locators per pass (default); huber: the Huber stage only; median: per-locator median.",
                   choices: ["tukey", "huber", "median"]),
            .flag("slope", "Fit error = b + s·distance per locator (tukey/huber): --out writes biasM = b, the intercept (the error at distance 0), and biasSlope = s; the table's bias_m column is the fit at the mean distance, icept_m is b."),
            .value("height", "SOURCE", "Tag height for the true distance: auto (the floor's tagHeightM on planar floors, the truth's z otherwise, default), floor, or truth.",
                   choices: ["auto", "floor", "truth"]),
            .value("min-samples", "N", "Samples a locator needs to be estimated (default 10 with --truth, 50 ranges without)."),
            .flag("fix-positions", "Without --truth: --out also moves each flagged locator to its fitted position."),
            .flag("json", "Print the summary as one JSON object."),
        ],
        discussion: """
        With --truth, for every range row with truth at its time: e = r − ‖p_truth(t) − aᵢ‖. Per locator
        the bias b̂ᵢ is the robust M-estimate of e (or its median), σ̂ᵢ = 1.4826·MAD of the residuals.
        Without --truth: a bundle adjustment fits every epoch's tag position and the locators' biases
        (and scales with --slope) to the ranges alone, with robust weights; it reports each bias ± 1σ,
        the range noise, whether the recording determines it (a locator heard rarely or left loose keeps
        its value, with a warning naming it; a common offset the geometry does not separate is said, the
        biases then relative; a collinear tag path calibrates nothing), and checks each locator's
        surveyed position: one the data put away from it beyond the noise is flagged ("fits 0.47 ± 0.04 m
        from its surveyed position, towards (…)"). Rows whose tag is a locator's address and that range
        from a fixed place are used as ranges between locators. The method and the figures on real data
        are in docs/calibration.md.
        Exit codes: 0 success, 1 failure at run time (e.g. an unwritable --out), 2 usage error or
        invalid input (including no row with truth, or a slope the samples do not determine).
        """)

    /// What one floor's calibration produced.
    struct FloorResult {
        var floor: Floor
        var heightSource: String
        var calibration: RangeCalibration
    }

    /// Reads site, trace and truth, estimates every floor's biases, prints the table, writes `--out`.
    /// - Throws: the loaders' E3xxx/E5xxx errors naming file, line or JSON path; E3002 for an unknown
    ///   `--floor`; E1001 for `--slope` with the median; E4001 when no row has truth or no locator has
    ///   enough samples; E4002 when a slope is not determined; E5005 when `--out` cannot be written.
    package static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32 {
        let tracePath = arguments.string("trace") ?? ""
        var configuration = RangeCalibrationConfiguration.standard
        configuration.estimator = RangeCalibrationConfiguration.Estimator(rawValue: arguments.string("estimator") ?? "tukey") ?? .tukey
        configuration.fitsSlope = arguments.flag("slope")
        if configuration.fitsSlope && configuration.estimator == .median {
            throw LocusError(.usage, "--slope needs --estimator tukey or huber (see: locus calibrate --help)")
        }
        configuration.minimumSamples = try arguments.integer("min-samples", default: 10, in: 1...Int.max)
        let estimatorGiven = arguments.string("estimator") != nil
        let heightChoice = arguments.string("height") ?? "auto"

        // The notation of each address, so that --out writes them as the input had them.
        let (input, addressNotation) = try SiteDecoder.loadNotated(path: arguments.string("site") ?? "")
        var site = input
        let defaultFloor = try site.floorIndex(arguments.string("floor").map { FloorID($0) })
        guard let truthPath = arguments.string("truth") else {
            if estimatorGiven {
                throw LocusError(.usage, "--estimator applies with --truth only (see: locus calibrate --help)")
            }
            return try runWithoutTruth(arguments, console: console, site: input, addressNotation: addressNotation, defaultFloor: defaultFloor)
        }
        if arguments.flag("fix-positions") {
            throw LocusError(.usage, "--fix-positions applies without --truth only (see: locus calibrate --help)")
        }
        let truth = try GroundTruth.read(path: truthPath)
        let traceSource = try ByteSource(path: tracePath)
        let trace = try TraceReader.read(source: traceSource)

        // Samples per floor: each range row with truth at its time.
        let planar = site.floors.map { floor in
            TrilaterationConfiguration.standard.resolvedMode(for: floor.locators.map(\.position)) == .planar
        }
        let usesFloorHeight = site.floors.indices.map { i in heightChoice == "floor" || (heightChoice == "auto" && planar[i]) }
        var slotMaps: [[UInt16: Int]] = site.floors.map { floor in
            var map: [UInt16: Int] = [:]
            for (slot, locator) in floor.locators.enumerated() { map[locator.address.rawValue] = slot }
            return map
        }
        let traceFloors: [Int?] = trace.floors.map { site.floorIndex(of: $0)?.rawValue }
        var samples = [RangeCalibrationSamples](repeating: RangeCalibrationSamples(), count: site.floors.count)
        var skipped = trace.skipped
        var withoutTruth = 0
        for i in 0..<trace.count {
            var f = defaultFloor
            if trace.floorIndex[i] >= 0 {
                guard let known = traceFloors[Int(trace.floorIndex[i])] else { skipped.record(.unknownFloor, line: Int(trace.line[i])); continue }
                f = known
            }
            guard let slot = slotMaps[f][trace.locator[i]] else { skipped.record(.unknownAnchor, line: Int(trace.line[i])); continue }
            guard var p = truth.position(tag: trace.tags[Int(trace.tagIndex[i])], at: trace.timeSeconds[i]) else {
                withoutTruth += 1
                continue
            }
            let floor = site.floors[f]
            if usesFloorHeight[f] { p.z = floor.tagHeightMeters }
            samples[f].append(slot: slot, locator: floor.locators[slot].position, rangeMeters: trace.rangeMeters[i], tagPosition: p)
        }
        slotMaps.removeAll()

        var results: [FloorResult] = []
        for (f, floor) in site.floors.enumerated() where samples[f].count > 0 {
            let calibration: RangeCalibration
            do {
                calibration = try RangeCalibration.estimate(floor: floor, samples: samples[f], configuration: configuration)
            } catch {
                throw LocusError(error.code, "floor '\(floor.id)': \(error.message)", context: error.context)
            }
            site.floors[f] = calibration.applied(to: floor)
            results.append(FloorResult(floor: floor, heightSource: usesFloorHeight[f] ? "floor tagHeightM" : "truth z",
                                       calibration: calibration))
        }
        let rows = trace.count + trace.skipped.total
        let sampleCount = samples.reduce(0) { $0 + $1.count }
        if sampleCount == 0 && (rows == 0 || skipped.total >= rows) {
            // Nothing to calibrate with, and the skip counts say why.
            return RunVerdict.check(command: "calibrate", input: traceSource.name, results: 0, noun: ("sample", "samples"),
                                    rows: rows, skipped: skipped, console: console)
        }
        guard !results.isEmpty else {
            throw LocusError(.tooFewRanges, "no range row has truth at its time (check that trace and truth share tags and clock)",
                             context: .init(file: tracePath))
        }
        for r in results {
            for l in r.calibration.locators where l.biasMeters == nil {
                console.err("locus calibrate: warning: floor '\(r.floor.id)' locator \(l.address): \(plural(l.sampleCount, "sample")), "
                            + "fewer than \(configuration.minimumSamples): its biasM is kept\n")
            }
        }
        if let out = arguments.string("out") { try FileBytes.write(SiteEncoder.encode(site, addressNotation: addressNotation), to: out) }

        let summary = CalibrationSummary(floors: results, samples: samples.reduce(0) { $0 + $1.count },
                                         withoutTruth: withoutTruth, skipped: skipped, configuration: configuration,
                                         outPath: arguments.string("out"))
        if arguments.flag("json") {
            console.out(JSONWriter(style: .compact).string(summary.json) + "\n")
        } else {
            console.out(summary.text(tracePath: tracePath))
        }
        return RunVerdict.check(command: "calibrate", input: traceSource.name, results: sampleCount, noun: ("sample", "samples"),
                                rows: rows, skipped: skipped, console: console)
    }
}

/// The figures `locus calibrate` reports: a per-locator table as text, or one JSON object.
struct CalibrationSummary {
    var floors: [CalibrateCommand.FloorResult]
    var samples: Int
    var withoutTruth: Int
    var skipped: SkipTally
    var configuration: RangeCalibrationConfiguration
    var outPath: String?

    private static func metres(_ value: Double?) -> JSONValue { value.map { .number($0, .fixed(4)) } ?? .null }

    /// `samples`, `without_truth`, `skipped` (reason → count), `estimator`, `slope`, `floors`: per floor
    /// `floor`, `height`, `iterations`, `locators`: `address`, `samples`, `bias_m`, `median_m`, `sigma_m`,
    /// `downweighted` (and `slope`, `intercept_m` with `--slope`); `out` when a site was written.
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
        if let out = outPath { s += "calibrated site written to \(out)\n" }
        return s
    }
}
