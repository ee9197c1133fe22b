import Locus
import LocusCore
import LocusIO
import LocusSolvers

/// `locus calibrate` without `--truth`: each locator's bias (and scale with `--slope`) and a check
/// of its surveyed position from the ranges alone (`SelfCalibration`), or, on a floor whose trace
/// rows are range differences only, from the differences (`SelfCalibration.estimate` decides: only
/// differences of biases, the mean held at the site's). A floor with both kinds is calibrated from
/// its ranges (each sees its bias whole); its differences are counted and left out, with a warning.
extension CalibrationJob {
    /// What one floor's calibration without truth produced.
    struct SelfFloorResult {
        var floor: Floor
        var calibration: SelfCalibration
    }

    /// Reads the trace, validates the calibration on held-out blocks (`validateWithoutTruth`: with
    /// `--fix-positions` the moves are made only when they validate), calibrates every floor it
    /// reaches from the whole recording, prints the report, writes `--out` unless the validation
    /// refuses the calibration.
    /// - Throws: the loaders' errors; E4001 when a floor has too few usable epochs; E5005 for `--out`.
    func runWithoutTruth(say: (String) -> Void, site input: Site, addressNotation: SiteAddressNotation,
                         defaultFloor: Int) throws(LocusError) -> CalibrationOutcome {
        let fixPositions = fixesPositions
        let traceSource = try ByteSource(path: tracePath)
        let trace = try TraceReader.read(source: traceSource)
        var site = input
        let (data, skipped, _) = Self.selfCalibrationData(trace: trace, site: site, defaultFloor: defaultFloor)
        if fitsSlope, site.floors.indices.contains(where: { data[$0].rangeCount == 0 && data[$0].differenceCount > 0 }) {
            throw LocusError(.usage, "--slope applies to ranges: from range differences only biases are fitted (see: locus calibrate --help)")
        }

        // The held-out validation (SiteCalibration.calibrate): it decides whether the flagged locators are moved.
        let halves = holdoutBlockSeconds > 0
            ? HoldoutBlocks.halves(of: trace, blockSeconds: holdoutBlockSeconds) {
                Self.selfCalibrationData(trace: $0, site: input, defaultFloor: defaultFloor).data
            }
            : nil
        for (f, floor) in site.floors.enumerated() where data[f].rangeCount > 0 && data[f].differenceCount > 0 {
            say("locus calibrate: warning: floor '\(floor.id)': \(plural(data[f].differenceCount, "range difference")) "
                + "not used: the floor's ranges see each bias whole and are calibrated alone (docs/tdoa.md)\n")
        }
        var options = SiteCalibration.Options()
        options.fitsSlope = fitsSlope
        options.fixesPositions = fixPositions
        options.minimumRanges = minimumSamples ?? 50
        // From differences only, the floor's warnings say the gauge (only differences of biases; the mean held at the site's).
        let calibrated: (floors: [(floor: Floor, calibration: SelfCalibration)], site: Site, validation: CalibrationValidation?, movedLocators: Bool)
        do {
            calibrated = try SiteCalibration.calibrate(site: input, data: data, halves: halves, options: options,
                                                       solver: EngineConfiguration(scoringOptions).solver)
        } catch {
            throw LocusError(error.code, error.message, context: .init(file: traceSource.name))
        }
        site = calibrated.site
        var validation = calibrated.validation
        let results = calibrated.floors.map { SelfFloorResult(floor: $0.floor, calibration: $0.calibration) }
        for r in results {
            for w in r.calibration.warnings { say("locus calibrate: warning: floor '\(r.floor.id)': \(w)\n") }
            for l in r.calibration.locators {
                guard let note = l.note else { continue }
                say("locus calibrate: \(l.isFlagged ? "flagged" : "warning"): floor '\(r.floor.id)' locator \(l.address) \(note)\n")
            }
        }
        let flagged = results.flatMap { $0.calibration.locators.filter(\.isFlagged).map(\.address.description) }
        if fixPositions, let v = validation, v.acceptsMoves, Set(flagged) != Set(v.moved) {
            say("locus calibrate: warning: held-out validation judged the moves of \(v.moved.joined(separator: ", ")); "
                + "the whole recording flags \(flagged.isEmpty ? "none" : flagged.joined(separator: ", "))\n")
        }
        let estimated = results.reduce(0) { $0 + $1.calibration.locators.filter { $0.biasMeters != nil }.count }
        let writes = estimated > 0 && (validation?.accepted ?? true)
        if let out = outPath, writes {
            try FileBytes.write(SiteEncoder.encode(site, addressNotation: addressNotation), to: out)
        }
        validation?.written = writes && outPath != nil
        let report = SelfCalibrationReport(floors: results, skipped: skipped, fitsSlope: fitsSlope, fixPositions: fixPositions,
                                           outPath: writes ? outPath : nil, elapsedSeconds: 0, tracePath: traceSource.name,
                                           movedLocators: calibrated.movedLocators, validation: validation)
        let rows = trace.rows.count + trace.skipped.total
        let why = results.flatMap(\.calibration.warnings).first
        var verdict: [String] = []
        var status = RunVerdict.check(command: "calibrate", input: traceSource.name, results: estimated,
                                      noun: ("calibrated locator", "calibrated locators"),
                                      rows: rows, skipped: skipped, failure: why, say: { verdict.append($0) })
        if let validation, estimated > 0 { status = max(status, Self.refusalVerdict(validation, outPath: outPath, say: say)) }
        return CalibrationOutcome(summary: .withoutTruth(report), status: status, verdict: verdict)
    }

    /// The trace's ranges and range differences per floor (`SelfCalibrationData(measurements:differences:floor:)`;
    /// `differences` counts the differences): rows of unknown floors and locators skipped and counted.
    static func selfCalibrationData(trace: RangeTrace, site: Site, defaultFloor: Int)
        -> (data: [SelfCalibrationData], skipped: SkipTally, differences: Int) {
        var skipped = trace.skipped
        var differences = 0
        var differenceRows = [[RangeDifference]](repeating: [], count: site.floors.count)
        let traceFloors: [Int?] = trace.floors.map { site.floorIndex(of: $0)?.rawValue }
        let known: [Set<UInt16>] = site.floors.map { Set($0.locators.map(\.address.rawValue)) }
        var measurements = [[RangeMeasurement]](repeating: [], count: site.floors.count)
        for (i, row) in trace.rows.enumerated() {
            var f = defaultFloor
            if row.floorIndex >= 0 {
                guard let floor = traceFloors[Int(row.floorIndex)] else { skipped.record(.unknownFloor, line: Int(row.line)); continue }
                f = floor
            }
            guard known[f].contains(row.locator), known[f].contains(row.reference) else {
                skipped.record(.unknownAnchor, line: Int(row.line)); continue
            }
            if row.isDifference {
                differences += 1
                differenceRows[f].append(trace.difference(i))
                continue
            }
            measurements[f].append(RangeMeasurement(timeSeconds: row.timeSeconds, tag: trace.tags[Int(row.tagIndex)],
                                                    locator: LocatorAddress(row.locator), rangeMeters: row.rangeMeters))
        }
        let data = site.floors.indices.map {
            SelfCalibrationData(measurements: measurements[$0], differences: differenceRows[$0], floor: site.floors[$0])
        }
        return (data, skipped, differences)
    }
}

