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
            .value("truth", "TRUTH", "Truth CSV t,[tag,]x,y[,z]: adds rmse_m, p50_m, p95_m, max_m."),
            .value("truth-shift", "SECONDS|auto", "Compare each fix at t with the truth at t + SECONDS (to check or correct a clock offset between the logs; default 0), or auto: estimate SECONDS from the range residuals against the truth (never from the fixes)."),
            .value("positions", "OUT.csv", "Write positions: t,tag,x,y,z,vx,vy,speed_mps,course_deg,accuracy_m,accuracy95_m,hdop,anchors,rejected,floor."),
            .value("events", "OUT.jsonl", "Write zone events as JSON Lines (SPEC §3)."),
            .value("floor", "ID", "Floor for rows without a floor column (default: the site's first floor)."),
            .value("rate", "HZ", "Output rate per tag, Hz (default 4)."),
            .value("filter", "KIND", "none: raw per-epoch least-squares fixes; kalman: the causal filter (default).",
                   choices: ["none", "kalman"]),
            .flag("smooth", "Add the offline smoother over the whole recording (positions only)."),
            .value("coupling", "KIND", "How the filter uses ranges: tight (each range an update, default) or loose (each epoch's least-squares fix).",
                   choices: ["tight", "loose"]),
            .value("mode", "MODE", "Solver mode (default auto: planar when the locators are near-coplanar in height).",
                   choices: ["auto", "planar", "spatial"]),
            .value("sigma", "METRES", "Range noise σ assumed by the solver, metres (default 0.1)."),
            .value("tag-offset", "WHEN", "Estimate and remove a per-tag common range offset online: auto (on planar floors without biasM, default), on, off.",
                   choices: ["auto", "on", "off"]),
            .flag("json", "Print the summary as one JSON object."),
        ],
        discussion: """
        Rows that cannot be used are skipped, counted by reason and reported; they never stop a replay.
        Accuracy figures are horizontal: e = ‖(x, y) − truth(t)‖, truth interpolated linearly in time.
        Exit codes: 0 success, 1 failure at run time, 2 usage error or invalid input.
        """)

    package static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32 {
        let started = Date()
        let sitePath = arguments.string("site") ?? ""
        let tracePath = arguments.string("trace") ?? ""
        let options = try EngineOptions(arguments)
        let configuration = EngineConfiguration(options)
        let site = try SiteDecoder.load(path: sitePath)
        var engine = try PositioningEngine(site: site, configuration: configuration)
        var truth: GroundTruth? = nil
        if let path = arguments.string("truth") { truth = try GroundTruth.read(path: path) }
        let trace = try TraceReader.read(path: tracePath)
        let truthShift = try Self.truthShift(arguments, trace: trace, truth: truth, site: site, defaultFloor: engine.defaultFloor,
                                             solver: configuration.solver, console: console)

        let progress = console.errIsTerminal ? ProgressBar(total: trace.count, label: "replay", console: console) : nil
        var smoothing = options.smooth ? OfflineSmoothing(configuration: configuration) : nil
        let result = ReplayRun.run(trace: trace, engine: &engine, smoothing: &smoothing,
                                   progress: progress.map { bar in { done in bar.update(done) } })
        progress?.finish()
        var fixes = result.fixes
        if let smoothing { fixes = try smoothing.smooth(fixes: fixes, engine: engine) }

        if let path = arguments.string("events") {
            var writer = ZoneEventWriter()
            for e in result.events { writer.append(e) }
            try FileBytes.write(writer.bytes, to: path)
        }
        if let path = arguments.string("positions") {
            var writer = PositionsWriter()
            for fix in fixes { writer.append(fix) }
            try FileBytes.write(writer.bytes, to: path)
        }
        var accuracy: AccuracyReport? = nil
        let shiftSeconds = truthShift?.seconds ?? 0
        if let t = truth { accuracy = AccuracyReport(fixes: fixes, truth: { tag, time in t.position(tag: tag, at: time + shiftSeconds) }) }
        let elapsed = Date().timeIntervalSince(started)

        var skipped = trace.skipped
        skipped.merge(engine.diagnostics.skipped)
        let rows = trace.count + trace.skipped.total
        let summary = ReplaySummary(fixes: fixes.count, ranges: rows, tags: trace.tags.count,
                                    skipped: skipped, diagnostics: engine.diagnostics, accuracy: accuracy,
                                    events: Dictionary(grouping: result.events, by: \.kind).mapValues(\.count),
                                    elapsedSeconds: elapsed, filter: options.filter.rawValue, smooth: options.smooth,
                                    truthShift: truth == nil ? nil : truthShift)
        if arguments.flag("json") {
            console.out(JSONWriter(style: .compact).string(summary.json) + "\n")
        } else {
            console.out(summary.text(tracePath: tracePath, positionsPath: arguments.string("positions")))
        }
        return 0
    }
}

extension ReplayCommand {
    /// `--truth-shift`: nil when absent (δ = 0, not reported), the number when given, or with `auto`
    /// the estimate of `ReplayTruthShift.estimate` (0 with a warning on stderr when it cannot tell).
    /// - Throws: E1001 for a value that is neither `auto` nor a number in −3600…3600.
    static func truthShift(_ arguments: ParsedArguments, trace: RangeTrace, truth: GroundTruth?, site: Site, defaultFloor: FloorIndex,
                           solver: TrilaterationConfiguration, console: Console) throws(LocusError) -> ReplayTruthShift? {
        guard let text = arguments.string("truth-shift") else { return nil }
        guard text == "auto" else {
            return ReplayTruthShift(seconds: try arguments.double("truth-shift", default: 0, in: -3600...3600), source: .given)
        }
        guard let truth else {
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
    /// - Parameter smoothing: when given, every row is recorded there as it is offered (for `--smooth`).
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
            if smoothing != nil { smoothing?.record(trace.measurement(i)) }
            let f = trace.floorIndex[i]
            var floor = defaultFloor
            if f >= 0 {
                guard let known = floorIndex[Int(f)] else { skippedFloor.record(.unknownFloor, line: Int(trace.line[i])); continue }
                floor = known
            }
            engine.ingest(tag: tagIndex[Int(trace.tagIndex[i])], floor: floor, locator: trace.locator[i],
                          rangeMeters: trace.rangeMeters[i], timeSeconds: trace.timeSeconds[i], line: Int(trace.line[i]))
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
