import Foundation
import LocusCore
import LocusEvaluation
import LocusIO
import LocusZones

/// `locus zones`: zone judgement alone, on a position stream from any solver (SPEC §5).
enum ZonesCommand: LocusCommand {
    static let spec = CommandSpec(
        name: "zones",
        summary: "Judge zones (SPEC §4) on a position stream: enter, dwell and exit events.",
        options: [
            .value("site", "SITE", "Site JSON (SPEC §1) with the floors' zones.", required: true),
            .value("positions", "POSITIONS", "Positions CSV with t,x,y (tag, z, floor optional), e.g. from locus replay; '-' reads standard input, gzip is inflated.", required: true),
            .value("events", "OUT.jsonl", "Write the events as JSON Lines (SPEC §3), as they are released; '-' or none: stdout (the summary then goes to stderr)."),
            .value("floor", "ID", "Floor for rows without a floor column (default: the site's first floor)."),
            .value("rate", "HZ", "Position rate assumed by the configuration warnings (default 4)."),
            .flag("json", "Print the summary as one JSON object."),
        ],
        discussion: """
        Rows are judged in time order (ties in file order); all floors share one clock, the latest fix
        time, and at the end of the stream no synthetic exit is made (SPEC §4.6). Positions are read
        in pieces and judged as they are read (memory does not grow with the stream); rows that are
        not in time order are read whole and sorted (said on stderr). Configuration
        warnings go to stderr. A stream of which no row can be judged fails (exit 1) with the likely
        cause from the skip counts; more than half the rows skipped is a warning.
        Exit codes: 0 success, 1 failure at run time (e.g. an unwritable --events, nothing judged), 2
        usage error or invalid input.
        """)

    static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32 {
        let started = Date()
        let site = try SiteDecoder.load(path: arguments.string("site") ?? "")
        let positionsPath = arguments.string("positions") ?? ""
        let eventsPath = arguments.string("events")
        let rate = try arguments.double("rate", default: 4, in: 0.001...1000)
        let defaultFloor = try site.floorIndex(arguments.string("floor").map { FloorID($0) })
        let judges: FloorJudges
        do { judges = try FloorJudges(floors: site.floors, options: ZoneJudgeOptions(positionPeriodSeconds: 1 / rate)) } catch { throw error.inFile(arguments.string("site") ?? "") }
        let warnings = judges.configurationWarnings
        for w in warnings { console.err("warning: \(w)\n") }

        // '-' is standard input; gzip is inflated. Read in pieces and judged as read; events written
        // as released (to the --events file, or standard output).
        let source = try ByteSource(path: positionsPath)
        let sink = try eventsPath.map { (path: String) throws(LocusError) in try ByteSink(path: path) }
        let printsEvents = sink == nil && !arguments.flag("json")
        let emit: (ZoneEventWriter) throws(LocusError) -> Void = { writer throws(LocusError) in
            if let sink { try sink.write(writer.bytes) } else if printsEvents { console.out(String(decoding: writer.bytes, as: UTF8.self)) }
        }
        var run = ZoneRun(judges: judges, site: site, defaultFloor: defaultFloor)
        // Rows out of time order need them all at once (sorted in memory); the order is known before
        // anything is written unless what was written can be taken back (an --events file).
        let restartable = sink?.canRestart ?? false
        var ordered = true
        if !restartable {
            ordered = try PositionRows.isTimeOrdered(source)
            try source.rewind()
        }
        if ordered, try !run.streamed(source: source, emit: emit) {
            ordered = false
            try sink?.restart()
            try source.rewind()
            run = ZoneRun(judges: judges, site: site, defaultFloor: defaultFloor)
        }
        if !ordered {
            console.err("locus zones: \(source.name) is not in time order: its rows are sorted in memory\n")
            try run.sorted(source: source, emit: emit)
        }
        try sink?.flush()

        let counts = run.counts
        let elapsed = Date().timeIntervalSince(started)
        let report: @Sendable (String) -> Void = eventsPath == "-" ? console.err : console.out
        if arguments.flag("json") {
            let summary: JSONValue = .object([
                ("fixes", .integer(run.judged)),
                ("skipped", .object(run.skipped.nonZero.map { ($0.reason.rawValue, JSONValue.integer($0.count)) })),
                ("events", .object(ZoneEvent.Kind.allCases.sorted { $0.rawValue < $1.rawValue }.map { ($0.rawValue, JSONValue.integer(counts[$0] ?? 0)) })),
                ("warnings", .array(warnings.map { .string($0.description) })),
                ("elapsed_s", .number(elapsed, .fixed(4))),
                ("fixes_per_s", .number(elapsed > 0 ? Double(run.judged) / elapsed : 0, .fixed(0))),
            ])
            report(JSONWriter(style: .compact).string(summary) + "\n")
        } else {
            var s = "zones \(source.name): \(plural(run.judged, "fix", "fixes")) judged, events: "
            s += ZoneEvent.Kind.allCases.map { "\($0.rawValue) \(counts[$0] ?? 0)" }.joined(separator: ", ")
            if run.skipped.total > 0 {
                s += "; skipped rows: " + run.skipped.nonZero.map { "\($0.reason.rawValue) \($0.count) (first at line \(run.skipped.firstLine($0.reason)))" }.joined(separator: ", ")
            }
            (eventsPath == nil || eventsPath == "-" ? console.err : console.out)(s + "\n")
        }
        let status = RunVerdict.check(command: "zones", input: source.name, results: run.judged, noun: ("fix", "fixes"),
                                      rows: run.rows, skipped: run.skipped, say: console.err)
        // The --events file is put in place only by a run that passed (SPEC §5).
        if status == 0 { try sink?.close() } else { sink?.discard() }
        return status
    }
}

