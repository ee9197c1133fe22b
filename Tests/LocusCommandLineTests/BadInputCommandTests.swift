import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// The bad-input catalogue of issue #9 (docs/robustness.md), through the `locus` command as a user
/// meets it: each class of bad input, the exit code, the message or the counts, and no NaN or
/// infinity in any output file. Inputs are in Fixtures/bad-input/ (see its README).
@Suite("Bad-input catalogue through the command line")
struct BadInputCommandTests {
    static let hall = TestPaths.fixture("sites/hall.json")

    /// Replays `trace` over the hall with `--json`; returns the run, the summary and the output files.
    static func replay(_ trace: String, filter: String = "none", extra: [String] = []) throws
        -> (run: CapturedRun, summary: JSONValue?, positions: String, events: String) {
        let dir = TestPaths.temporaryDirectory()
        let run = CapturedRun(["replay", "--site", hall, "--trace", TestPaths.fixture("bad-input/trace/" + trace),
                               "--positions", dir + "/p.csv", "--events", dir + "/e.jsonl", "--json", "--filter", filter] + extra)
        // The summary is printed whether the run succeeded (0) or yielded nothing (1).
        let summary = run.status != 2 ? try JSONParser.parse(Array(run.out.utf8)) : nil
        let positions = (try? String(contentsOfFile: dir + "/p.csv", encoding: .utf8)) ?? ""
        let events = (try? String(contentsOfFile: dir + "/e.jsonl", encoding: .utf8)) ?? ""
        return (run, summary, positions, events)
    }

    /// True when no output number is NaN or infinite (the writers would spell them nan/inf).
    static func isFinite(_ text: String) -> Bool {
        let lower = text.lowercased()
        return !lower.contains("nan") && !lower.contains("inf")
    }

    static func skipped(_ s: JSONValue?, _ reason: String) -> Int { s?["skipped"]?[reason]?.intValue ?? 0 }

    struct SiteCase: Sendable, CustomTestStringConvertible {
        var file: String
        var code: String
        var message: String
        var testDescription: String { file }
    }

    @Test("an invalid site file exits 2 with its code, the file, the JSON path or line, and what is wrong",
          arguments: [
            SiteCase(file: "truncated.json", code: "E5002", message: "truncated.json:25:54: unterminated string"),
            SiteCase(file: "empty.json", code: "E5002", message: "empty.json:1:1: expected a value, found end of input"),
            SiteCase(file: "binary.json", code: "E5002", message: "binary.json:1:1: expected a value, found byte 0x07"),
            SiteCase(file: "deep-nesting.json", code: "E5002", message: "nesting deeper than 256 levels"),
            SiteCase(file: "nan-literal.json", code: "E5002", message: "nan-literal.json:14:11: expected a value, found 'N'"),
            SiteCase(file: "huge-number.json", code: "E3105", message: "floors[0].locators[1].x: number 1e400 does not fit a double"),
            SiteCase(file: "wrong-type-x.json", code: "E3102", message: "floors[0].locators[1].x: expected a number, found a string"),
            SiteCase(file: "wrong-type-zones.json", code: "E3102", message: "floors[0].zones: expected an array, found an object"),
            SiteCase(file: "polygon-empty.json", code: "E3108", message: "polygon has 0 distinct vertices"),
            SiteCase(file: "polygon-two-vertices.json", code: "E3108", message: "polygon has 2 distinct vertices"),
            SiteCase(file: "polygon-collinear.json", code: "E3110", message: "polygon encloses no area"),
            SiteCase(file: "polygon-bow-tie.json", code: "E3109", message: "edge 0 meets edge 2"),
            SiteCase(file: "huge-but-finite.json", code: "E3112", message: "floors[0].zones[0].polygon[0].x"),
          ])
    func invalidSite(_ c: SiteCase) {
        let path = TestPaths.fixture("bad-input/site/" + c.file)
        for command in [["lint", "--site", path], ["replay", "--site", path, "--trace", TestPaths.fixture("traces/hall-walk.csv")],
                        ["zones", "--site", path, "--positions", TestPaths.fixture("traces/hall-walk-truth.csv")]] {
            let run = CapturedRun(command)
            let text = run.out + run.err // lint prints its report (errors included) on stdout
            #expect(run.status == 2, "\(command[0]) \(c.file): \(text)")
            #expect(text.contains("[\(c.code)]") || text.contains("\"code\": \"\(c.code)\""), "\(command[0]) \(c.file): \(text)")
            #expect(text.contains(c.message), "\(command[0]) \(c.file): \(text)")
        }
    }

