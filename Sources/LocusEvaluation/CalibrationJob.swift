import Locus
import LocusCore
import LocusIO
import LocusSolvers

/// A whole `locus calibrate` run as a library call: each locator's range bias and noise from a
/// recording with known positions (`truthPath`), or from the ranges alone with a check of every
/// locator's surveyed position; the calibrated site written to `outPath`. The command line and the
/// C ABI call this; each only parses and prints.
package struct CalibrationJob {
    /// Where the true distance takes the tag's height from.
    package enum HeightSource: String, Sendable {
        /// The floor's `tagHeightM` on planar floors, the truth's z otherwise.
        case auto
        case floor
        case truth
    }

    let sitePath: String
    let tracePath: String
    let truthPath: String?
    let outPath: String?
    /// Floor of rows without one (nil: the site's first floor).
    let defaultFloor: FloorID?
    /// With truth: the estimator (nil: tukey; giving one without truth is E1001).
    let estimator: RangeCalibrationConfiguration.Estimator?
    let fitsSlope: Bool
    let height: HeightSource
    /// Samples a locator needs (nil: 10 with truth, 50 ranges without).
    let minimumSamples: Int?
    /// Without truth: `outPath` also moves each flagged locator to its fitted position.
    let fixesPositions: Bool
    /// Length of the alternating blocks of the held-out validation, seconds (`HoldoutBlocks`); 0
    /// turns the validation off (the calibration is written as fitted).
    let holdoutBlockSeconds: Double

    /// A calibration of the recording at `tracePath` against the site at `sitePath`: with the truth
    /// at `truthPath` (nil: from the ranges alone), the calibrated site written to `outPath` (nil:
    /// not written); the other parameters as the fields they set say (`locus calibrate`'s options).
    package init(sitePath: String, tracePath: String, truthPath: String? = nil, outPath: String? = nil,
                 defaultFloor: FloorID? = nil, estimator: RangeCalibrationConfiguration.Estimator? = nil,
                 fitsSlope: Bool = false, height: HeightSource = .auto, minimumSamples: Int? = nil,
                 fixesPositions: Bool = false, holdoutBlockSeconds: Double? = nil) {
        self.sitePath = sitePath
        self.tracePath = tracePath
        self.truthPath = truthPath
        self.outPath = outPath
        self.defaultFloor = defaultFloor
        self.estimator = estimator
        self.fitsSlope = fitsSlope
        self.height = height
        self.minimumSamples = minimumSamples
        self.fixesPositions = fixesPositions
        self.holdoutBlockSeconds = holdoutBlockSeconds ?? HoldoutBlocks.defaultBlockSeconds
    }

    /// What one floor's calibration produced.
    struct FloorResult {
        var floor: Floor
        var heightSource: String
        var calibration: RangeCalibration
    }

    /// Reads site, trace and truth, estimates every floor's biases, validates the calibration on
    /// held-out blocks of the recording (`holdoutBlockSeconds`), writes `outPath` unless the
    /// validation refuses it; the summary and the verdict (1 when `outPath` was refused).
    /// - Throws: the loaders' E3xxx/E5xxx errors naming file, line or JSON path; E3002 for an unknown
    ///   `--floor`; E1001 for `--slope` with the median; E4001 when no row has truth or no locator has
    ///   enough samples; E4002 when a slope is not determined; E5005 when `--out` cannot be written.
    package func run(say: (String) -> Void = { _ in }) throws(LocusError) -> CalibrationOutcome {
        let chosenEstimator = estimator ?? .tukey
        if fitsSlope && chosenEstimator == .median {
            throw LocusError(.usage, "--slope needs --estimator tukey or huber (see: locus calibrate --help)")
        }
        let configuration = RangeCalibrationConfiguration(estimator: chosenEstimator, fitsSlope: fitsSlope,
                                                          minimumSamples: minimumSamples ?? 10)

        // The notation of each address, so that --out writes them as the input had them.
        let (input, addressNotation) = try SiteDecoder.loadNotated(path: sitePath)
        var site = input
        let defaultFloor = try site.floorIndex(self.defaultFloor)
        guard let truthPath else {
            if estimator != nil {
                throw LocusError(.usage, "--estimator applies with --truth only (see: locus calibrate --help)")
            }
            return try runWithoutTruth(say: say, site: input, addressNotation: addressNotation, defaultFloor: defaultFloor)
        }
        if fixesPositions {
            throw LocusError(.usage, "--fix-positions applies without --truth only (see: locus calibrate --help)")
        }
        let truth = try GroundTruth.read(path: truthPath)
        let traceSource = try ByteSource(path: tracePath)
        let trace = try TraceReader.read(source: traceSource)

        let fitted = try fitWithTruth(trace: trace, truth: truth, site: input, defaultFloor: defaultFloor,
                                      configuration: configuration, say: say)
        site = fitted.site
        let results = fitted.results, samples = fitted.samples
        let skipped = fitted.skipped, withoutTruth = fitted.withoutTruth
        let rows = trace.rows.count + trace.skipped.total
        let sampleCount = samples.reduce(0) { $0 + $1.count + $1.differenceCount }
        if sampleCount == 0 && (rows == 0 || skipped.total >= rows) {
            // Nothing to calibrate with, and the skip counts say why.
            var verdict: [String] = []
            let status = RunVerdict.check(command: "calibrate", input: traceSource.name, results: 0, noun: ("sample", "samples"),
                                          rows: rows, skipped: skipped, say: { verdict.append($0) })
            return CalibrationOutcome(summary: nil, status: status, verdict: verdict)
        }
        guard !results.isEmpty else {
            throw LocusError(.tooFewRanges, "no range row has truth at its time (check that trace and truth share tags and clock)",
                             context: .init(file: tracePath))
        }
        for r in results {
            for note in r.calibration.notes { say("locus calibrate: warning: floor '\(r.floor.id)' \(note)\n") }
        }
        // Held-out validation: fitted on the even blocks, both sites scored on the odd ones.
        var validation = holdoutBlockSeconds > 0
            ? validateWithTruth(trace: trace, truth: truth, site: input, defaultFloor: defaultFloor, configuration: configuration)
            : nil
        let writes = validation?.accepted ?? true
        if writes, let out = outPath { try FileBytes.write(SiteEncoder.encode(site, addressNotation: addressNotation), to: out) }
        validation?.written = writes && outPath != nil

        let summary = CalibrationSummary(floors: results, samples: sampleCount,
                                         withoutTruth: withoutTruth, skipped: skipped, estimator: chosenEstimator, fitsSlope: fitsSlope,
                                         outPath: writes ? outPath : nil, tracePath: tracePath, validation: validation)
        var verdict: [String] = []
        var status = RunVerdict.check(command: "calibrate", input: traceSource.name, results: sampleCount, noun: ("sample", "samples"),
                                      rows: rows, skipped: skipped, say: { verdict.append($0) })
        if let validation { status = max(status, Self.refusalVerdict(validation, outPath: outPath, say: say)) }
        return CalibrationOutcome(summary: .withTruth(summary), status: status, verdict: verdict)
    }

    /// What a calibration with truth fitted: the calibrated site, per floor the result, the samples, and the rows' fate.
    struct TruthFit {
        var site: Site
        var results: [FloorResult]
        /// Per floor: its ranges' and its range differences' samples.
        var samples: [RangeCalibrationSamples]
        var skipped: SkipTally
        var withoutTruth: Int
    }

    /// Calibrates every floor of `input` that `trace`'s rows with truth reach (the rows of the whole
    /// recording, or of the held-out validation's fit blocks).
    /// - Throws: E4001/E4002 of the estimators, the floor named.
    func fitWithTruth(trace: RangeTrace, truth: GroundTruth, site input: Site, defaultFloor: Int,
                      configuration: RangeCalibrationConfiguration, say: (String) -> Void) throws(LocusError) -> TruthFit {
        var site = input
        let heightChoice = height.rawValue
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
        for row in trace.rows {
            var f = defaultFloor
            if row.floorIndex >= 0 {
                guard let known = traceFloors[Int(row.floorIndex)] else { skipped.record(.unknownFloor, line: Int(row.line)); continue }
                f = known
            }
            guard let slot = slotMaps[f][row.locator],
                  let referenceSlot = row.isDifference ? slotMaps[f][row.reference] : slot else {
                skipped.record(.unknownAnchor, line: Int(row.line)); continue
            }
            guard var p = truth.position(tag: trace.tags[Int(row.tagIndex)], at: row.timeSeconds) else {
                withoutTruth += 1
                continue
            }
            let floor = site.floors[f]
            if usesFloorHeight[f] { p.z = floor.tagHeightMeters }
            if row.isDifference {
                samples[f].append(referenceSlot: referenceSlot, reference: floor.locators[referenceSlot].position, locatorSlot: slot,
                                            locator: floor.locators[slot].position, differenceMeters: row.rangeMeters, tagPosition: p)
            } else {
                samples[f].append(slot: slot, locator: floor.locators[slot].position, rangeMeters: row.rangeMeters, tagPosition: p)
            }
        }
        slotMaps.removeAll()

        var results: [FloorResult] = []
        for (f, floor) in site.floors.enumerated() where samples[f].count > 0 || samples[f].differenceCount > 0 {
            let calibration: RangeCalibration
            do {
                // Ranges see each bias whole; a floor's differences add nothing they need (`RangeCalibration.estimate`).
                if samples[f].count == 0 {
                    say("locus calibrate: floor '\(floor.id)': from \(plural(samples[f].differenceCount, "range difference")): only "
                        + "differences of biases are observable; their mean is kept at the site's (docs/tdoa.md)\n")
                }
                calibration = try RangeCalibration.estimate(floor: floor, samples: samples[f], configuration: configuration)
            } catch {
                throw LocusError(error.code, "floor '\(floor.id)': \(error.message)", context: error.context)
            }
            site.floors[f] = calibration.applied(to: floor)
            results.append(FloorResult(floor: floor, heightSource: usesFloorHeight[f] ? "floor tagHeightM" : "truth z",
                                       calibration: calibration))
        }
        return TruthFit(site: site, results: results, samples: samples, skipped: skipped, withoutTruth: withoutTruth)
    }

}