/// One judging of a position stream: every floor's judge on one clock (SPEC §4.6), rows in time
/// order (ties in file order), events released as the rows come.
private struct ZoneRun {
    var judges: FloorJudges
    let site: Site
    let defaultFloor: Int
    /// Events released and not yet formatted.
    private var released: [ZoneEvent] = []
    private var floorOfName: [Int] = []
    private var writer = ZoneEventWriter()
    private(set) var judged = 0
    /// Data rows read (kept or skipped).
    private(set) var rows = 0
    private(set) var skipped = SkipTally()
    private(set) var counts: [ZoneEvent.Kind: Int] = [:]

    init(judges: FloorJudges, site: Site, defaultFloor: Int) {
        self.judges = judges
        self.site = site
        self.defaultFloor = defaultFloor
    }

    /// Judges the stream as it is read; false (stopped) at the first row earlier than the one
    /// before it.
    mutating func streamed(source: ByteSource, emit: (ZoneEventWriter) throws(LocusError) -> Void) throws(LocusError) -> Bool {
        guard try PositionRows.streamed(source, row: { (r: PositionRows.Row) throws(LocusError) in try judge(r) },
                                        piece: { (kept: Int, skipped: SkipTally) throws(LocusError) in
                                            rows += kept
                                            self.skipped = skipped
                                            self.skipped.merge(routerSkips)
                                            try flush(emit)
                                        }) else { return false }
        try finish(emit)
        return true
    }

    /// Judges the whole stream read at once, its rows sorted by time (ties in file order).
    mutating func sorted(source: ByteSource, emit: (ZoneEventWriter) throws(LocusError) -> Void) throws(LocusError) {
        let (kept, skipped) = try PositionRows.sorted(source, row: { (r: PositionRows.Row) throws(LocusError) in try judge(r) })
        rows = kept
        self.skipped = skipped
        self.skipped.merge(routerSkips)
        try finish(emit)
    }

    /// Rows whose floor the site does not know.
    private var routerSkips = SkipTally()

    /// Judges a row on its floor, the other floors' clocks moved to its time.
    private mutating func judge(_ r: PositionRows.Row) throws(LocusError) {
        var floor = defaultFloor
        if r.floorIndex >= 0 {
            // The site's index of each floor the reader has numbered (−2: not looked up yet).
            while floorOfName.count <= r.floorIndex { floorOfName.append(-2) }
            if floorOfName[r.floorIndex] == -2, let id = r.floor { floorOfName[r.floorIndex] = site.floorIndex(of: id)?.rawValue ?? -1 }
            floor = floorOfName[r.floorIndex]
            if floor < 0 { routerSkips.record(.unknownFloor, line: r.line); return }
        }
        let fix = ZoneFix(timeSeconds: r.timeSeconds, tag: r.tag, point: Point2(x: r.x, y: r.y))
        // The reader's tag numbers (first appearance) serve as the judges' tag indices.
        try judges.judge(fix, tag: TagIndex(r.tagIndex), floor: floor, into: &released)
        judged += 1
        collect()
    }

    /// Moves the released events to the writer.
    private mutating func collect() {
        for e in released {
            counts[e.kind, default: 0] += 1
            writer.append(e)
        }
        released.removeAll(keepingCapacity: true)
    }

    /// Writes the events formatted so far.
    private mutating func flush(_ emit: (ZoneEventWriter) throws(LocusError) -> Void) throws(LocusError) {
        guard !writer.bytes.isEmpty else { return }
        try emit(writer)
        writer.removeAll()
    }

    /// Ends judgement (no synthetic exit, SPEC §4.6) and writes the rest.
    private mutating func finish(_ emit: (ZoneEventWriter) throws(LocusError) -> Void) throws(LocusError) {
        judges.finish(into: &released)
        collect()
        try flush(emit)
    }
}
