import Foundation
import LocusCore
import LocusIO
import LocusSolvers

/// `locus calibrate` without `--truth`: each locator's bias (and scale with `--slope`) and a check
/// of its surveyed position from the ranges alone (`SelfCalibration`).
extension CalibrateCommand {
    /// What one floor's calibration without truth produced.
    struct SelfFloorResult {
        var floor: Floor
        var calibration: SelfCalibration
    }

    /// Reads the trace, calibrates every floor it reaches, prints the report, writes `--out`.
    /// - Throws: the loaders' errors; E4001 when a floor has too few usable epochs; E5005 for `--out`.
    static func runWithoutTruth(_ arguments: ParsedArguments, console: Console, site input: Site,
                                addressNotation: SiteAddressNotation, defaultFloor: Int) throws(LocusError) -> Int32 {
        let started = Date()
        var configuration = SelfCalibrationConfiguration.standard
        configuration.fitsSlope = arguments.flag("slope")
        configuration.minimumRanges = try arguments.integer("min-samples", default: 50, in: 1...Int.max)
        let fixPositions = arguments.flag("fix-positions")
        configuration.fixesPositions = fixPositions
        let traceSource = try ByteSource(path: arguments.string("trace") ?? "")
        let trace = try TraceReader.read(source: traceSource)
        var site = input
        let (data, skipped) = Self.selfCalibrationData(trace: trace, site: site, defaultFloor: defaultFloor)

        var results: [SelfFloorResult] = []
        for (f, floor) in site.floors.enumerated() where data[f].rangeCount > 0 {
            let planar = TrilaterationConfiguration.standard.resolvedMode(for: floor.locators.map(\.position)) == .planar
            let calibration: SelfCalibration
            do {
                calibration = try SelfCalibration.estimate(floor: floor, data: data[f], planar: planar, configuration: configuration)
            } catch {
                throw LocusError(error.code, "floor '\(floor.id)': \(error.message)", context: .init(file: traceSource.name))
            }
            site.floors[f] = calibration.applied(to: floor)
            results.append(SelfFloorResult(floor: floor, calibration: calibration))
        }
        for r in results {
            for w in r.calibration.warnings { console.err("locus calibrate: warning: floor '\(r.floor.id)': \(w)\n") }
            for l in r.calibration.locators {
                guard let note = l.note else { continue }
                console.err("locus calibrate: \(l.flagged ? "flagged" : "warning"): floor '\(r.floor.id)' locator \(l.address) \(note)\n")
            }
        }
        let estimated = results.reduce(0) { $0 + $1.calibration.locators.filter { $0.biasMeters != nil }.count }
        if let out = arguments.string("out"), estimated > 0 {
            try FileBytes.write(SiteEncoder.encode(site, addressNotation: addressNotation), to: out)
        }
        let elapsed = Date().timeIntervalSince(started)
        let report = SelfCalibrationReport(floors: results, skipped: skipped, fixPositions: fixPositions,
                                           outPath: estimated > 0 ? arguments.string("out") : nil, elapsedSeconds: elapsed)
        console.out(arguments.flag("json") ? JSONWriter(style: .compact).string(report.json) + "\n" : report.text(tracePath: traceSource.name))
        let rows = trace.count + trace.skipped.total
        let why = results.flatMap(\.calibration.warnings).first
        return RunVerdict.check(command: "calibrate", input: traceSource.name, results: estimated, noun: ("calibrated locator", "calibrated locators"),
                                rows: rows, skipped: skipped, failure: why, console: console)
    }

    /// The trace's ranges per floor (`SelfCalibrationData(measurements:floor:)`): rows of unknown
    /// floors and locators skipped and counted.
    static func selfCalibrationData(trace: RangeTrace, site: Site, defaultFloor: Int) -> (data: [SelfCalibrationData], skipped: SkipTally) {
        var skipped = trace.skipped
        let traceFloors: [Int?] = trace.floors.map { site.floorIndex(of: $0)?.rawValue }
        let known: [Set<UInt16>] = site.floors.map { Set($0.locators.map(\.address.rawValue)) }
        var measurements = [[RangeMeasurement]](repeating: [], count: site.floors.count)
        for i in 0..<trace.count {
            var f = defaultFloor
            if trace.floorIndex[i] >= 0 {
                guard let floor = traceFloors[Int(trace.floorIndex[i])] else { skipped.record(.unknownFloor, line: Int(trace.line[i])); continue }
                f = floor
            }
            guard known[f].contains(trace.locator[i]) else { skipped.record(.unknownAnchor, line: Int(trace.line[i])); continue }
            measurements[f].append(RangeMeasurement(timeSeconds: trace.timeSeconds[i], tag: trace.tags[Int(trace.tagIndex[i])],
                                                    locator: LocatorAddress(trace.locator[i]), rangeMeters: trace.rangeMeters[i]))
        }
        let data = site.floors.indices.map { SelfCalibrationData(measurements: measurements[$0], floor: site.floors[$0]) }
        return (data, skipped)
    }
}

