import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// `locus lint` end to end: every error of a file, and the geometry warnings.
@Suite("locus lint: every error and the geometry warnings")
struct LintCommandTests {
    /// The nine faults of `invalid/multiple-errors.json`: (line, column, JSON path, code).
    static let plantedErrors: [(Int, Int, String, String)] = [
        (7, 17, "floors[0].widthM", "E3106"), (12, 21, "floors[0].locators[1].address", "E3111"),
        (13, 36, "floors[0].locators[2].x", "E3102"), (14, 21, "floors[0].locators[3].address", "E3104"),
        (21, 22, "floors[0].zones[0].inCount", "E3112"), (24, 17, "floors[0].zones[1].id", "E3103"),
        (34, 9, "floors[1].locators[0].y", "E3101"), (37, 32, "floors[1].zones[0].polygon", "E3108"),
        (31, 13, "floors[1].id", "E3103"),
    ]

    /// Writes `text` as a site file and lints it with `--json`: exit status and the parsed summary.
    static func lintJSON(_ text: String) throws -> (status: Int32, summary: JSONValue, text: String) {
        let path = TestPaths.temporaryDirectory() + "/site.json"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let run = CapturedRun(["lint", "--site", path, "--json"])
        let plain = CapturedRun(["lint", "--site", path])
        return (run.status, try JSONParser.parse(Array(run.out.utf8)), plain.out)
    }

    /// The (key, path) of each warning of a `--json` summary.
    static func warnings(_ summary: JSONValue) -> [String] {
        (summary["warnings"]?.arrayValue ?? []).map { "\($0["key"]?.stringValue ?? "?") \($0["path"]?.stringValue ?? "?")" }
    }

    @Test("a file with nine faults: lint lists every one with its file, line, column, JSON path and code, in text and --json, and exits 2")
    func everyError() throws {
        let path = TestPaths.fixture("sites/invalid/multiple-errors.json")
        let text = CapturedRun(["lint", "--site", path])
        #expect(text.status == 2)
        let lines = text.out.split(separator: "\n").map(String.init)
        #expect(lines.count == Self.plantedErrors.count + 1, "\(text.out)")
        for ((line, column, jsonPath, code), printed) in zip(Self.plantedErrors, lines) {
            #expect(printed.hasPrefix("error: \(path):\(line):\(column): \(jsonPath): "), "\(printed)")
            #expect(printed.hasSuffix("[\(code)]"), "\(printed)")
        }
        #expect(lines.last == "\(path): 9 errors; warnings are checked once the site is valid")

        let json = CapturedRun(["lint", "--site", path, "--json"])
        #expect(json.status == 2)
        let summary = try JSONParser.parse(Array(json.out.utf8))
        let errors = summary["errors"]?.arrayValue ?? []
        #expect(errors.count == Self.plantedErrors.count)
        for ((line, column, jsonPath, code), e) in zip(Self.plantedErrors, errors) {
            #expect(e["code"]?.stringValue == code)
            #expect(e["path"]?.stringValue == jsonPath)
            #expect(e["line"]?.intValue == line && e["column"]?.intValue == column)
            #expect(e["file"]?.stringValue == path)
            #expect(e["message"]?.stringValue?.isEmpty == false)
        }
        #expect(summary["warnings"]?.arrayValue?.isEmpty == true)

        // Other commands still stop at the first.
        let zones = CapturedRun(["zones", "--site", path, "--positions", TestPaths.fixture("traces/hall-walk-truth.csv")])
        #expect(zones.status == 2)
        #expect(zones.err.contains("\(path):7:17: floors[0].widthM:") && !zones.err.contains("E3111"), "\(zones.err)")
    }

    @Test("a locator at x = 500 m on a 40 m floor and exactly collinear locators are warned (they were not)")
    func locatorOutsideAndCollinear() throws {
        let r = try Self.lintJSON("""
        {"floors": [{"id": "F", "sessionId": 1, "widthM": 40, "heightM": 25, "locators": [
          {"address": 1, "x": 0, "y": 5, "z": 2.5}, {"address": 2, "x": 10, "y": 5, "z": 2.5},
          {"address": 3, "x": 20, "y": 5, "z": 2.5}, {"address": 4, "x": 500, "y": 5, "z": 2.5}]}]}
        """)
        #expect(r.status == 0)
        #expect(Self.warnings(r.summary) == ["floor.locatorsCollinear floors[0]", "locator.outsideFloor floors[0].locators[3]"])
        #expect(r.text.contains(": floors[0].locators[3]: warning: locator.outsideFloor: locator 0x0004 at (500.00, 5.00) is outside floor 'F' (0.00…40.00 × 0.00…25.00 m)"), "\(r.text)")
        #expect(r.text.contains("the 4 locators are collinear: they lie within 0.000 m of a line (the floor is 25.0 m across it)"), "\(r.text)")
        #expect(r.text.contains("no errors, 2 warnings"))
    }

