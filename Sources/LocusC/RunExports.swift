#if canImport(Glibc)
import Glibc
#endif
import Locus
import LocusCore
import LocusEvaluation
import LocusIO
import LocusReports
import LocusSolvers

// The command line's whole runs as typed calls over the same library jobs (`ReplayJob`,
// `GeometryJob`, `CalibrationJob`): the C ABI never runs the command line.

/// `locus_free`: frees a text `locus_replay_file`, `locus_geometry` or `locus_calibrate_file` returned.
@c(locus_free)
public func locusFree(_ text: UnsafeMutablePointer<CChar>?) { free(text) }

/// `locus_replay_file`: `locus replay` over the request's files (`ReplayJob`), the `--json` summary
/// returned; see `include/locus.h`.
@c(locus_replay_file)
public func locusReplayFile(_ request: UnsafeRawPointer?, _ options: UnsafeRawPointer?,
                            _ summaryJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                            _ notes: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                            _ verdict: UnsafeMutablePointer<Int32>?) -> Int32 {
    RunResult.deliver(summaryJSON: summaryJSON, notes: notes, verdict: verdict) { () throws(LocusError) in
        guard let request else { throw LocusError(.invalidArgument, "request is NULL") }
        typealias R = CLayout.ReplayRequest
        let started = ContinuousClock.now
        let site = try SiteDecoder.load(path: try RunResult.path(request, R.site, "request.site_path"))
        let tracePath = try RunResult.path(request, R.trace, "request.trace_path")
        let jobs = request.loadUnaligned(fromByteOffset: R.jobs, as: UInt32.self)
        guard jobs <= 256 else { throw LocusError(.invalidArgument, "request.jobs \(jobs) is not in 0...256") }
        let engineOptions = try EngineFactory.engineOptions(options)
        let truthPath = try RunResult.optionalPath(request, R.truth, "request.truth_path")
        let reportPath = try RunResult.optionalPath(request, R.report, "request.report_path")
        if reportPath != nil && truthPath == nil {
            throw LocusError(.usage, "request.report_path needs request.truth_path: the report draws the tracks over their truth")
        }
        var zoneWindowSeconds = 5.0
        let window = request.loadUnaligned(fromByteOffset: R.zoneWindow, as: Double.self)
        if window != 0 {
            guard (0.001...3600).contains(window) else { throw LocusError(.invalidArgument, "request.zone_window_s \(window) is not in [0.001, 3600]") }
            zoneWindowSeconds = window
        }
        let flags = request.loadUnaligned(fromByteOffset: R.flags, as: UInt32.self)
        guard flags & ~(R.truthShiftGiven | R.truthShiftAuto) == 0, flags != R.truthShiftGiven | R.truthShiftAuto else {
            throw LocusError(.invalidArgument, "request.flags \(flags) is not a combination of locus_replay_flag values")
        }
        var truthShift = ReplayJob.TruthShiftSetting.none
        if flags & R.truthShiftAuto != 0 { truthShift = .auto }
        if flags & R.truthShiftGiven != 0 {
            let shift = request.loadUnaligned(fromByteOffset: R.truthShift, as: Double.self)
            guard (-3600...3600).contains(shift) else { throw LocusError(.invalidArgument, "request.truth_shift_s \(shift) is not in [-3600, 3600]") }
            truthShift = .given(shift)
        }
        let job = try ReplayJob(site: site, options: engineOptions, jobs: max(1, Int(jobs)), truthPath: truthPath, truthShift: truthShift,
                                zoneWindowSeconds: zoneWindowSeconds, keepsTracks: reportPath != nil)
        let source = try ByteSource(path: tracePath)
        let positions = try RunResult.optionalPath(request, R.positions, "request.positions_path").map { (p: String) throws(LocusError) in try ByteSink(path: p) }
        let events = try RunResult.optionalPath(request, R.events, "request.events_path").map { (p: String) throws(LocusError) in try ByteSink(path: p) }
        var said = ""
        var summary = try job.run(source: source, positions: positions, events: events, say: { said += $0 })
        summary.elapsedSeconds = RunResult.seconds(since: started)
        let status = summary.verdict(command: "replay", input: source.name, say: { said += $0 })
        // Outputs are put in place only by a run that passed (SPEC §5); a thrown error drops them too.
        try ReplayOutputs.settle(status: status, positions: positions, events: events, reportPath: reportPath,
                                 site: site, summary: summary, trace: source.name)
        return (summary.json, said, status)
    }
}