    @Test("a trace that is not a trace (empty, binary, header without range_m) exits 2 naming the file")
    func unusableTrace() {
        for (file, code, message) in [("empty.csv", "E5004", "empty file"), ("binary.csv", "E5003", "header lacks required columns t, anchor, range_m"),
                                      ("missing-column.csv", "E5003", "header lacks required column range_m")] {
            let run = CapturedRun(["replay", "--site", Self.hall, "--trace", TestPaths.fixture("bad-input/trace/" + file)])
            #expect(run.status == 2, "\(file)")
            #expect(run.err.contains("[\(code)]") && run.err.contains(message) && run.err.contains(file), "\(run.err)")
        }
    }

    @Test("bad rows are skipped and counted by reason; the replay goes on and writes only finite numbers",
          arguments: ["none", "kalman"])
    func badRowsAreCounted(filter: String) throws {
        // (file, reason → count, fixes at least)
        let cases: [(String, [String: Int], Int)] = [
            ("non-finite.csv", ["non_finite": 80], 50),
            ("negative-and-zero-ranges.csv", ["negative_range": 50], 50),
            ("time-backwards.csv", ["time_backwards": 20], 50),
            ("unknown-locators.csv", ["unknown_anchor": 100, "invalid_anchor": 1], 50),
            ("wrong-types.csv", ["unparseable_number": 2, "invalid_anchor": 1, "missing_field": 2, "unknown_floor": 1], 50),
            ("huge-numbers.csv", ["non_finite": 1, "range_too_long": 16], 30),
            ("truncated.csv", [:], 50),
            ("duplicate-rows.csv", [:], 50),
            ("header-only.csv", [:], 0),
        ]
        for (file, reasons, minimumFixes) in cases {
            let r = try Self.replay(file, filter: filter)
            // A run that yields no fix is a failure at run time (exit 1), with the summary all the same.
            #expect(r.run.status == (minimumFixes > 0 ? 0 : 1), "\(file): \(r.run.err)")
            for (reason, count) in reasons { #expect(Self.skipped(r.summary, reason) == count, "\(file) \(reason)") }
            let total = r.summary?["skipped"]?.members?.reduce(0) { $0 + ($1.value.intValue ?? 0) } ?? -1
            #expect(total == reasons.values.reduce(0, +), "\(file): no other row is skipped")
            #expect((r.summary?["fixes"]?.intValue ?? -1) >= minimumFixes, "\(file) [\(filter)]")
            #expect(Self.isFinite(r.positions) && Self.isFinite(r.events), "\(file) [\(filter)]")
        }
    }

    @Test("duplicate rows count as rows but change no fix: the epoch keeps one range per locator")
    func duplicateRowsChangeNothing() throws {
        let once = try Self.replay("truncated.csv")
        let twice = try Self.replay("duplicate-rows.csv")
        #expect(twice.summary?["ranges"]?.intValue == 800)
        #expect(once.summary?["fixes"]?.intValue == twice.summary?["fixes"]?.intValue)
        let a = once.positions.split(separator: "\n").dropLast(), b = twice.positions.split(separator: "\n").dropLast()
        #expect(a == b, "only the last (truncated) row differs")
    }

    @Test("a single locator gives no fix: every epoch fails with E4001 and says so; nothing else breaks")
    func singleLocator() throws {
        let r = try Self.replay("single-locator.csv")
        #expect(r.run.status == 1)
        #expect(r.run.err.contains("error: no fixes from 50 usable rows: 50 epochs, none solved (E4001 too few ranges 50)"), "\(r.run.err)")
        #expect(r.summary?["fixes"]?.intValue == 0)
        #expect(r.summary?["failed_epochs"]?["E4001"]?.intValue == 50)
        let text = CapturedRun(["replay", "--site", Self.hall, "--trace", TestPaths.fixture("bad-input/trace/single-locator.csv"), "--filter", "none"])
        #expect(text.out.contains("epochs without a fix: E4001 too few ranges 50 of 50"))
        let lint = CapturedRun(["lint", "--site", TestPaths.fixture("bad-input/site/single-locator.json"), "--json"])
        #expect(lint.status == 0)
        #expect(lint.out.contains("floor.tooFewLocators"))
    }

    @Test("a tag outside the locators' hull still gets finite fixes, farther from truth, and no zone event",
          arguments: ["none", "kalman"])
    func outsideHull(filter: String) throws {
        let r = try Self.replay("outside-hull.csv", filter: filter)
        #expect(r.run.status == 0)
        #expect((r.summary?["fixes"]?.intValue ?? 0) >= 35)
        #expect(Self.isFinite(r.positions))
        // The tag stands at (70, 12): the fixes lie east of the hall (x > 39.7 m).
        let xs = r.positions.split(separator: "\n").dropFirst().compactMap { Double($0.split(separator: ",")[2]) }
        #expect(!xs.isEmpty && xs.allSatisfy { $0 > 39.7 }, "\(xs.prefix(5))")
        #expect(r.events.isEmpty)
    }

    @Test("a clock jump of a whole day: zones exit at last detection + outPeriod, fixes resume after the jump")
    func clockJump() throws {
        let r = try Self.replay("clock-jump.csv")
        #expect(r.run.status == 0)
        #expect(r.summary?["fixes"]?.intValue == 50)
        let events = r.events.split(separator: "\n").map { try? JSONParser.parse(Array($0.utf8)) }
        let exits = events.filter { $0?["event"]?.stringValue == "exit" }.compactMap { $0?["t"]?.doubleValue }
        #expect(!exits.isEmpty)
        #expect(exits.allSatisfy { $0 < 100 }, "the exits are stamped before the jump: \(exits)")
        #expect(Self.isFinite(r.positions) && Self.isFinite(r.events))
    }

    @Test("100,000 zones load, lint and judge (the zone grid keeps a fix's cost small)")
    func hundredThousandZones() throws {
        let dir = TestPaths.temporaryDirectory()
        var site = #"{"floors": [{"id": "1F", "locators": [{"address": 1, "x": 0, "y": 0, "z": 3}, {"address": 2, "x": 400, "y": 0, "z": 3}, {"address": 3, "x": 400, "y": 250, "z": 3}], "zones": ["#
        var n = 0
        for i in 0..<400 {
            for j in 0..<250 {
                let x = Double(i), y = Double(j)
                if n > 0 { site += "," }
                site += #"{"id": "z\#(n)", "inDist": 0.2, "polygon": [{"x": \#(x + 0.1), "y": \#(y + 0.1)}, {"x": \#(x + 0.9), "y": \#(y + 0.1)}, {"x": \#(x + 0.9), "y": \#(y + 0.9)}, {"x": \#(x + 0.1), "y": \#(y + 0.9)}]}"#
                n += 1
            }
        }
        site += "]}]}"
        try site.write(toFile: dir + "/site.json", atomically: false, encoding: .utf8)
        // One tag stands 2 s in the middle of zone z(100·250 + 100) = z25100, then leaves the area.
        var csv = "t,tag,x,y\n"
        for k in 0..<8 { csv += "\(Double(k) * 0.25),T1,100.5,100.5\n" }
        for k in 8..<40 { csv += "\(Double(k) * 0.25),T1,500,500\n" }
        try csv.write(toFile: dir + "/p.csv", atomically: false, encoding: .utf8)
        let run = CapturedRun(["zones", "--site", dir + "/site.json", "--positions", dir + "/p.csv", "--events", dir + "/e.jsonl"])
        #expect(run.status == 0, "\(run.err.prefix(300))")
        let events = try String(contentsOfFile: dir + "/e.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(events.count == 2)
        #expect(events.first?.contains(#""zone": "z25100", "event": "enter""#) == true)
        #expect(events.last?.contains(#""zone": "z25100", "event": "exit""#) == true)
    }
}
