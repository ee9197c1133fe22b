import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
@testable import LocusCommandLine
@testable import LocusEvaluation
@testable import LocusReports
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// Counts elements and records the first parse error of an XML document.
final class XMLCheck: NSObject, XMLParserDelegate, @unchecked Sendable {
    var elements: [String: Int] = [:]
    var texts: [String] = []
    var error: Error?
    private var current = ""

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        elements[name, default: 0] += 1
        current = ""
    }
    func parser(_ parser: XMLParser, foundCharacters string: String) { current += string }
    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "text" { texts.append(current) }
        current = ""
    }
    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) { error = parseError }

    static func parse(_ data: Data) -> (ok: Bool, check: XMLCheck) {
        let check = XMLCheck()
        let parser = XMLParser(data: data)
        parser.delegate = check
        let ok = parser.parse()
        return (ok && check.error == nil, check)
    }
}

@Suite("locus geometry")
struct GeometryCommandTests {
    @Test("--json has the SPEC keys: cells, hdop_p50, hdop_p95, hdop_max, coverage, warnings")
    func jsonHasSpecKeys() throws {
        let run = CapturedRun(["geometry", "--site", TestPaths.fixture("sites/hall.json"), "--json"])
        #expect(run.status == 0, "\(run.err)")
        let summary = try JSONParser.parse(Array(run.out.utf8))
        #expect(summary["cells"]?.intValue == 80 * 50)
        for key in ["hdop_p50", "hdop_p95", "hdop_max", "coverage"] {
            #expect(summary[key]?.doubleValue != nil, "missing \(key)")
        }
        #expect(summary["warnings"]?.arrayValue != nil)
        let p50 = try #require(summary["hdop_p50"]?.doubleValue), p95 = try #require(summary["hdop_p95"]?.doubleValue)
        let max = try #require(summary["hdop_max"]?.doubleValue)
        #expect(0 < p50 && p50 <= p95 && p95 <= max)
        #expect((summary["coverage"]?.doubleValue ?? 0) > 0.95)
        #expect(run.out.hasSuffix("}\n") && run.out.split(separator: "\n").count == 1)
    }

