import Foundation
import Locus
import LocusCore
import LocusIO
import LocusEvaluation
import LocusReports

/// `locus replay`: the whole pipeline over a recorded trace, as fast as it can (SPEC §5).
enum ReplayCommand: LocusCommand {
    static let spec = CommandSpec(
        name: "replay",
        summary: "Replay a recorded range trace: ranges → positions (→ zone events), with accuracy against truth.",
        options: [
            .value("site", "SITE", "Site JSON (SPEC §1).", required: true),
            .value("trace", "TRACE", "Trace CSV (SPEC §2): ranges t,anchor,range_m[,tag][,floor], range differences (TDoA) "
                   + "t,anchor_a,anchor_b,tdoa_m[,tag][,floor] with tdoa_m = d(tag,B) − d(tag,A), or both (each row fills one kind).",
                   required: true),
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
        Range differences (TDoA, docs/tdoa.md) are solved with their correlation (differences of one
        reference share its error) by the same filter, smoother and zones; an epoch holds one kind.
        Accuracy figures are horizontal: e = ‖(x, y) − truth(t)‖, truth interpolated linearly in time; with
        --json a figure of nothing compared is null.
        A run that gives no fix fails (exit 1) with the likely cause from the skip counts, and so does
        --truth that covers none of the fixes; more than half the rows skipped is a warning on stderr.
        Output files appear whole or not at all: each is written aside and renamed over the old one only
        when the run succeeds (exit 0); a failed run leaves the files that existed as they were.
        Exit codes: 0 success, 1 failure at run time, 2 usage error or invalid input.
        """)

    static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32 {
        let started = Date()
        let sitePath = arguments.string("site") ?? ""
        let tracePath = arguments.string("trace") ?? ""
        let positionsPath = arguments.string("positions"), eventsPath = arguments.string("events")
        if positionsPath == "-" && eventsPath == "-" {
            throw LocusError(.usage, "only one of --positions and --events can be '-' (standard output) (see: locus replay --help)")
        }
        let options = try EngineOptions(arguments)
        // Absent: every core online (ReplayJob's default).
        let jobs = arguments.string("jobs") == nil ? nil : try arguments.integer("jobs", default: 1, in: 1...256)
        let site = try SiteDecoder.load(path: sitePath)
        let truthPath = arguments.string("truth"), reportPath = arguments.string("report")
        if reportPath != nil && truthPath == nil {
            throw LocusError(.usage, "--report needs --truth: it draws the tracks over their truth (see: locus replay --help)")
        }
        let zoneWindow = try arguments.double("zone-window", default: 5, in: 0.001...3600)
        let truthShift: ReplayJob.TruthShiftSetting = try arguments.string("truth-shift").map { (text: String) throws(LocusError) in
            text == "auto" ? .auto : .given(try arguments.double("truth-shift", default: 0, in: -3600...3600))
        } ?? .none
        // An unknown --floor is an error before any input is read (E3002, as the engine would say).
        let job = try ReplayJob(site: site, options: options, jobs: jobs, truthPath: truthPath, truthShift: truthShift,
                                zoneWindowSeconds: zoneWindow, keepsTracks: reportPath != nil)
        let source = try ByteSource(path: tracePath)
        // Outputs are opened (created) before the run, so an unwritable one fails before the work.
        let positions = try positionsPath.map { (path: String) throws(LocusError) in try ByteSink(path: path) }
        let events = try eventsPath.map { (path: String) throws(LocusError) in try ByteSink(path: path) }
        // The summary goes where no output goes: stderr when an output is standard output.
        let report: @Sendable (String) -> Void = positionsPath == "-" || eventsPath == "-" ? console.err : console.out

        let bar = console.errIsTerminal ? ProgressBar(total: 0, label: "replay", console: console) : nil
        var summary = try job.run(source: source, positions: positions, events: events, say: console.err,
                                  progress: bar.map { b in { rows in b.update(rows) } })
        bar?.finish()
        summary.elapsedSeconds = Date().timeIntervalSince(started)
        // A run that failed (no fix; truth compared nothing) leaves the output files as they were
        // (SPEC §5): they are put in place only when the verdict passes. Its messages follow the summary.
        var verdictLines: [String] = []
        let status = summary.verdict(command: "replay", input: source.name, say: { verdictLines.append($0) })
        try ReplayOutputs.settle(status: status, positions: positions, events: events, reportPath: reportPath,
                                 site: site, summary: summary, trace: source.name)
        if arguments.flag("json") {
            report(JSONWriter(style: .compact).string(summary.json) + "\n")
        } else {
            report(summary.text(tracePath: source.name, positionsPath: positionsPath == "-" ? "<stdout>" : positionsPath))
        }
        verdictLines.forEach(console.err)
        return status
    }
}
