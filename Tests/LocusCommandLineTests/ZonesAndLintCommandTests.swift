import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

@Suite("locus zones, lint and simulate")
struct ZonesAndLintCommandTests {
    @Test("zones on replay's positions gives the same events as replay itself")
    func zonesMatchesReplay() throws {
        let dir = TestPaths.temporaryDirectory()
        let site = TestPaths.fixture("sites/hall.json"), trace = TestPaths.fixture("traces/hall-walk.csv")
        let replay = CapturedRun(["replay", "--site", site, "--trace", trace, "--positions", dir + "/p.csv", "--events", dir + "/a.jsonl"])
        #expect(replay.status == 0, "\(replay.err)")
        let zones = CapturedRun(["zones", "--site", site, "--positions", dir + "/p.csv", "--events", dir + "/b.jsonl", "--json"])
        #expect(zones.status == 0, "\(zones.err)")
        let a = try String(contentsOfFile: dir + "/a.jsonl", encoding: .utf8)
        let b = try String(contentsOfFile: dir + "/b.jsonl", encoding: .utf8)
        #expect(!a.isEmpty)
        #expect(a == b)
        let summary = try JSONParser.parse(Array(zones.out.utf8))
        #expect(summary["events"]?["enter"]?.intValue ?? 0 > 0)
    }

    @Test("zones reads positions from any solver: t,x,y with optional columns, rows in any order")
    func zonesMinimalPositions() throws {
        let dir = TestPaths.temporaryDirectory()
        // The hall's entrance zone spans (0,0)–(4,3); inDist 3. One tag walks in, stays 6 s, leaves.
        var csv = "x,y,t\n"
        for k in 0..<40 { csv += "2.0,1.5,\(Double(k) * 0.25)\n" }
        for k in 40..<80 { csv += "30.0,20.0,\(Double(k) * 0.25)\n" }
        try csv.write(toFile: dir + "/p.csv", atomically: false, encoding: .utf8)
        let run = CapturedRun(["zones", "--site", TestPaths.fixture("sites/hall.json"), "--positions", dir + "/p.csv"])
        #expect(run.status == 0, "\(run.err)")
        let lines = run.out.split(separator: "\n").map(String.init)
        #expect(lines.first == #"{"t": 0.000, "tag": "tag", "floor": "1F", "zone": "entrance", "event": "enter"}"#)
        #expect(lines.contains(#"{"t": 5.000, "tag": "tag", "floor": "1F", "zone": "entrance", "event": "dwell", "dwellSeconds": 5}"#))
        #expect(lines.contains(#"{"t": 12.750, "tag": "tag", "floor": "1F", "zone": "entrance", "event": "exit"}"#))
    }

    @Test("lint reports warnings with exit 0 and errors with exit 2")
    func lint() throws {
        let dir = TestPaths.temporaryDirectory()
        let text = """
        {"floors": [{"id": "F", "locators": [{"address": 1, "x": 0, "y": 0}, {"address": 2, "x": 10, "y": 0}],
          "zones": [{"id": "z", "polygon": [{"x": 0, "y": 0}, {"x": 1, "y": 0}, {"x": 1, "y": 1}], "inCount": 0}]}]}
        """
        try text.write(toFile: dir + "/s.json", atomically: false, encoding: .utf8)
        let run = CapturedRun(["lint", "--site", dir + "/s.json", "--json"])
        #expect(run.status == 0)
        let v = try JSONParser.parse(Array(run.out.utf8))
        let keys = v["warnings"]?.arrayValue?.compactMap { $0["key"]?.stringValue } ?? []
        #expect(keys.contains("floor.tooFewLocators"))
        #expect(keys.contains("floor.noSessionId"))
        #expect(keys.contains("zone.inCount.zero"))
        let bad = CapturedRun(["lint", "--site", TestPaths.fixture("sites/invalid/duplicate-address.json"), "--json"])
        #expect(bad.status == 2)
        let e = try JSONParser.parse(Array(bad.out.utf8))
        #expect(e["errors"]?.arrayValue?.first?["code"]?.stringValue == "E3104")
        #expect(e["errors"]?.arrayValue?.first?["path"]?.stringValue == "floors[0].locators[2].address")
    }

    @Test("lint's summary and warnings count in English: 1 floor, 1 locator, 1 zone; 0 locators, 2 floors")
    func lintPlurals() throws {
        let dir = TestPaths.temporaryDirectory()
        let one = """
        {"floors": [{"id": "F", "sessionId": 1, "locators": [{"address": 1, "x": 0, "y": 0}],
          "zones": [{"id": "z", "polygon": [{"x": 0, "y": 0}, {"x": 1, "y": 0}, {"x": 1, "y": 1}]}]}]}
        """
        try one.write(toFile: dir + "/one.json", atomically: false, encoding: .utf8)
        let run = CapturedRun(["lint", "--site", dir + "/one.json"])
        #expect(run.status == 0)
        #expect(run.out.contains("(1 floor, 1 locator, 1 zone)"), "\(run.out)")
        #expect(run.out.contains("floor 'F' has 1 locator: at least 3 are needed"), "\(run.out)")
        #expect(!run.out.contains("1 locators") && !run.out.contains("1 zones") && !run.out.contains("1 floors"))

        let empty = #"{"floors": [{"id": "A", "sessionId": 1}, {"id": "B", "sessionId": 2}]}"#
        try empty.write(toFile: dir + "/empty.json", atomically: false, encoding: .utf8)
        let none = CapturedRun(["lint", "--site", dir + "/empty.json"])
        #expect(none.status == 0)
        #expect(none.out.contains("no errors, 2 warnings (2 floors, 0 locators, 0 zones)"), "\(none.out)")
        #expect(none.out.contains("floor 'A' has 0 locators:"), "\(none.out)")
    }

    @Test("simulate is deterministic for a seed and its trace replays")
    func simulate() throws {
        let dir = TestPaths.temporaryDirectory()
        let args = ["simulate", "--site", TestPaths.fixture("sites/hall.json"), "--tags", "2", "--duration", "20", "--nlos", "0.1", "--seed", "5"]
        #expect(CapturedRun(args + ["--trace", dir + "/a.csv", "--truth", dir + "/at.csv"]).status == 0)
        #expect(CapturedRun(args + ["--trace", dir + "/b.csv", "--truth", dir + "/bt.csv"]).status == 0)
        let a = try Data(contentsOf: URL(fileURLWithPath: dir + "/a.csv"))
        #expect(a == (try Data(contentsOf: URL(fileURLWithPath: dir + "/b.csv"))))
        let replay = CapturedRun(["replay", "--site", TestPaths.fixture("sites/hall.json"), "--trace", dir + "/a.csv",
                                  "--truth", dir + "/at.csv", "--json"])
        #expect(replay.status == 0)
        let v = try JSONParser.parse(Array(replay.out.utf8))
        #expect((v["rmse_m"]?.doubleValue ?? 1) < 0.15)
        #expect(v["fixes"]?.intValue == 160)
    }
}