    @Test("collinear layouts as surveys write them (to the millimetre, on a diagonal) and nearly collinear ones are warned")
    func collinearVariants() throws {
        // On the line y = 2.9 + 1.457·(x − 23.248), rounded to the millimetre: the DOP at the
        // centroid is finite (rcond ≈ 1e-9), which is why the old check passed it.
        let diagonal = try Self.lintJSON("""
        {"floors": [{"id": "F", "sessionId": 1, "widthM": 40, "heightM": 25, "tagHeightM": 1.1, "locators": [
          {"address": 1, "x": 23.248, "y": 2.9, "z": 3.0}, {"address": 2, "x": 29.622, "y": 12.187, "z": 3.0},
          {"address": 3, "x": 30.207, "y": 13.04, "z": 3.0}, {"address": 4, "x": 31.072, "y": 14.299, "z": 0.3},
          {"address": 5, "x": 35.434, "y": 20.655, "z": 2.5}]}]}
        """)
        #expect(Self.warnings(diagonal.summary) == ["floor.locatorsCollinear floors[0]"], "\(diagonal.text)")
        #expect(diagonal.text.contains("are collinear: they lie within 0.00"), "\(diagonal.text)")

        // Nearly collinear: within 0.1 m of a line on an 8 m deep room.
        let poor = CapturedRun(["lint", "--site", TestPaths.fixture("sites/poor-geometry.json")])
        #expect(poor.status == 0)
        #expect(poor.out.contains("floors[0]: warning: floor.locatorsCollinear: floor 'lab': the 5 locators are nearly collinear: they lie within 0.105 m of a line (the floor is 8.0 m across it)"), "\(poor.out)")

        // A floor without extent: measured against the layout's own length (here 30 m, 0.2 m thick).
        let bare = try Self.lintJSON("""
        {"floors": [{"id": "F", "sessionId": 1, "locators": [
          {"address": 1, "x": 0, "y": 0}, {"address": 2, "x": 10, "y": 0.2}, {"address": 3, "x": 30, "y": 0}]}]}
        """)
        #expect(Self.warnings(bare.summary) == ["floor.locatorsCollinear floors[0]"], "\(bare.text)")
        #expect(bare.text.contains("(it is 30.0 m long)"), "\(bare.text)")

        // Locators all within 0.5 m of one another: clustered (and not also collinear).
        let cluster = try Self.lintJSON("""
        {"floors": [{"id": "F", "sessionId": 1, "widthM": 40, "heightM": 25, "locators": [
          {"address": 1, "x": 10, "y": 10, "z": 2.5}, {"address": 2, "x": 10.3, "y": 10, "z": 2.5},
          {"address": 3, "x": 10.1, "y": 10.2, "z": 2.5}]}]}
        """)
        #expect(Self.warnings(cluster.summary) == ["floor.locatorsClustered floors[0]"], "\(cluster.text)")
        #expect(cluster.text.contains("the 3 locators all lie within 0.30 m of one another (< 0.50 m)"), "\(cluster.text)")

        // A sound layout on the same floor gives none of these.
        let sound = try Self.lintJSON("""
        {"floors": [{"id": "F", "sessionId": 1, "widthM": 40, "heightM": 25, "locators": [
          {"address": 1, "x": 0, "y": 0, "z": 2.5}, {"address": 2, "x": 40, "y": 0, "z": 2.5},
          {"address": 3, "x": 20, "y": 25, "z": 2.5}, {"address": 4, "x": 40, "y": 25, "z": 2.5}]}]}
        """)
        #expect(Self.warnings(sound.summary).isEmpty, "\(sound.text)")
    }

