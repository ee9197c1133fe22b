import Foundation
import Locus
import LocusCore
import LocusIO
import LocusSolvers

/// `locus replay`: the whole pipeline over a recorded trace, as fast as it can (SPEC §5).
package enum ReplayCommand: LocusCommand {
    package static let spec = CommandSpec(
        name: "replay",
        summary: "Replay a recorded range trace: ranges → positions (→ zone events), with accuracy against truth.",
        options: [
            .value("site", "SITE", "Site JSON (SPEC §1).", required: true),
            .value("trace", "TRACE", "Range trace CSV: t,anchor,range_m[,tag][,floor] (SPEC §2).", required: true),
            .value("truth", "TRUTH", "Truth CSV t,[tag,]x,y[,z]: adds rmse_m, p50_m, p95_m, p99_m, max_m, per_tag figures, the error cdf, and zone_score: the zone transitions scored against those the same rules raise on the truth (matched, missed, spurious per tag-hour, delay p50/p95)."),
            .value("report", "OUT.svg", "With --truth: one self-contained SVG report — the floor map with each tag's track over its truth, the error over time, the error CDF (p50/p95 marked), the zone score and a per-tag table."),
            .value("zone-window", "SECONDS", "With --truth: how far apart a zone transition and its reference may be to match (default 5)."),
            .value("truth-shift", "SECONDS|auto", "Compare each fix at t with the truth at t + SECONDS (to check or correct a clock offset between the logs; default 0), or auto: estimate SECONDS from the range residuals against the truth (never from the fixes)."),
            .value("positions", "OUT.csv", "Write positions: t,tag,x,y,z,vx,vy,speed_mps,course_deg,accuracy_m,accuracy95_m,hdop,anchors,rejected,floor."),
            .value("events", "OUT.jsonl", "Write zone events as JSON Lines (SPEC §3)."),
            .flag("smooth", "Add the offline smoother over the whole recording (positions only)."),
            .value("jobs", "N", "Cores to run on (default: all online): tags are shared out, one clock, the same bytes for every N."),
            .flag("json", "Print the summary as one JSON object."),
        ] + EngineOptions.optionSpecs,
        discussion: """
        The trace is read and replayed as it streams (memory does not grow with its length); '-' reads it
        from standard input, and gzip data (a .gz file, or gzip on stdin) is inflated as it is read. A trace
        that is not in time order (exports concatenated, runs back to back) is sorted with bounded memory
        through a temporary file in $TMPDIR (deleted), and a line on stderr says so. --smooth and
        --truth-shift auto need the whole recording and hold it in memory.
        --positions - or --events - writes to standard output (one of them); the summary (text or --json)
        then goes to stderr, otherwise to stdout.
        Rows that cannot be used are skipped, counted by reason and reported; they never stop a replay.
        Accuracy figures are horizontal: e = ‖(x, y) − truth(t)‖, truth interpolated linearly in time; with
        --json a figure of nothing compared is null.
        A run that gives no fix fails (exit 1) with the likely cause from the skip counts, and so does
        --truth that covers none of the fixes; more than half the rows skipped is a warning on stderr.
        Exit codes: 0 success, 1 failure at run time, 2 usage error or invalid input.
        """)

    package static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32 {
        let started = Date()
        let sitePath = arguments.string("site") ?? ""
        let tracePath = arguments.string("trace") ?? ""
        let positionsPath = arguments.string("positions"), eventsPath = arguments.string("events")
        if positionsPath == "-" && eventsPath == "-" {
            throw LocusError(.usage, "only one of --positions and --events can be '-' (standard output) (see: locus replay --help)")
        }
        let options = try EngineOptions(arguments)
        let configuration = EngineConfiguration(options)
        let jobs = try arguments.integer("jobs", default: ProcessorCount.online, in: 1...256)
        let site = try SiteDecoder.load(path: sitePath)
        // An unknown --floor is an error before any input is read (E3002, as the engine would say).
        let defaultFloor = FloorIndex(try site.floorIndex(options.defaultFloor))
        var truth: GroundTruth? = nil
        if let path = arguments.string("truth") { truth = try GroundTruth.read(path: path) }
        let reportPath = arguments.string("report")
        if reportPath != nil && truth == nil {
            throw LocusError(.usage, "--report needs --truth: it draws the tracks over their truth (see: locus replay --help)")
        }
        let zoneWindow = try arguments.double("zone-window", default: 5, in: 0.001...3600)
        let source = try ByteSource(path: tracePath)
        // Outputs are opened (created) before the run, so an unwritable one fails before the work.
        let positions = try positionsPath.map { (path: String) throws(LocusError) in try ByteSink(path: path) }
        let events = try eventsPath.map { (path: String) throws(LocusError) in try ByteSink(path: path) }
        // The summary goes where no output goes: stderr when an output is standard output.
        let report: @Sendable (String) -> Void = positionsPath == "-" || eventsPath == "-" ? console.err : console.out

        var summary: ReplaySummary
        if options.smooth || arguments.string("truth-shift") == "auto" {
            // The smoother and the truth-shift estimate need the whole recording in memory.
            summary = try wholeRecording(arguments, options: options, configuration: configuration, site: site,
                                         defaultFloor: defaultFloor, source: source, truth: truth, zoneWindow: zoneWindow,
                                         positions: positions, events: events, console: console)
        } else {
            let shift = try truthShift(arguments, trace: nil, truth: truth, site: site, defaultFloor: defaultFloor,
                                       solver: configuration.solver, console: console)
            let bar = console.errIsTerminal ? ProgressBar(total: 0, label: "replay", console: console) : nil
            var replay = StreamingReplay(site: site, configuration: configuration, jobs: jobs)
            if let truth {
                replay.evaluation = try ReplayEvaluation(site: site, truth: truth, shiftSeconds: shift?.seconds ?? 0,
                                                         rateHertz: configuration.rateHertz, keepsTracks: reportPath != nil,
                                                         windowSeconds: zoneWindow)
            }
            replay.progress = bar.map { b in { rows in b.update(rows) } }
            let outcome = try replay.run(source: source, positions: positions, events: events)
            bar?.finish()
            if let runs = outcome.sortedRuns {
                console.err("locus replay: \(source.name) is not in time order (\(plural(runs, "time-ordered run"))): "
                            + (outcome.spilledBlocks > 0
                               ? "sorted through \(plural(outcome.spilledBlocks, "block")) in \(TemporaryFiles.directory) (deleted)\n"
                               : "sorted in memory\n"))
            }
            summary = ReplaySummary(fixes: outcome.fixes, ranges: outcome.rows, tags: outcome.tags, skipped: outcome.skipped,
                                    diagnostics: outcome.diagnostics, accuracy: outcome.accuracy, events: outcome.events,
                                    elapsedSeconds: 0, filter: options.filter.rawValue, smooth: false,
                                    truthShift: truth == nil ? nil : shift, evaluation: outcome.evaluation)
        }
        try positions?.close()
        try events?.close()
        summary.elapsedSeconds = Date().timeIntervalSince(started)
        if let reportPath, let evaluation = summary.evaluation {
            try FileBytes.write(ReplayReport.svg(site: site, summary: summary, evaluation: evaluation, trace: source.name), to: reportPath)
        }
        if arguments.flag("json") {
            report(JSONWriter(style: .compact).string(summary.json) + "\n")
        } else {
            report(summary.text(tracePath: source.name, positionsPath: positionsPath == "-" ? "<stdout>" : positionsPath))
        }
        return summary.verdict(command: "replay", input: source.name, console: console)
    }

    /// `--smooth` and `--truth-shift auto`: the whole recording read into memory, replayed by one
    /// engine (`ReplayRun`), then smoothed.
    private static func wholeRecording(_ arguments: ParsedArguments, options: EngineOptions, configuration: EngineConfiguration,
                                       site: Site, defaultFloor: FloorIndex, source: ByteSource, truth: GroundTruth?, zoneWindow: Double,
                                       positions: ByteSink?, events: ByteSink?, console: Console) throws(LocusError) -> ReplaySummary {
        var engine = try PositioningEngine(site: site, configuration: configuration)
        let trace = try TraceReader.read(source: source)
        let truthShift = try Self.truthShift(arguments, trace: trace, truth: truth, site: site, defaultFloor: defaultFloor,
                                             solver: configuration.solver, console: console)
        let progress = console.errIsTerminal ? ProgressBar(total: trace.count, label: "replay", console: console) : nil
        var smoothing = options.smooth ? OfflineSmoothing(configuration: configuration) : nil
        let result = ReplayRun.run(trace: trace, engine: &engine, smoothing: &smoothing,
                                   progress: progress.map { bar in { done in bar.update(done) } })
        progress?.finish()
        var fixes = result.fixes
        if let smoothing { fixes = try smoothing.smooth(fixes: fixes, engine: engine) }
        if let events {
            var writer = ZoneEventWriter()
            for e in result.events { writer.append(e) }
            try events.write(writer.bytes)
        }
        if let positions {
            var writer = PositionsWriter()
            for fix in fixes { writer.append(fix) }
            try positions.write(writer.bytes)
        }
        var evaluation: ReplayEvaluation? = nil
        if let truth {
            var e = try ReplayEvaluation(site: site, truth: truth, shiftSeconds: truthShift?.seconds ?? 0, rateHertz: configuration.rateHertz,
                                         keepsTracks: arguments.string("report") != nil, windowSeconds: zoneWindow)
            for fix in fixes { e.add(fix) }
            for event in result.events { e.add(event) }
            e.finish()
            evaluation = e
        }
        let accuracy = evaluation?.accuracyReport
        var skipped = trace.skipped
        skipped.merge(engine.diagnostics.skipped)
        return ReplaySummary(fixes: fixes.count, ranges: trace.count + trace.skipped.total, tags: trace.tags.count,
                             skipped: skipped, diagnostics: engine.diagnostics, accuracy: accuracy,
                             events: Dictionary(grouping: result.events, by: \.kind).mapValues(\.count),
                             elapsedSeconds: 0, filter: options.filter.rawValue, smooth: options.smooth,
                             truthShift: truth == nil ? nil : truthShift, evaluation: evaluation)
    }
}

