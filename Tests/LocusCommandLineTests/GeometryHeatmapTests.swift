import Foundation
@testable import LocusCommandLine
@testable import LocusEvaluation
@testable import LocusReports
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// The `locus geometry --svg` heatmap read back as XML: cells tile the map, the colour scale fits the
/// data, `--accuracy` draws centimetres, off-floor items are drawn at the edge, labels do not overlap,
/// warnings wrap, the title's colour gives the verdict — and each drawing renders (rsvg-convert) to a
/// non-blank PNG without white seams.
@Suite("locus geometry heatmap")
struct GeometryHeatmapTests {
    /// The CUHK-SZ test area's layout (8 locators round a 8 × 7 m room): HDOP 0.70–0.83 everywhere.
    static let goodSite = """
    {"building": {"id": "b"}, "floors": [{"id": "F1", "originX": -3.9858, "originY": -3.5087, "widthM": 8.091, "heightM": 7.02,
      "tagHeightM": 0.964, "locators": [
        {"address": 0, "x": -3.42, "y": 3.0, "z": 1.04}, {"address": 1, "x": 0.0, "y": 3.01, "z": 1.04},
        {"address": 2, "x": 3.6, "y": 2.98, "z": 1.05}, {"address": 3, "x": 3.6, "y": 0.0, "z": 1.04},
        {"address": 4, "x": 3.57, "y": -3.0, "z": 1.04}, {"address": 5, "x": 0.0, "y": -2.97, "z": 1.04},
        {"address": 6, "x": -3.47, "y": -2.96, "z": 1.04}, {"address": 7, "x": -3.49, "y": 0.0, "z": 1.05}]}]}
    """

    /// A 20 × 12 m room with two locators and two zones off the floor, and one zone partly off it.
    static let offFloorSite = """
    {"building": {"id": "b", "name": "Off-floor test"}, "floors": [{"id": "F1", "widthM": 20, "heightM": 12, "tagHeightM": 1.0,
      "locators": [
        {"address": "0x3001", "x": 0.5, "y": 0.5, "z": 2.5}, {"address": "0x3002", "x": 19.5, "y": 0.5, "z": 2.5},
        {"address": "0x3003", "x": 19.5, "y": 11.5, "z": 2.5}, {"address": "0x3004", "x": 0.5, "y": 11.5, "z": 2.5},
        {"address": "0x3005", "x": 26.0, "y": 6.0, "z": 2.5}, {"address": "0x3006", "x": 10.0, "y": -3.0, "z": 2.5}],
      "zones": [
        {"id": "inside", "name": "Inside", "polygon": [{"x": 4, "y": 4}, {"x": 8, "y": 4}, {"x": 8, "y": 8}, {"x": 4, "y": 8}]},
        {"id": "yard", "name": "Yard", "polygon": [{"x": 22, "y": 1}, {"x": 25, "y": 1}, {"x": 25, "y": 4}, {"x": 22, "y": 4}]},
        {"id": "porch", "name": "Porch", "polygon": [{"x": 14, "y": 9}, {"x": 23, "y": 9}, {"x": 23, "y": 11}, {"x": 14, "y": 11}]},
        {"id": "cellar", "name": "Cellar", "polygon": [{"x": -5, "y": -5}, {"x": -3, "y": -5}, {"x": -3, "y": -3}]}]}]}
    """

    /// Writes `json` as a site file in `dir`; its path.
    static func site(_ json: String, in dir: String, name: String = "site.json") throws -> String {
        try json.write(toFile: dir + "/" + name, atomically: false, encoding: .utf8)
        return dir + "/" + name
    }