/// `locus_geometry`: `locus geometry` over the request (`GeometryJob`, the heatmap by
/// `GeometryHeatmap`), the `--json` summary returned; see `include/locus.h`.
@c(locus_geometry)
public func locusGeometry(_ request: UnsafeRawPointer?, _ summaryJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    RunResult.deliver(summaryJSON: summaryJSON, notes: nil, verdict: nil) { () throws(LocusError) in
        guard let request else { throw LocusError(.invalidArgument, "request is NULL") }
        typealias R = CLayout.GeometryRequest
        let sitePath = try RunResult.path(request, R.site, "request.site_path")
        let floor = try RunResult.optionalPath(request, R.floor, "request.floor").map { FloorID($0) }
        func number(_ offset: Int, _ field: String, _ domain: ClosedRange<Double>) throws(LocusError) -> Double? {
            let v = request.loadUnaligned(fromByteOffset: offset, as: Double.self)
            if v == 0 { return nil }
            guard domain.contains(v) else { throw LocusError(.invalidArgument, "request.\(field) \(v) is not in [\(domain.lowerBound), \(domain.upperBound)]") }
            return v
        }
        let standard = GeometryReportOptions.standard
        let grid = try number(R.grid, "grid_m", 0.001...10_000) ?? standard.gridMeters
        let range = try number(R.maximumRange, "max_range_m", 0.01...100_000) ?? standard.maximumRangeMeters
        let accuracySigma = try number(R.accuracySigma, "accuracy_sigma_m", 0.000_1...100)
        let flags = request.loadUnaligned(fromByteOffset: R.flags, as: UInt32.self)
        guard flags & ~(R.suggest | R.kernel | R.tdoa) == 0 else {
            throw LocusError(.invalidArgument, "request.flags \(flags) has bits that are not locus_geometry_flag values")
        }
        let options = GeometryReportOptions(gridMeters: grid, maximumRangeMeters: range, path: flags & R.kernel != 0 ? .kernel : .batched,
                                            measurement: flags & R.tdoa != 0 ? .tdoa : .range)
        let job = GeometryJob(sitePath: sitePath, floor: floor, options: options, accuracySigmaMeters: accuracySigma,
                              suggests: flags & R.suggest != 0,
                              tracePath: try RunResult.optionalPath(request, R.trace, "request.trace_path"))
        let outcome = try job.run()
        let svg = try RunResult.optionalPath(request, R.svg, "request.svg_path")
        if let svg { try FileBytes.write(GeometryHeatmap.svg(outcome), to: svg) }
        return (outcome.json(svg: svg), "", 0)
    }
}

/// `locus_calibrate_file`: `locus calibrate` over the request (`CalibrationJob`), the `--json`
/// summary returned; see `include/locus.h`.
@c(locus_calibrate_file)
public func locusCalibrateFile(_ request: UnsafeRawPointer?, _ summaryJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                               _ notes: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                               _ verdict: UnsafeMutablePointer<Int32>?) -> Int32 {
    RunResult.deliver(summaryJSON: summaryJSON, notes: notes, verdict: verdict) { () throws(LocusError) in
        guard let request else { throw LocusError(.invalidArgument, "request is NULL") }
        typealias R = CLayout.CalibrateRequest
        let started = ContinuousClock.now
        let sitePath = try RunResult.path(request, R.site, "request.site_path")
        let tracePath = try RunResult.path(request, R.trace, "request.trace_path")
        let truthPath = try RunResult.optionalPath(request, R.truth, "request.truth_path")
        let outPath = try RunResult.optionalPath(request, R.out, "request.out_path")
        let floor = try RunResult.optionalPath(request, R.floor, "request.floor").map { FloorID($0) }
        let estimator: RangeCalibrationConfiguration.Estimator?
        switch request.loadUnaligned(fromByteOffset: R.estimator, as: Int32.self) {
        case 0: estimator = nil
        case 1: estimator = .tukey
        case 2: estimator = .huber
        case 3: estimator = .median
        case let other: throw LocusError(.invalidArgument, "request.estimator \(other) is not a locus_estimator")
        }
        let height: CalibrationJob.HeightSource
        switch request.loadUnaligned(fromByteOffset: R.height, as: Int32.self) {
        case 0: height = .auto
        case 1: height = .floor
        case 2: height = .truth
        case let other: throw LocusError(.invalidArgument, "request.height \(other) is not a locus_height_source")
        }
        let minimum = request.loadUnaligned(fromByteOffset: R.minimumSamples, as: Int64.self)
        guard minimum >= 0 else { throw LocusError(.invalidArgument, "request.min_samples \(minimum) is negative") }
        let flags = request.loadUnaligned(fromByteOffset: R.flags, as: UInt32.self)
        guard flags & ~(R.slope | R.fixPositions | R.noHoldout) == 0 else {
            throw LocusError(.invalidArgument, "request.flags \(flags) has bits that are not locus_calibrate_flag values")
        }
        let job = CalibrationJob(sitePath: sitePath, tracePath: tracePath, truthPath: truthPath, outPath: outPath,
                                 defaultFloor: floor, estimator: estimator, fitsSlope: flags & R.slope != 0, height: height,
                                 minimumSamples: minimum > 0 ? Int(minimum) : nil, fixesPositions: flags & R.fixPositions != 0,
                                 holdoutBlockSeconds: try holdoutBlockSeconds(request, noHoldout: flags & R.noHoldout != 0))
        var said = ""
        var outcome = try job.run(say: { said += $0 })
        outcome.summary?.recordElapsed(RunResult.seconds(since: started))
        for line in outcome.verdict { said += line }
        return (outcome.summary?.json, said, outcome.status)
    }
}

