import Foundation
import LocusCore
import LocusIO
import LocusZones

/// `locus zones`: zone judgement alone, on a position stream from any solver (SPEC §5).
package enum ZonesCommand: LocusCommand {
    package static let spec = CommandSpec(
        name: "zones",
        summary: "Judge zones (SPEC §4) on a position stream: enter, dwell and exit events.",
        options: [
            .value("site", "SITE", "Site JSON (SPEC §1) with the floors' zones.", required: true),
            .value("positions", "POSITIONS", "Positions CSV with t,x,y (tag, z, floor optional), e.g. from locus replay; '-' reads standard input, gzip is inflated.", required: true),
            .value("events", "OUT.jsonl", "Write the events as JSON Lines (SPEC §3); without it they go to stdout."),
            .value("floor", "ID", "Floor for rows without a floor column (default: the site's first floor)."),
            .value("rate", "HZ", "Position rate assumed by the configuration warnings (default 4)."),
            .flag("json", "Print the summary as one JSON object."),
        ],
        discussion: """
        Rows are judged in time order (ties in file order); all floors share one clock, the latest fix
        time, and at the end of the stream no synthetic exit is made (SPEC §4.6). Configuration
        warnings go to stderr. A stream of which no row can be judged fails (exit 1) with the likely
        cause from the skip counts; more than half the rows skipped is a warning.
        Exit codes: 0 success, 1 failure at run time (e.g. an unwritable --events, nothing judged), 2
        usage error or invalid input.
        """)

    package static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32 {
        let started = Date()
        let site = try SiteDecoder.load(path: arguments.string("site") ?? "")
        let positionsPath = arguments.string("positions") ?? ""
        let rate = try arguments.double("rate", default: 4, in: 0.001...1000)
        let defaultFloor = try site.floorIndex(arguments.string("floor").map { FloorID($0) })
        var options = ZoneJudgeOptions.standard
        options.positionPeriodSeconds = 1 / rate
        var judges: [ZoneJudge] = []
        for floor in site.floors {
            do { judges.append(try ZoneJudge(floor: floor, options: options)) } catch { throw error.inFile(arguments.string("site") ?? "") }
        }
        for w in judges.flatMap(\.configurationWarnings) { console.err("warning: \(w)\n") }

        // '-' is standard input; gzip is inflated. The positions are read whole (a tenth of a trace's size).
        let source = try ByteSource(path: positionsPath)
        let data = try source.readAll()
        let parsed = data.withUnsafeBufferPointer { raw -> Result<PointTable, LocusError> in
            Result { () throws(LocusError) -> PointTable in
                try PointTable.parse(raw, file: source.name, kind: "positions")
            }
        }
        let table = try parsed.get()
        var skipped = table.skipped
        let floorOfName: [Int] = table.floors.map { name in site.floorIndex(of: name)?.rawValue ?? -1 }
        var order = Array(0..<table.count)
        order.sort { a, b in table.timeSeconds[a] < table.timeSeconds[b] || (table.timeSeconds[a] == table.timeSeconds[b] && a < b) }

        var scratch = [[ZoneEvent]](repeating: [], count: judges.count)
        var events: [ZoneEvent] = []
        var judged = 0
        for i in order {
            var floor = defaultFloor
            if table.floorIndex[i] >= 0 {
                floor = floorOfName[Int(table.floorIndex[i])]
                if floor < 0 { skipped.record(.unknownFloor, line: Int(table.line[i])); continue }
            }
            let t = table.timeSeconds[i]
            let fix = ZoneFix(timeSeconds: t, tag: table.tags[Int(table.tagIndex[i])],
                              point: Point2(x: table.points[i].x, y: table.points[i].y))
            for f in judges.indices {
                // The table's tag numbers (first appearance) serve as the judges' tag indices.
                if f == floor { try judges[f].judge(fix, tag: TagIndex(Int(table.tagIndex[i])), into: &scratch[f]) } else { try judges[f].advance(toSeconds: t, into: &scratch[f]) }
            }
            judged += 1
            events += judges.count == 1 ? scratch[0] : ZoneJudge.merge(scratch)
            for f in scratch.indices { scratch[f].removeAll(keepingCapacity: true) }
        }
        for f in judges.indices { judges[f].finish(into: &scratch[f]) }
        events += judges.count == 1 ? scratch[0] : ZoneJudge.merge(scratch)

        var writer = ZoneEventWriter()
        for e in events { writer.append(e) }
        if let path = arguments.string("events") {
            try FileBytes.write(writer.bytes, to: path)
        }
        let counts = Dictionary(grouping: events, by: \.kind).mapValues(\.count)
        let elapsed = Date().timeIntervalSince(started)
        if arguments.flag("json") {
            let summary: JSONValue = .object([
                ("fixes", .integer(judged)),
                ("skipped", .object(skipped.nonZero.map { ($0.reason.rawValue, JSONValue.integer($0.count)) })),
                ("events", .object(ZoneEvent.Kind.allCases.sorted { $0.rawValue < $1.rawValue }.map { ($0.rawValue, JSONValue.integer(counts[$0] ?? 0)) })),
                ("warnings", .array(judges.flatMap(\.configurationWarnings).map { .string($0.description) })),
                ("elapsed_s", .number(elapsed, .fixed(4))),
                ("fixes_per_s", .number(elapsed > 0 ? Double(judged) / elapsed : 0, .fixed(0))),
            ])
            console.out(JSONWriter(style: .compact).string(summary) + "\n")
        } else {
            if arguments.string("events") == nil { console.out(String(decoding: writer.bytes, as: UTF8.self)) }
            var s = "zones \(positionsPath): \(plural(judged, "fix", "fixes")) judged, events: "
            s += ZoneEvent.Kind.allCases.map { "\($0.rawValue) \(counts[$0] ?? 0)" }.joined(separator: ", ")
            if skipped.total > 0 {
                s += "; skipped rows: " + skipped.nonZero.map { "\($0.reason.rawValue) \($0.count) (first at line \(skipped.firstLine($0.reason)))" }.joined(separator: ", ")
            }
            (arguments.string("events") == nil ? console.err : console.out)(s + "\n")
        }
        return RunVerdict.check(command: "zones", input: source.name, results: judged, noun: ("fix", "fixes"),
                                rows: table.count + table.skipped.total, skipped: skipped, console: console)
    }
}