    @Test("zones outside the floor, beyond every locator's range, and partly outside coverage are warned, each at its path")
    func zoneReach() throws {
        let r = try Self.lintJSON("""
        {"floors": [{"id": "F", "sessionId": 1, "widthM": 40, "heightM": 25, "tagHeightM": 1.1, "locators": [
          {"address": 1, "x": 0, "y": 0, "z": 2.5}, {"address": 2, "x": 20, "y": 0, "z": 2.5},
          {"address": 3, "x": 0, "y": 20, "z": 2.5}, {"address": 4, "x": 20, "y": 20, "z": 2.5}],
         "zones": [
          {"id": "inside", "polygon": [{"x": 5, "y": 5}, {"x": 10, "y": 5}, {"x": 10, "y": 10}, {"x": 5, "y": 10}]},
          {"id": "far", "polygon": [{"x": 100, "y": 100}, {"x": 104, "y": 100}, {"x": 104, "y": 103}, {"x": 100, "y": 103}]},
          {"id": "long", "polygon": [{"x": 5, "y": 5}, {"x": 38, "y": 5}, {"x": 38, "y": 8}, {"x": 5, "y": 8}]},
          {"id": "overhang", "polygon": [{"x": 15, "y": 15}, {"x": 45, "y": 15}, {"x": 45, "y": 18}, {"x": 15, "y": 18}]}]}]}
        """)
        #expect(r.status == 0)
        #expect(Self.warnings(r.summary) == [
            "zone.outsideFloor floors[0].zones[1]", "zone.beyondRange floors[0].zones[1]",
            "zone.outsideCoverage floors[0].zones[2]",
            "zone.partlyOutsideFloor floors[0].zones[3]", "zone.outsideCoverage floors[0].zones[3]",
        ], "\(r.text)")
        #expect(r.text.contains("zone 'far' is beyond the range of every locator: the nearest, 0x0004, is 113.1 m away (range 30.0 m)"), "\(r.text)")
        #expect(r.text.contains("zone 'long' is partly outside positioning coverage: at 2 of its 5 check points (vertices and centroid) positions cannot be determined: (38.00, 5.00) has 2 locators within 30.0 m"), "\(r.text)")
        #expect(!r.text.contains("zone.noLocatorCoverage"), "beyondRange stands in for it")
    }

    @Test("where the locators in range are collinear as seen from a zone, the zone is outside coverage (degenerate geometry)")
    func zoneOnCollinearLine() throws {
        let r = try Self.lintJSON("""
        {"floors": [{"id": "F", "sessionId": 1, "widthM": 40, "heightM": 25, "tagHeightM": 2.5, "locators": [
          {"address": 1, "x": 0, "y": 5, "z": 2.5}, {"address": 2, "x": 10, "y": 5, "z": 2.5}, {"address": 3, "x": 20, "y": 5, "z": 2.5}],
         "zones": [{"id": "on-line", "polygon": [{"x": 2, "y": 5}, {"x": 8, "y": 5}, {"x": 8, "y": 9}, {"x": 2, "y": 9}]}]}]}
        """)
        #expect(Self.warnings(r.summary) == ["floor.locatorsCollinear floors[0]", "zone.outsideCoverage floors[0].zones[0]"], "\(r.text)")
        #expect(r.text.contains("(2.00, 5.00) sees its 3 locators in range in a degenerate geometry"), "\(r.text)")
    }

    @Test("the valid fixtures keep their warnings: hall and corridor none, poor-geometry its collinear layout")
    func fixturesStayQuiet() throws {
        for (site, expected) in [("hall", [String]()), ("corridor", []), ("poor-geometry", ["floor.locatorsCollinear floors[0]"])] {
            let run = CapturedRun(["lint", "--site", TestPaths.fixture("sites/\(site).json"), "--json"])
            #expect(run.status == 0)
            #expect(Self.warnings(try JSONParser.parse(Array(run.out.utf8))) == expected, "\(site): \(run.out)")
        }
    }

    @Test("--help documents every warning key lint can print")
    func helpListsKeys() {
        let help = CapturedRun(["lint", "--help"]).out
        for key in ["floor.tooFewLocators", "floor.noSessionId", "floor.locatorsClustered", "floor.locatorsCollinear",
                    "floor.locatorsCoplanar", "locator.outsideFloor", "zone.inCount.zero", "zone.inCountInterval.tooShort",
                    "zone.outPeriod.tooShort", "zone.outsideFloor", "zone.partlyOutsideFloor", "zone.noLocatorCoverage",
                    "zone.beyondRange", "zone.outsideCoverage"] {
            #expect(help.contains(key), "\(key) missing from lint --help")
        }
    }
}