/// `locus_calibrate_request.holdout_block_ms` as `CalibrationJob`'s block length, seconds: 0 is nil
/// (the job's default, 10 s), `LOCUS_CALIBRATE_NO_HOLDOUT` is 0 (no validation, `--holdout-block 0`)
/// and wants the field 0, anything else 1 ms – 24 h (`--holdout-block`'s range).
private func holdoutBlockSeconds(_ request: UnsafeRawPointer, noHoldout: Bool) throws(LocusError) -> Double? {
    let milliseconds = request.loadUnaligned(fromByteOffset: CLayout.CalibrateRequest.holdoutBlockMilliseconds, as: UInt32.self)
    if noHoldout {
        guard milliseconds == 0 else {
            throw LocusError(.invalidArgument, "request.holdout_block_ms \(milliseconds) with LOCUS_CALIBRATE_NO_HOLDOUT (no blocks): give one or the other")
        }
        return 0
    }
    guard milliseconds > 0 else { return nil }
    guard milliseconds <= 86_400_000 else {
        throw LocusError(.invalidArgument, "request.holdout_block_ms \(milliseconds) is above 86,400,000 (24 h)")
    }
    return Double(milliseconds) / 1000
}

/// How the whole-run exports hand back what they made.
enum RunResult {
    /// Runs `body` guarded; on success stores the summary and notes as `malloc`ed texts and the
    /// verdict, on failure sets every out pointer to NULL (and the verdict to 0).
    static func deliver(summaryJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                        notes: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, verdict: UnsafeMutablePointer<Int32>?,
                        _ body: () throws(LocusError) -> (JSONValue?, String, Int32)) -> Int32 {
        summaryJSON?.pointee = nil
        notes?.pointee = nil
        verdict?.pointee = 0
        return Status.guarded { () throws(LocusError) in
            guard let summaryJSON else { throw LocusError(.invalidArgument, "out_summary_json is NULL") }
            let (json, said, status) = try body()
            summaryJSON.pointee = json.map { JSONWriter(style: .compact).string($0) }.flatMap { strdup($0) }
            notes?.pointee = strdup(said)
            verdict?.pointee = status
        }
    }

    /// The path at `offset` of a request (required).
    static func path(_ request: UnsafeRawPointer, _ offset: Int, _ field: String) throws(LocusError) -> String {
        guard let path = try optionalPath(request, offset, field) else { throw LocusError(.invalidArgument, "\(field) is NULL") }
        return path
    }

    /// The text at `offset` of a request, nil when NULL.
    static func optionalPath(_ request: UnsafeRawPointer, _ offset: Int, _ field: String) throws(LocusError) -> String? {
        guard let p = UnsafePointer<CChar>(bitPattern: request.loadUnaligned(fromByteOffset: offset, as: UInt.self)) else { return nil }
        return try CText.string(p, field: field)
    }

    /// Wall time since `start`, seconds (`elapsed_s`).
    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }
}