/// What a calibration produced: the summary (nil when nothing could be calibrated and the skip
/// counts say why), the exit status of `RunVerdict` (0 or 1) and its lines for stderr.
package struct CalibrationOutcome {
    /// The report, with truth or without (the bundle adjustment): what a face prints of it (which of
    /// the two it is stays inside the job).
    package struct Summary {
        enum Report {
            case withTruth(CalibrationSummary)
            case withoutTruth(SelfCalibrationReport)
        }
        var report: Report

        /// The report of a calibration with truth.
        static func withTruth(_ summary: CalibrationSummary) -> Summary { Summary(report: .withTruth(summary)) }
        /// The report of a calibration without truth.
        static func withoutTruth(_ report: SelfCalibrationReport) -> Summary { Summary(report: .withoutTruth(report)) }

        /// The `--json` object.
        package var json: JSONValue {
            switch report {
            case .withTruth(let s): s.json
            case .withoutTruth(let r): r.json
            }
        }

        /// Sets the wall time of the run (`elapsed_s` of the report without truth; the caller owns the clock).
        package mutating func recordElapsed(_ seconds: Double) {
            if case .withoutTruth(var r) = report {
                r.elapsedSeconds = seconds
                report = .withoutTruth(r)
            }
        }

        /// The text for people.
        package var text: String {
            switch report {
            case .withTruth(let s): s.text(tracePath: s.tracePath)
            case .withoutTruth(let r): r.text(tracePath: r.tracePath)
            }
        }
    }

    package var summary: Summary?
    package var status: Int32
    package var verdict: [String]
}