/// The report of a calibration without truth: a per-locator table as text, or one JSON object.
struct SelfCalibrationReport {
    var floors: [CalibrateCommand.SelfFloorResult]
    var skipped: SkipTally
    var fixPositions: Bool
    var outPath: String?
    var elapsedSeconds: Double

    private static func metres(_ value: Double?) -> JSONValue {
        guard let value, value.isFinite else { return .null }
        return .number(value, .fixed(4))
    }

    /// `mode` "without_truth", `locators` (every floor's, each with its `floor`): `address`, `ranges`,
    /// `bias_m`, `bias_sd_m`, `noise_m`, `slope`/`slope_sd` (with --slope), `position_offset_m`
    /// ([dx, dy, dz] or null), `position_offset_sd_m`, `flagged`, `observable`, `note`;
    /// `residual_rms_m` (all floors' inlier residuals), `floors` (per floor: `epochs`, `iterations`,
    /// `residual_rms_m`, `outliers`, `common_offset` {`separable`, `sd_m`}, `path_spread_m` {`across`,
    /// `along`}, `tag_delay_m`, `warnings`), `skipped`, `elapsed_s`, `out`.
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
                locators.append(.object(m))
            }
        }
        var members: [(String, JSONValue)] = [
            ("mode", .string("without_truth")),
            ("locators", .array(locators)),
            ("residual_rms_m", count > 0 ? .number((sum / Double(count)).squareRoot(), .fixed(4)) : .null),
            ("floors", .array(floors.map { r in
                let c = r.calibration
                return .object([
                    ("floor", .string(r.floor.id.rawValue)),
                    ("epochs", .integer(c.epochs)),
                    ("iterations", .integer(c.iterations)),
                    ("residual_rms_m", .number(c.residualRMSMeters, .fixed(4))),
                    ("outliers", .integer(c.outlierCount)),
                    ("common_offset", .object([("separable", .bool(c.commonOffsetSeparable)), ("sd_m", Self.metres(c.commonOffsetSDMeters))])),
                    ("path_spread_m", .object([("across", Self.metres(c.pathSpreadMeters.minor)), ("along", Self.metres(c.pathSpreadMeters.major))])),
                    ("tag_delay_m", Self.metres(c.tagDelayMeters)),
                    ("warnings", .array(c.warnings.map { .string($0) })),
                ])
            })),
            ("skipped", .object(skipped.nonZero.map { ($0.reason.rawValue, JSONValue.integer($0.count)) })),
            ("slope", .bool(floors.first?.calibration.configuration.fitsSlope ?? false)),
            ("fix_positions", .bool(fixPositions)),
            ("elapsed_s", .number(elapsedSeconds, .fixed(3))),
        ]
        if let out = outPath { members.append(("out", .string(out))) }
        return .object(members)
    }

    func text(tracePath: String) -> String {
        func cell(_ value: Double?, _ decimals: Int = 3) -> String {
            guard let value, value.isFinite else { return "-" }
            return DecimalText.string(value, decimals: decimals)
        }
        func pad(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        var s = "calibrate \(tracePath) without truth (bundle adjustment over the recording's epochs)\n"
        if skipped.total > 0 {
            s += "skipped rows: " + skipped.nonZero.map { r in "\(r.reason.rawValue) \(r.count) (first at line \(skipped.firstLine(r.reason)))" }
                .joined(separator: ", ") + "\n"
        }
        for r in floors {
            let c = r.calibration
            s += "floor \(r.floor.id): \(plural(c.epochs, "epoch")), \(plural(c.iterations, "step")), residual RMS \(cell(c.residualRMSMeters, 4)) m"
            s += ", \(plural(c.outlierCount, "range")) rejected; common offset "
            s += c.commonOffsetSeparable ? "separable (σ \(cell(c.commonOffsetSDMeters, 4)) m)" : "not separable"
            if let delay = c.tagDelayMeters { s += "; tag delay \(cell(delay, 4)) m from ranges between locators" }
            s += "\n"
            var header = pad("address", 9) + pad("ranges", 8) + pad("bias_m", 8) + pad("±sd", 7) + pad("noise_m", 8)
            if c.configuration.fitsSlope { header += pad("slope", 9) }
            header += pad("offset_m", 9) + pad("±sd", 7) + "  flag"
            s += header + "\n"
            for l in c.locators {
                var line = pad(l.address.description, 9) + pad("\(l.rangeCount)", 8) + pad(cell(l.biasMeters), 8) + pad(cell(l.biasSDMeters), 7)
                    + pad(cell(l.noiseMeters), 8)
                if c.configuration.fitsSlope { line += pad(cell(l.slope, 4), 9) }
                let length = l.positionOffset.map { ($0.x * $0.x + $0.y * $0.y + $0.z * $0.z).squareRoot() }
                line += pad(cell(length), 9) + pad(cell(l.positionOffsetSDMeters), 7) + (l.flagged ? "  FLAGGED" : l.observable ? "" : "  kept")
                s += line + "\n"
            }
        }
        if let out = outPath { s += "calibrated site written to \(out)\(fixPositions ? " (flagged locators moved)" : "")\n" }
        return s
    }
}
