import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
@testable import Locus
@testable import LocusCommandLine
@testable import LocusEvaluation
@testable import LocusReports
@testable import LocusCore
@testable import LocusIO
@testable import LocusSimulation
import LocusTestSupport
@testable import LocusZones
import Testing

/// `locus replay --truth … --report` and the richer `--json`: per-tag figures, the CDF, the zone
/// score; the report read back as XML and rendered.
@Suite("Replay report and evaluation")
struct ReplayReportTests {
    /// Collects the elements of an SVG: name and attributes, and the text of `<text>` elements.
    final class Elements: NSObject, XMLParserDelegate {
        var all: [(name: String, attributes: [String: String], text: String)] = []
        private var open: Int?
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            all.append((name, attributes, ""))
            open = name == "text" ? all.count - 1 : nil
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if let k = open { all[k].text += string }
        }
        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) { open = nil }

        static func parse(_ bytes: [UInt8]) -> Elements? {
            let parser = XMLParser(data: Data(bytes))
            let delegate = Elements()
            parser.delegate = delegate
            return parser.parse() ? delegate : nil
        }
    }

    @Test("a simulated 4-tag run: one track per tag over its truth, the CDF with p50/p95, the zone score, and a table equal to --json per_tag; the PNG renders")
    func report() throws {
        let dir = TestPaths.temporaryDirectory()
        let site = TestPaths.fixture("sites/hall.json")
        let sim = CapturedRun(["simulate", "--site", site, "--trace", dir + "/t.csv", "--truth", dir + "/truth.csv", "--tags", "4",
                               "--duration", "90", "--nlos", "0.05", "--seed", "8"])
        #expect(sim.status == 0, "\(sim.err)")
        let run = CapturedRun(["replay", "--site", site, "--trace", dir + "/t.csv", "--truth", dir + "/truth.csv",
                               "--report", dir + "/report.svg", "--json"])
        #expect(run.status == 0, "\(run.err)")
        let json = try JSONParser.parse(Array(run.out.utf8))
        let perTag = try #require(json["per_tag"])
        let svg = try #require(Elements.parse(TestPaths.bytes(dir + "/report.svg")), "the report is well-formed XML")
        let tracks = svg.all.filter { $0.name == "polyline" && $0.attributes["class"] == "track" }
        #expect(Set(tracks.compactMap { $0.attributes["data-tag"] }) == ["T1", "T2", "T3", "T4"])
        #expect(svg.all.filter { $0.attributes["class"] == "truth-track" }.count == 4)
        #expect(svg.all.filter { $0.attributes["class"] == "error-series" }.count == 4)
        #expect(svg.all.contains { $0.name == "polyline" && $0.attributes["class"] == "cdf" })
        #expect(svg.all.filter { $0.attributes["class"] == "cdf-marker" }.compactMap { $0.attributes["data-q"] } == ["0.50", "0.95"])
        #expect(svg.all.contains { $0.attributes["class"] == "zone-score" && $0.text.contains("matched") })
        // The table's cells equal --json's per_tag figures (3 decimals).
        for tag in ["T1", "T2", "T3", "T4"] {
            for column in ["rmse_m", "p50_m", "p95_m", "max_m"] {
                let cell = svg.all.first { $0.attributes["data-tag"] == tag && $0.attributes["data-column"] == column }?.text
                let value = try #require(perTag[tag]?[column]?.doubleValue)
                // The JSON figure is itself rounded (4 decimals), so a cell may sit exactly half a unit away
                // (0.198 vs 0.1985), which binary doubles put a hair above 0.0005.
                #expect(cell == DecimalText.string(value, decimals: 3) || abs((Double(cell ?? "") ?? -1) - value) <= 0.0005 + 1e-9,
                        "\(tag) \(column): table \(cell ?? "nil"), json \(value)")
            }
            #expect(svg.all.first { $0.attributes["data-tag"] == tag && $0.attributes["data-column"] == "fixes" }?.text
                    == perTag[tag]?["fixes"]?.doubleValue.map { "\(Int($0))" })
        }
        // Rendered, it is not blank.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/rsvg-convert") {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/rsvg-convert")
            p.arguments = [dir + "/report.svg", "-o", dir + "/report.png"]
            try p.run()
            p.waitUntilExit()
            #expect(p.terminationStatus == 0)
            let png = TestPaths.bytes(dir + "/report.png")
            #expect(png.count > 30_000 && png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "PNG of \(png.count) bytes")
        } else {
            print("skipped rendering: /usr/bin/rsvg-convert is absent (scripts/setup installs librsvg2-bin)")
        }
    }

    @Test("--json with truth: per_tag (fixes, compared, rmse/p50/p95/p99/max, per-axis RMSE), 100 CDF points, zone_score; the same with --smooth; --report needs --truth")
    func json() throws {
        let dir = TestPaths.temporaryDirectory()
        let site = TestPaths.fixture("sites/hall.json")
        #expect(CapturedRun(["simulate", "--site", site, "--trace", dir + "/t.csv", "--truth", dir + "/truth.csv", "--tags", "2",
                             "--duration", "60", "--seed", "3"]).status == 0)
        for extra in [[], ["--smooth"]] {
            let run = CapturedRun(["replay", "--site", site, "--trace", dir + "/t.csv", "--truth", dir + "/truth.csv", "--json"] + extra)
            #expect(run.status == 0, "\(run.err)")
            let json = try JSONParser.parse(Array(run.out.utf8))
            let t1 = try #require(json["per_tag"]?["T1"])
            for key in ["fixes", "compared", "rmse_m", "p50_m", "p95_m", "p99_m", "max_m", "rmse_x_m", "rmse_y_m"] {
                #expect(t1[key]?.doubleValue != nil, "per_tag.T1.\(key)")
            }
            #expect(t1["rmse_z_m"] == nil, "planar: z is not solved")
            let cdf = try #require(json["cdf"]?.arrayValue)
            #expect(cdf.count == 100 && cdf.last?["p"]?.doubleValue == 1)
            #expect(cdf.last?["error_m"]?.doubleValue == json["max_m"]?.doubleValue)
            let score = try #require(json["zone_score"])
            for key in ["reference", "matched", "missed", "spurious", "spurious_per_tag_hour", "delay_p50_s", "delay_p95_s"] {
                #expect(score[key] != nil, "zone_score.\(key)")
            }
            #expect((score["reference"]?.doubleValue ?? 0) > 0)
        }
        let noTruth = CapturedRun(["replay", "--site", site, "--trace", dir + "/t.csv", "--report", dir + "/r.svg"])
        #expect(noTruth.status == 2 && noTruth.err.contains("--truth"), "\(noTruth.err)")
    }

    @Test("positions equal to truth score exactly zero error: every reference transition matched, none missed or spurious, zero delay, zero RMSE")
    func zeroError() throws {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        let recording = SimulatedRecording.simulate(floor: site.floors[0], tagCount: 3, durationSeconds: 120, seed: 5)
        var truth = GroundTruth()
        for sample in recording.truth {
            truth.tracks[sample.tag, default: GroundTruth.Track()].timeSeconds.append(sample.timeSeconds)
            truth.tracks[sample.tag, default: GroundTruth.Track()].points.append(sample.position)
        }
        var evaluation = try ReplayEvaluation(site: site, truth: truth, shiftSeconds: 0, rateHertz: 4, keepsTracks: false, windowSeconds: 5)
        // The "pipeline": fixes exactly at the truth, in (time, tag) order, judged by the engine's rules.
        var judge = try ZoneJudge(floor: site.floors[0], options: ZoneJudgeOptions(positionPeriodSeconds: 0.25))
        var released: [ZoneEvent] = []
        let tags = recording.walks.map(\.tag)
        for k in 0..<(120 * 4) {
            let t = Double(k) * 0.25
            for (j, tag) in tags.enumerated() {
                let p = try #require(truth.position(tag: tag, at: t))
                let fix = PositionFix(timeSeconds: t, tag: tag, floor: site.floors[0].id, position: p,
                                      covariance: SymmetricMatrix3(xx: 0.01, xy: 0, yy: 0.01, zz: 0), quality: FixQuality(hdop: 1, pdop: 1, residualRMSMeters: 0, locatorsUsed: 8))
                evaluation.add(fix)
                try judge.judge(fix, tag: TagIndex(j), into: &released)
            }
        }
        judge.finish(into: &released)
        for e in released { evaluation.add(e) }
        evaluation.finish()
        let s = evaluation.zoneScore
        #expect(s.reference > 10 && s.matched == s.reference && s.missed == 0 && s.spurious == 0, "\(s)")
        #expect(s.delaysSeconds.allSatisfy { $0 == 0 })
        #expect(evaluation.accuracyReport.rmseMeters == 0 && evaluation.accuracyReport.compared == 3 * 480)
    }
}