    @Test("the poor-geometry fixture is warned: collinear locators and an HDOP > 5 area")
    func poorGeometryWarned() throws {
        let run = CapturedRun(["geometry", "--site", TestPaths.fixture("sites/poor-geometry.json"), "--json"])
        #expect(run.status == 0, "\(run.err)")
        let summary = try JSONParser.parse(Array(run.out.utf8))
        let warnings = (summary["warnings"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(warnings.contains { $0.hasPrefix("geometry.locatorsCollinear: ") }, "\(warnings)")
        #expect(warnings.contains { $0.hasPrefix("geometry.poorHDOP: ") && $0.contains("HDOP > 5") }, "\(warnings)")
        #expect((summary["hdop_max"]?.doubleValue ?? 0) > 5)
        #expect((summary["coverage"]?.doubleValue ?? 1) < 0.95)
        // The heatmap lists the same warnings under the drawing.
        let dir = TestPaths.temporaryDirectory()
        let drawn = CapturedRun(["geometry", "--site", TestPaths.fixture("sites/poor-geometry.json"), "--svg", dir + "/p.svg"])
        #expect(drawn.status == 0)
        let (ok, check) = XMLCheck.parse(Data(TestPaths.bytes(dir + "/p.svg")))
        #expect(ok)
        #expect(check.texts.contains { $0.hasPrefix("⚠ geometry.poorHDOP: ") }, "\(check.texts)")
    }

    @Test("--suggest on poor-geometry lowers p95 HDOP and says where and by how much")
    func suggestImproves() throws {
        let run = CapturedRun(["geometry", "--site", TestPaths.fixture("sites/poor-geometry.json"), "--suggest", "--json"])
        #expect(run.status == 0, "\(run.err)")
        let summary = try JSONParser.parse(Array(run.out.utf8))
        let s = try #require(summary["suggestion"])
        #expect(s["improves"]?.boolValue == true)
        let before = try #require(s["before"]?["hdop_p95"]?.doubleValue), after = try #require(s["after"]?["hdop_p95"]?.doubleValue)
        #expect(after < before / 2, "\(before) → \(after)")
        #expect(s["x"]?.doubleValue != nil && s["y"]?.doubleValue != nil)
        let text = CapturedRun(["geometry", "--site", TestPaths.fixture("sites/poor-geometry.json"), "--suggest"])
        #expect(text.out.contains("suggest: one more locator at ("), "\(text.out)")
        #expect(text.out.contains("p95 HDOP "))
    }

    @Test("the SVG is well-formed XML with heat cells, legend, locators, zones and the suggestion; bytes are deterministic")
    func svgWellFormedAndDeterministic() throws {
        let dir = TestPaths.temporaryDirectory()
        let site = TestPaths.fixture("sites/hall.json")
        let a = CapturedRun(["geometry", "--site", site, "--svg", dir + "/a.svg", "--suggest"])
        let b = CapturedRun(["geometry", "--site", site, "--svg", dir + "/b.svg", "--suggest", "--method", "kernel"])
        #expect(a.status == 0 && b.status == 0, "\(a.err) \(b.err)")
        let bytesA = TestPaths.bytes(dir + "/a.svg"), bytesB = TestPaths.bytes(dir + "/b.svg")
        #expect(!bytesA.isEmpty)
        #expect(bytesA == bytesB, "the kernel and batched paths must draw the same picture")
        let again = CapturedRun(["geometry", "--site", site, "--svg", dir + "/c.svg", "--suggest"])
        #expect(again.status == 0)
        #expect(TestPaths.bytes(dir + "/c.svg") == bytesA)

        let (ok, check) = XMLCheck.parse(Data(bytesA))
        #expect(ok, "\(String(describing: check.error))")
        #expect(check.elements["svg"] == 1)
        // Merged runs: far fewer rectangles than the 4,000 cells, but some.
        let rects = check.elements["rect", default: 0]
        #expect(rects > 20 && rects < 2000, "\(rects) rectangles")
        #expect(check.elements["polygon", default: 0] >= 7 + 2)   // 7 zones, the star, its legend swatch
        // The hall's HDOP (0.78–1.23) is all below the coverage limit: the legend says so instead of drawing the line.
        for label in ["0x9DD7", "0x9DDE", "Lounge", "Kitchen", "HDOP", "all ≤ 2: covered", "+1 suggested", "10 m", "x (m)"] {
            #expect(check.texts.contains(label), "missing text \(label)")
        }
        #expect(check.texts.contains { $0.hasPrefix("HDOP p50 ") && $0.contains("coverage") })
        #expect(a.out.contains("heatmap: \(dir)/a.svg"))
    }

    @Test("the batched path gives the same summary as the kernel path")
    func batchedSameSummary() throws {
        for fixture in ["hall", "corridor", "poor-geometry"] {
            let site = TestPaths.fixture("sites/\(fixture).json")
            let k = CapturedRun(["geometry", "--site", site, "--json"])
            let b = CapturedRun(["geometry", "--site", site, "--json", "--method", "kernel"])
            #expect(k.status == 0 && k.out == b.out, "\(fixture): \(k.out) vs \(b.out)")
        }
    }

    @Test("usage errors exit 2 and name the option or the floor")
    func usageErrors() {
        let site = TestPaths.fixture("sites/hall.json")
        let fine = CapturedRun(["geometry", "--site", site, "--grid", "0.01"])
        #expect(fine.status == 2)
        #expect(fine.err.contains("'--grid'") && fine.err.contains("coarser grid"), "\(fine.err)")
        let floor = CapturedRun(["geometry", "--site", site, "--floor", "9F"])
        #expect(floor.status == 2 && floor.err.contains("no floor '9F'"))
        let range = CapturedRun(["geometry", "--site", site, "--max-range", "-1"])
        #expect(range.status == 2 && range.err.contains("--max-range"))
        let missing = CapturedRun(["geometry", "--site", TestPaths.fixture("sites/nope.json")])
        #expect(missing.status == 2)
        let help = CapturedRun(["geometry", "--help"])
        #expect(help.status == 0 && help.out.contains("--suggest"))
    }

    @Test("a short maximum range leaves areas without a fix, reported with their bounding box")
    func shortRange() throws {
        let run = CapturedRun(["geometry", "--site", TestPaths.fixture("sites/corridor.json"), "--max-range", "6", "--json"])
        #expect(run.status == 0, "\(run.err)")
        let summary = try JSONParser.parse(Array(run.out.utf8))
        let warnings = (summary["warnings"]?.arrayValue ?? []).compactMap(\.stringValue)
        let corridor = CapturedRun(["geometry", "--site", TestPaths.fixture("sites/corridor.json"), "--max-range", "4", "--json"])
        let short = try JSONParser.parse(Array(corridor.out.utf8))
        let shortWarnings = (short["warnings"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(shortWarnings.contains { $0.hasPrefix("geometry.outOfRange: ") && $0.contains("(within x ") }, "\(shortWarnings)")
        #expect((short["coverage"]?.doubleValue ?? 1) < (summary["coverage"]?.doubleValue ?? 0) || warnings.count < shortWarnings.count)
    }

    @Test("axis ticks sit at whole metres when the floor origin is not one, and a good layout's suggestion is called marginal")
    func ticksAndMarginalSuggestion() throws {
        let dir = TestPaths.temporaryDirectory()
        let site = GeometryHeatmapTests.goodSite
        try site.write(toFile: dir + "/site.json", atomically: false, encoding: .utf8)
        let run = CapturedRun(["geometry", "--site", dir + "/site.json", "--svg", dir + "/g.svg", "--suggest"])
        #expect(run.status == 0, "\(run.err)")
        let (ok, check) = XMLCheck.parse(Data(TestPaths.bytes(dir + "/g.svg")))
        #expect(ok)
        for label in ["-3", "3", "0", "4"] { #expect(check.texts.contains(label), "missing tick \(label)") }
        // -3.5087 is not a whole metre: no tick may be labelled -4 (it would sit at -3.5).
        #expect(!check.texts.contains("-4"))
        #expect(run.out.contains("— marginal:"), "\(run.out)")
    }
}