extension ReplayCommand {
    /// `--truth-shift`: nil when absent (δ = 0, not reported), the number when given, or with `auto`
    /// the estimate of `ReplayTruthShift.estimate` (0 with a warning on stderr when it cannot tell).
    /// - Throws: E1001 for a value that is neither `auto` nor a number in −3600…3600.
    static func truthShift(_ arguments: ParsedArguments, trace: RangeTrace?, truth: GroundTruth?, site: Site, defaultFloor: FloorIndex,
                           solver: TrilaterationConfiguration, console: Console) throws(LocusError) -> ReplayTruthShift? {
        guard let text = arguments.string("truth-shift") else { return nil }
        guard text == "auto" else {
            return ReplayTruthShift(seconds: try arguments.double("truth-shift", default: 0, in: -3600...3600), source: .given)
        }
        guard let truth, let trace else {
            console.err("locus replay: warning: --truth-shift auto has no effect without --truth\n")
            return nil
        }
        let alignment = ReplayTruthShift.estimate(trace: trace, truth: truth, site: site, defaultFloor: defaultFloor.rawValue, solver: solver)
        if let warning = ReplayTruthShift.warning(for: alignment) { console.err(warning) }
        return ReplayTruthShift(seconds: alignment.shiftSeconds, source: .auto)
    }
}

