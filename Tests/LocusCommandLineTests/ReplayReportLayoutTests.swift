import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// The replay report's legibility (issue #41 item 8): map labels readable over the tracks, the CDF's
/// labels off the curve, the first error point off the axis, no empty zone panel, and no report
/// from a failed run.
@Suite("Replay report layout")
struct ReplayReportLayoutTests {
    /// A simulated 4-tag run on `site` replayed with `--report`; (run, report model, directory).
    static func reported(site: String, seed: Int = 8) throws -> (run: CapturedRun, svg: SVGModel, dir: String) {
        let dir = TestPaths.temporaryDirectory()
        let sim = CapturedRun(["simulate", "--site", site, "--trace", dir + "/t.csv", "--truth", dir + "/truth.csv", "--tags", "4",
                               "--duration", "90", "--nlos", "0.05", "--seed", "\(seed)"])
        #expect(sim.status == 0, "\(sim.err)")
        let run = CapturedRun(["replay", "--site", site, "--trace", dir + "/t.csv", "--truth", dir + "/truth.csv",
                               "--report", dir + "/report.svg"])
        #expect(run.status == 0, "\(run.err)")
        let svg = try #require(SVGModel.parse(TestPaths.bytes(dir + "/report.svg")))
        return (run, svg, dir)
    }

    /// The points of a polyline's `points` attribute.
    static func points(_ e: SVGModel.Element) -> [(x: Double, y: Double)] {
        (e.attributes["points"] ?? "").split(separator: " ").compactMap { pair in
            let xy = pair.split(separator: ",").compactMap { Double($0) }
            return xy.count == 2 ? (xy[0], xy[1]) : nil
        }
    }

    @Test("zone and locator labels on the map carry a white halo and are drawn over the tracks")
    func mapLabelsHaveHalos() throws {
        let r = try Self.reported(site: TestPaths.fixture("sites/hall.json"))
        defer { try? FileManager.default.removeItem(atPath: r.dir) }
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        let names = Set(site.floors[0].zones.map { $0.name.isEmpty ? $0.id.rawValue : $0.name })
        let addresses = Set(site.floors[0].locators.map(\.address.description))
        let lastTrack = try #require(r.svg.elements.lastIndex { $0.attributes["class"] == "track" })
        let labels = r.svg.elements.enumerated().filter { $0.element.name == "text" && (names.contains($0.element.text) || addresses.contains($0.element.text)) }
        #expect(labels.count == names.count + addresses.count, "\(labels.map(\.element.text))")
        for (index, label) in labels {
            #expect(label.attributes["stroke"] == "#FFFFFF" && label.attributes["paint-order"] == "stroke", "'\(label.text)' has no halo")
            #expect(index > lastTrack, "'\(label.text)' is drawn under the tracks")
        }
    }

    @Test("the CDF's p50 and p95 labels stay clear of the curve")
    func cdfLabelsOffTheCurve() throws {
        for seed in [8, 21] {
            let r = try Self.reported(site: TestPaths.fixture("sites/hall.json"), seed: seed)
            defer { try? FileManager.default.removeItem(atPath: r.dir) }
            let curve = Self.points(try #require(r.svg.elements.first { $0.attributes["class"] == "cdf" }))
            let labels = r.svg.elements.filter { $0.name == "text" && $0.attributes["fill"] == "#B2182B" && ($0.text.hasPrefix("p50 ") || $0.text.hasPrefix("p95 ")) }
            #expect(labels.count == 2)
            for label in labels {
                let box = try #require(TextBox(label))
                // Every segment of the curve, sampled each half pixel.
                var hit: (Double, Double)? = nil
                for (a, b) in zip(curve, curve.dropFirst()) where hit == nil {
                    let steps = max(1, Int((abs(b.x - a.x) + abs(b.y - a.y)) * 2))
                    for s in 0...steps {
                        let f = Double(s) / Double(steps)
                        let x = a.x + (b.x - a.x) * f, y = a.y + (b.y - a.y) * f
                        if x > box.minX && x < box.maxX && y > box.minY && y < box.maxY { hit = (x, y); break }
                    }
                }
                #expect(hit == nil, "seed \(seed): \(box) crosses the curve at \(String(describing: hit))")
            }
        }
    }

    @Test("the first point of the error over time sits right of the y-axis, not on it")
    func firstErrorPointOffTheAxis() throws {
        let r = try Self.reported(site: TestPaths.fixture("sites/hall.json"))
        defer { try? FileManager.default.removeItem(atPath: r.dir) }
        let series = r.svg.elements.filter { $0.attributes["class"] == "error-series" }
        #expect(series.count == 4)
        let first = try #require(series.flatMap(Self.points).map(\.x).min())
        // The plot's y-axis is the frame's left edge at x = 70.
        #expect(first >= 70 + 4, "the earliest error point is at x = \(first)")
    }

    @Test("a site without zones shows no zone score of zeros, but a line saying it has none")
    func noZonesNoEmptyPanel() throws {
        var site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        for k in site.floors.indices { site.floors[k].zones = [] }
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileBytes.write(SiteEncoder.encode(site), to: dir + "/site.json")
        let r = try Self.reported(site: dir + "/site.json")
        defer { try? FileManager.default.removeItem(atPath: r.dir) }
        let panel = r.svg.elements.filter { $0.attributes["class"] == "zone-score" }
        #expect(!panel.contains { $0.text.contains("matched") || $0.text.contains("missed") }, "\(panel.map(\.text))")
        #expect(panel.contains { $0.text.contains("no zones") }, "\(panel.map(\.text))")
    }

    @Test("a run that fails (truth covering no fix) writes no report, and stderr says why")
    func failedRunWritesNoReport() throws {
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileManager.default.createFile(atPath: dir + "/truth.csv", contents: Data("t,tag,x,y\n5000,T1,1,1\n5001,T1,1,1\n".utf8)))
        let run = CapturedRun(["replay", "--site", TestPaths.fixture("sites/hall.json"), "--trace", TestPaths.fixture("traces/hall-walk.csv"),
                               "--truth", dir + "/truth.csv", "--report", dir + "/report.svg"])
        #expect(run.status == 1)
        #expect(run.err.contains("truth covers 0"), "\(run.err)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/report.svg"))
    }
}