    /// Runs `locus geometry --site site --svg …` with `extra` arguments; the parsed drawing and its path.
    static func draw(_ site: String, _ extra: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws -> (SVGModel, String) {
        let path = TestPaths.temporaryDirectory() + "/map.svg"
        let run = CapturedRun(["geometry", "--site", site, "--svg", path] + extra)
        #expect(run.status == 0, "\(run.err)", sourceLocation: sourceLocation)
        let svg = try #require(SVGModel.parse(TestPaths.bytes(path)), "not well-formed XML", sourceLocation: sourceLocation)
        return (svg, path)
    }

    /// Renders `path` with rsvg-convert when installed and checks the PNG is a real drawing (ink,
    /// colours) whose map has no white seam; prints a message and passes when it is not installed.
    static func checkRendering(_ path: String, _ svg: SVGModel, sourceLocation: SourceLocation = #_sourceLocation) {
        guard RenderedPNG.isAvailable else {
            print("skipped: \(RenderedPNG.rsvgConvert) not installed (scripts/setup installs librsvg2-bin); rendering of \(path) not checked")
            return
        }
        guard let png = RenderedPNG.render(svgPath: path) else {
            Issue.record("rsvg-convert could not render \(path) to a decodable PNG", sourceLocation: sourceLocation)
            return
        }
        #expect(png.width == Int(svg.size.width) && png.height == Int(svg.size.height), sourceLocation: sourceLocation)
        #expect(png.inkFraction > 0.15, "nearly blank: \(png.inkFraction)", sourceLocation: sourceLocation)
        #expect(png.colourCount > 20, "\(png.colourCount) colours", sourceLocation: sourceLocation)
        if let map = svg.mapOutline, let x = map.number("x"), let y = map.number("y"), let w = map.number("width"), let h = map.number("height") {
            let seams = png.whiteSeams(x: x, y: y, width: w, height: h)
            #expect(seams.isEmpty, "white seams in the map of \(path): \(seams.prefix(5))", sourceLocation: sourceLocation)
        }
    }

    /// Numbers at the start of the legend's texts (tick labels), value units.
    static func legendNumbers(_ svg: SVGModel) -> [Double] {
        svg.all("text", in: "legend").compactMap { e in e.text.split(separator: " ").first.flatMap { Double($0) } }
    }

    @Test("heat cells tile the map: edges meet in the written numbers, whole pixels, every pixel covered once",
          arguments: ["good", "hall", "cuhk"], [0.5, 0.37, 0.25, 0.1])
    func cellsTile(_ name: String, _ grid: Double) throws {
        let dir = TestPaths.temporaryDirectory()
        let site: String
        switch name {
        case "good": site = try Self.site(Self.goodSite, in: dir)
        case "hall": site = TestPaths.fixture("sites/hall.json")
        default:
            guard let dataset = TestPaths.dataset("cuhksz-planar-uwb") else {
                print("skipped: the CUHK-SZ dataset is not beside the repository")
                return
            }
            site = dataset + "/site.json"
        }
        let (svg, path) = try Self.draw(site, ["--grid", String(grid)])
        let map = try #require(svg.mapOutline)
        let left = try #require(map.hundredths("x")), top = try #require(map.hundredths("y"))
        let right = left + (try #require(map.hundredths("width"))), bottom = top + (try #require(map.hundredths("height")))
        struct R { var x0, y0, x1, y1: Int }
        let rects = try svg.all("rect", in: "cells").map { e in
            let x = try #require(e.hundredths("x")), y = try #require(e.hundredths("y"))
            return R(x0: x, y0: y, x1: x + (try #require(e.hundredths("width"))), y1: y + (try #require(e.hundredths("height"))))
        }
        #expect(rects.count > 3)
        // Each rectangle's right edge is the map's or some neighbour's left edge beside it (same for rows).
        for r in rects {
            #expect(r.x1 == right || rects.contains { $0.x0 == r.x1 && $0.y0 < r.y1 && r.y0 < $0.y1 }, "gap right of \(r)")
            #expect(r.y1 == bottom || rects.contains { $0.y0 == r.y1 && $0.x0 < r.x1 && r.x0 < $0.x1 }, "gap below \(r)")
            #expect(r.x0 % 100 == 0 && r.y0 % 100 == 0 && r.x1 % 100 == 0 && r.y1 % 100 == 0, "not on whole pixels: \(r)")
        }
        // Every pixel of the map covered exactly once.
        let w = (right - left) / 100, h = (bottom - top) / 100
        var covered = [UInt8](repeating: 0, count: w * h)
        for r in rects {
            for y in (r.y0 - top) / 100..<(r.y1 - top) / 100 { for x in (r.x0 - left) / 100..<(r.x1 - left) / 100 { covered[y * w + x] &+= 1 } }
        }
        #expect(covered.allSatisfy { $0 == 1 }, "\(covered.filter { $0 == 0 }.count) pixels uncovered, \(covered.filter { $0 > 1 }.count) covered twice")
        if grid == 0.5 { Self.checkRendering(path, svg) }
    }

    @Test("the legend fits the data: a good layout's scale stays below 5 without the 'very poor' band; the coverage line is drawn when in range")
    func legendAdapts() throws {
        let dir = TestPaths.temporaryDirectory()
        let (good, goodPath) = try Self.draw(try Self.site(Self.goodSite, in: dir))
        let numbers = Self.legendNumbers(good)
        let top = try #require(numbers.max()), bottom = try #require(numbers.min())
        #expect(top < 5 && top <= 1, "legend max \(top)")
        #expect(bottom >= 0.5 && top - bottom < 0.5, "legend \(bottom)…\(top): fitted to HDOP 0.70–0.83")
        #expect(!good.all("text", in: "legend").contains { $0.text.contains("very poor") })
        #expect(good.all("line", in: "legend").allSatisfy { $0.attributes["class"] != "coverage-limit" }, "2 is out of this range")
        #expect(good.all("text", in: "legend").contains { $0.text.hasPrefix("all ≤ 2") })
        // More than one colour on the map (it was one flat green).
        #expect(Set(good.all("rect", in: "cells").compactMap { $0.attributes["fill"] }).count >= 5)
        Self.checkRendering(goodPath, good)

        let (corridor, corridorPath) = try Self.draw(TestPaths.fixture("sites/corridor.json"))
        #expect(corridor.all("line", in: "legend").contains { $0.attributes["class"] == "coverage-limit" })
        #expect(corridor.all("text", in: "legend").contains { $0.text == "coverage limit" })
        #expect(try #require(Self.legendNumbers(corridor).max()) < 5)
        Self.checkRendering(corridorPath, corridor)

        let (poor, poorPath) = try Self.draw(TestPaths.fixture("sites/poor-geometry.json"))
        let texts = poor.all("text", in: "legend").map(\.text)
        #expect(texts.contains("> 5  very poor") && texts.contains { $0.hasSuffix("coverage limit") } && texts.contains { $0.hasSuffix("poor") },
                "\(texts)")
        #expect(poor.all("line", in: "legend").contains { $0.attributes["class"] == "coverage-limit" })
        Self.checkRendering(poorPath, poor)
    }

    @Test("--accuracy 0.1 draws centimetres: legend in cm, title, text and --json with accuracy")
    func accuracyInCentimetres() throws {
        let dir = TestPaths.temporaryDirectory()
        let site = try Self.site(Self.goodSite, in: dir)
        let (svg, path) = try Self.draw(site, ["--accuracy", "0.1"])
        let legend = svg.all("text", in: "legend").map(\.text)
        #expect(legend.contains("accuracy (cm)"), "\(legend)")
        #expect(legend.contains { $0.contains("HDOP × range σ 10.0 cm") })
        let numbers = Self.legendNumbers(svg)
        #expect(numbers.count >= 3 && numbers.allSatisfy { (6.5...9).contains($0) }, "cm ticks for HDOP 0.70–0.83 × 10 cm: \(numbers)")
        #expect(svg.all("text").contains { $0.text.hasPrefix("accuracy p50 7.") && $0.text.contains(" cm") })
        Self.checkRendering(path, svg)

        let json = CapturedRun(["geometry", "--site", site, "--accuracy", "0.1", "--json"])
        #expect(json.status == 0, "\(json.err)")
        let summary = try JSONParser.parse(Array(json.out.utf8))
        let accuracy = try #require(summary["accuracy"])
        let p50 = try #require(summary["hdop_p50"]?.doubleValue)
        #expect(abs((accuracy["p50_cm"]?.doubleValue ?? 0) - 10 * p50) < 0.01)
        #expect(accuracy["range_sigma_m"]?.doubleValue == 0.1 && accuracy["coverage_limit_cm"]?.doubleValue == 20)
        #expect(accuracy["p95_cm"]?.doubleValue != nil && accuracy["max_cm"]?.doubleValue != nil)
        let plain = CapturedRun(["geometry", "--site", site, "--json"])
        #expect(try JSONParser.parse(Array(plain.out.utf8))["accuracy"] == nil, "accuracy only when asked for")
        let text = CapturedRun(["geometry", "--site", site, "--accuracy", "0.1"])
        #expect(text.out.contains("  accuracy   p50 7."), "\(text.out)")
        let bad = CapturedRun(["geometry", "--site", site, "--accuracy", "0"])
        #expect(bad.status == 2 && bad.err.contains("--accuracy"), "\(bad.err)")
    }

    @Test("locators and zones off the floor are drawn at its edge with their names and real positions")
    func offFloorDrawn() throws {
        let dir = TestPaths.temporaryDirectory()
        let (svg, path) = try Self.draw(try Self.site(Self.offFloorSite, in: dir))
        let labels = svg.all("text", in: "labels").map(\.text)
        for expected in ["0x3005 off floor at (26.00, 6.00) m", "0x3006 off floor at (10.00, -3.00) m", "Yard: off floor, centre (23.5, 2.5) m",
                         "Porch (partly off floor)", "Inside", "0x3001"] {
            #expect(labels.contains(expected), "missing '\(expected)' in \(labels)")
        }
        #expect(labels.contains { $0.hasPrefix("Cellar: off floor, centre (") })
        // The markers (purple triangles) lie on the map, and the partly-off zone is drawn clipped to it.
        let map = try #require(svg.mapOutline)
        let x0 = try #require(map.number("x")), y0 = try #require(map.number("y"))
        let x1 = x0 + (try #require(map.number("width"))), y1 = y0 + (try #require(map.number("height")))
        func points(_ e: SVGModel.Element) -> [(Double, Double)] {
            (e.attributes["points"] ?? "").split(separator: " ").compactMap { p in
                let xy = p.split(separator: ",").compactMap { Double($0) }
                return xy.count == 2 ? (xy[0], xy[1]) : nil
            }
        }
        let markers = svg.all("polygon").filter { $0.attributes["fill"] == GeometryHeatmap.offFloorColour && !$0.inGroup("legend") }
        #expect(markers.count == 4, "two locators, two zones: \(markers.count)")
        let zones = svg.all("polygon").filter { $0.attributes["stroke-dasharray"] != nil && !$0.inGroup("legend") }
        #expect(zones.count == 2, "Inside and the on-floor part of Porch")
        for e in markers + zones {
            for (x, y) in points(e) { #expect(x >= x0 - 1 && x <= x1 + 1 && y >= y0 - 1 && y <= y1 + 1, "(\(x), \(y)) off the map") }
        }
        #expect(svg.all("text", in: "legend").contains { $0.text.hasPrefix("off the floor") })
        // Labels stay on the canvas.
        let canvas = svg.size
        for box in svg.all("text", in: "labels").compactMap(TextBox.init) {
            #expect(box.minX >= 0 && box.maxX <= canvas.width && box.minY >= 0 && box.maxY <= canvas.height, "\(box) off the canvas")
        }
        Self.checkRendering(path, svg)
    }

    @Test("map labels do not overlap each other or the locator dots (corridor with --suggest, hall, poor geometry, off-floor room)",
          arguments: ["corridor", "hall", "poor-geometry", "off-floor"])
    func labelsDoNotOverlap(_ name: String) throws {
        let site = name == "off-floor" ? try Self.site(Self.offFloorSite, in: TestPaths.temporaryDirectory())
                                       : TestPaths.fixture("sites/\(name).json")
        let (svg, path) = try Self.draw(site, ["--suggest"])
        let boxes = svg.all("text", in: "labels").compactMap(TextBox.init)
        #expect(boxes.contains { $0.text == "+1 suggested" })
        for (i, a) in boxes.enumerated() {
            for b in boxes[(i + 1)...] { #expect(!a.overlaps(b), "\(a) overlaps \(b)") }
        }
        let dots = svg.all("circle").filter { !$0.inGroup("legend") && $0.attributes["fill"] == GeometryHeatmap.locatorColour }
        #expect(!dots.isEmpty)
        for dot in dots {
            let cx = try #require(dot.number("cx")), cy = try #require(dot.number("cy")), r = try #require(dot.number("r"))
            for box in boxes { #expect(!box.overlaps(circleAt: cx, cy, radius: r), "\(box) covers the locator at (\(cx), \(cy))") }
        }
        if name == "corridor" {
            // The reported case: "+1 suggested" on 0x1008's label.
            let star = try #require(boxes.first { $0.text == "+1 suggested" }), locator = try #require(boxes.first { $0.text == "0x1008" })
            #expect(!star.overlaps(locator))
        }
        Self.checkRendering(path, svg)
    }

    @Test("a long warning is wrapped over several lines, whole (no '…' cut), within the drawing's width")
    func longWarningWrapped() throws {
        let site = TestPaths.fixture("sites/poor-geometry.json")
        let (svg, path) = try Self.draw(site)
        let json = try JSONParser.parse(Array(CapturedRun(["geometry", "--site", site, "--json"]).out.utf8))
        let warnings = (json["warnings"]?.arrayValue ?? []).compactMap(\.stringValue)
        let long = try #require(warnings.first { $0.hasPrefix("geometry.locatorsCollinear") })
        let lines = svg.all("text", in: "warnings").map(\.text)
        // Lines of one warning: its first ("⚠ …") and the indented continuations after it.
        var blocks: [[String]] = []
        for line in lines {
            if line.hasPrefix("⚠ ") || blocks.isEmpty { blocks.append([line]) } else { blocks[blocks.count - 1].append(line) }
        }
        let block = try #require(blocks.first { $0[0].hasPrefix("⚠ geometry.locatorsCollinear") })
        #expect(block.count >= 2, "\(block)")
        let joined = block.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(joined == "⚠ " + long, "\(joined)")
        #expect(!lines.contains { $0.hasSuffix("…") })
        let width = svg.size.width
        for box in svg.all("text", in: "warnings").compactMap(TextBox.init) { #expect(box.maxX <= width, "\(box) past \(width)") }
        Self.checkRendering(path, svg)
    }

    @Test("the title's colour is the verdict: green (hall), amber (corridor, max HDOP 2.25), red (poor geometry, max HDOP 34)")
    func titleColour() throws {
        for (fixture, colour) in [("hall", "#1A6B3A"), ("corridor", "#8A5A00"), ("poor-geometry", "#B2182B")] {
            let (svg, _) = try Self.draw(TestPaths.fixture("sites/\(fixture).json"))
            let title = try #require(svg.all("text").first { $0.text.hasPrefix("HDOP p50 ") })
            #expect(title.attributes["fill"] == colour, "\(fixture): \(title.attributes["fill"] ?? "none")")
            if fixture == "poor-geometry" { #expect(title.attributes["fill"] != "#1A6B3A", "not green") }
        }
    }
}
