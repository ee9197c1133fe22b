import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// End-to-end runs compared byte for byte with the golden files in Fixtures/golden, which
/// `scripts/regenerate-fixtures` writes (review its diff: a changed golden file is a changed
/// behaviour). Summaries are compared without their timing fields.
@Suite("Golden outputs")
struct GoldenOutputTests {
    static let golden = TestPaths.fixture("golden")

    /// A --json summary without `elapsed_s` and `fixes_per_s`, as the regeneration script writes it.
    static func untimed(_ json: String) throws -> JSONValue {
        let v = try JSONParser.parse(Array(json.utf8))
        return .object((v.members ?? []).filter { $0.key != "elapsed_s" && $0.key != "fixes_per_s" }.map { ($0.key, $0.value) })
    }

    static func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    @Test("replay gives the golden events, positions and summaries", arguments: [("hall-walk", "hall"), ("corridor-walk", "corridor")])
    func replay(_ trace: String, _ site: String) throws {
        let dir = TestPaths.temporaryDirectory()
        let common = ["--site", TestPaths.fixture("sites/\(site).json"), "--trace", TestPaths.fixture("traces/\(trace).csv"),
                      "--truth", TestPaths.fixture("traces/\(trace)-truth.csv"), "--json"]
        let filtered = CapturedRun(["replay"] + common + ["--events", dir + "/e.jsonl"])
        #expect(filtered.status == 0, "\(filtered.err)")
        #expect(try Self.read(dir + "/e.jsonl") == Self.read("\(Self.golden)/\(trace).events.jsonl"))
        #expect(try Self.untimed(filtered.out) == JSONParser.parse(Array(Self.read("\(Self.golden)/\(trace).summary.json").utf8)))

        let raw = CapturedRun(["replay"] + common + ["--filter", "none", "--positions", dir + "/p.csv"])
        #expect(raw.status == 0, "\(raw.err)")
        #expect(try Self.read(dir + "/p.csv") == Self.read("\(Self.golden)/\(trace).raw-positions.csv"))
        #expect(try Self.untimed(raw.out) == JSONParser.parse(Array(Self.read("\(Self.golden)/\(trace).raw-summary.json").utf8)))

        let zones = CapturedRun(["zones", "--site", TestPaths.fixture("sites/\(site).json"), "--positions",
                                 "\(Self.golden)/\(trace).raw-positions.csv", "--events", dir + "/z.jsonl"])
        #expect(zones.status == 0, "\(zones.err)")
        #expect(try Self.read(dir + "/z.jsonl") == Self.read("\(Self.golden)/\(trace).raw-zones.events.jsonl"))
    }

    @Test("geometry and lint give the golden summaries", arguments: ["hall", "corridor", "poor-geometry"])
    func geometryAndLint(_ site: String) throws {
        for command in ["geometry", "lint"] {
            let run = CapturedRun([command, "--site", TestPaths.fixture("sites/\(site).json"), "--json"])
            #expect(run.status == 0, "\(run.err)")
            #expect(try Self.untimed(run.out) == JSONParser.parse(Array(Self.read("\(Self.golden)/\(site).\(command).json").utf8)))
        }
    }
}