/// Feeds a trace through an engine in time order.
package enum ReplayRun {
    package struct Output {
        /// The causal fixes, in (time, tag) order.
        package var fixes: [PositionFix]
        /// Zone events of the causal stream, in SPEC §4.7 order.
        package var events: [ZoneEvent]
    }

    /// Ingests every row of `trace` in non-decreasing time (ties in file order), then finishes.
    /// - Parameter progress: called with the number of rows done, every 65,536 rows.
    /// - Parameter smoothing: when given, every row is recorded there right after the engine took it (for `--smooth`).
    package static func run(trace: RangeTrace, engine: inout PositioningEngine, smoothing: inout OfflineSmoothing?,
                            progress: ((Int) -> Void)? = nil) -> Output {
        let tagIndex = trace.tags.map { engine.tagIndex(for: $0) }
        let floorIndex = trace.floors.map { engine.floorIndex($0) }
        let defaultFloor = engine.defaultFloor
        var skippedFloor = SkipTally()
        // A trace already in time order (the usual case) is walked directly, without an index array.
        let order: [Int]? = trace.isTimeOrdered ? nil : trace.timeOrder()
        for done in 0..<trace.count {
            let i = order?[done] ?? done
            if let progress, done & 0xFFFF == 0 { progress(done) }
            let f = trace.floorIndex[i]
            var floor = defaultFloor
            if f >= 0 {
                guard let known = floorIndex[Int(f)] else { skippedFloor.record(.unknownFloor, line: Int(trace.line[i])); continue }
                floor = known
            }
            engine.ingest(tag: tagIndex[Int(trace.tagIndex[i])], floor: floor, locator: trace.locator[i],
                          rangeMeters: trace.rangeMeters[i], timeSeconds: trace.timeSeconds[i], line: Int(trace.line[i]))
            if smoothing != nil { smoothing?.record(trace.measurement(i), ingestedBy: engine) }
        }
        engine.finish()
        // The engine's buffers are taken as they are (no second array of every fix).
        let fixes = engine.drainFixes()
        let events = engine.drainEvents()
        engine.recordSkipped(skippedFloor)
        return Output(fixes: fixes, events: events)
    }

    /// `run(trace:engine:smoothing:progress:)` without smoothing.
    package static func run(trace: RangeTrace, engine: inout PositioningEngine, progress: ((Int) -> Void)? = nil) -> Output {
        var none: OfflineSmoothing? = nil
        return run(trace: trace, engine: &engine, smoothing: &none, progress: progress)
    }
}
