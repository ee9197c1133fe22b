@testable import LocusCore
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
@testable import LocusCommandLine
@testable import LocusIO
import LocusTestSupport
import Testing

/// `locus simulate --tdoa` and `locus geometry --tdoa` (issue #40 items 5 and 6), run in-process.
@Suite("locus simulate --tdoa and locus geometry --tdoa")
struct TDoACommandTests {
    static let hall = TestPaths.fixture("sites/hall.json")

    /// A 40 × 40 m floor with a 20 m square of locators (10…30 m) and one at its centre.
    static let squareSite = """
    {"building": {"id": "sq", "name": "Square"}, "floors": [{"id": "1F", "originX": 0, "originY": 0, "widthM": 40, "heightM": 40,
     "tagHeightM": 1.1, "locators": [{"address": "0x0101", "x": 10, "y": 10, "z": 2.6}, {"address": "0x0102", "x": 30, "y": 10, "z": 2.6},
     {"address": "0x0103", "x": 30, "y": 30, "z": 2.6}, {"address": "0x0104", "x": 10, "y": 30, "z": 2.6},
     {"address": "0x0105", "x": 20, "y": 20, "z": 2.6}], "zones": []}]}
    """

    /// The hall's locators by decimal address: (x, y, z).
    static func hallLocators() throws -> [Int: (Double, Double, Double)] {
        let site = try JSONParser.parse(TestPaths.bytes(hall))
        var out: [Int: (Double, Double, Double)] = [:]
        for l in site["floors"]?.arrayValue?.first?["locators"]?.arrayValue ?? [] {
            let a = l["address"]?.stringValue.flatMap { $0.hasPrefix("0") ? Int($0.dropFirst(2), radix: 16) : Int($0) }
                ?? l["address"]?.intValue ?? -1
            out[a] = (l["x"]?.doubleValue ?? .nan, l["y"]?.doubleValue ?? .nan, l["z"]?.doubleValue ?? 0)
        }
        return out
    }

    /// Rows of a difference trace: (t, tag, A, B, tdoa_m, floor), after checking the SPEC header.
    static func rows(_ path: String) throws -> [(t: Double, tag: String, a: Int, b: Int, z: Double, floor: String)] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var lines = text.split(separator: "\n")
        #expect(lines.removeFirst() == "t,tag,anchor_a,anchor_b,tdoa_m,floor")
        return lines.map { line in
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return (Double(f[0]) ?? .nan, f[1], Int(f[2]) ?? -1, Int(f[3]) ?? -1, Double(f[4]) ?? .nan, f[5])
        }
    }

    @Test("simulate --tdoa uplink|downlink writes SPEC difference rows: A ≠ B, both on the floor, |tdoa_m| within the baseline")
    func simulateRows() throws {
        let dir = TestPaths.temporaryDirectory()
        let locators = try Self.hallLocators()
        #expect(locators.count == 8)
        for mode in ["uplink", "downlink"] {
            let run = CapturedRun(["simulate", "--site", Self.hall, "--trace", "\(dir)/\(mode).csv", "--truth", "\(dir)/\(mode)-truth.csv",
                                   "--tdoa", mode, "--tags", "2", "--duration", "20", "--nlos", "0.05", "--dropout", "0.05", "--json"])
            #expect(run.status == 0, "\(run.err)")
            let summary = try JSONParser.parse(Array(run.out.utf8))
            #expect(summary["tdoa"]?.stringValue == mode)
            let rows = try Self.rows("\(dir)/\(mode).csv")
            #expect(summary["differences"]?.intValue == rows.count)
            #expect(rows.count > (mode == "uplink" ? 2 * 80 * 6 : 2 * 80 * 6))
            for r in rows {
                #expect(r.a != r.b && r.floor == "1F" && (r.tag == "T1" || r.tag == "T2"))
                let a = try #require(locators[r.a]), b = try #require(locators[r.b])
                let baseline = ((a.0 - b.0) * (a.0 - b.0) + (a.1 - b.1) * (a.1 - b.1) + (a.2 - b.2) * (a.2 - b.2)).squareRoot()
                // σ 0.1 m per arrival, one NLOS excess ≤ 2.5 m, the 0x9DDC bias 0.12 m.
                #expect(abs(r.z) <= baseline + 2.5 + 0.12 + 1.0, "\(r)")
            }
            let times = rows.map(\.t)
            #expect(times == times.sorted())
            // The truth is the ranging run's.
            let ranging = CapturedRun(["simulate", "--site", Self.hall, "--trace", "\(dir)/r.csv", "--truth", "\(dir)/r-truth.csv",
                                       "--tags", "2", "--duration", "20"])
            #expect(ranging.status == 0)
            #expect(TestPaths.bytes("\(dir)/\(mode)-truth.csv") == TestPaths.bytes("\(dir)/r-truth.csv"))
        }
    }

    @Test("raw fixes of blinks denser than the epochs are the tag at the epoch's time: the newest difference of each pair is solved")
    func denseBlinksRaw() throws {
        // 20 blinks a second, fixes at 4 Hz: five blinks an epoch. Solving all five as one still
        // position put the fix at their mean time, 0.1 s late (p50 0.109 m, RMSE 0.129 m on this walk);
        // the newest blink's differences give the tag at the epoch's time (p50 0.064, RMSE 0.083).
        let dir = TestPaths.temporaryDirectory()
        let sim = CapturedRun(["simulate", "--site", Self.hall, "--tdoa", "uplink", "--tags", "2", "--duration", "30", "--seed", "8",
                               "--rate", "20", "--trace", dir + "/t.csv", "--truth", dir + "/truth.csv"])
        #expect(sim.status == 0, "\(sim.err)")
        let run = CapturedRun(["replay", "--site", Self.hall, "--trace", dir + "/t.csv", "--truth", dir + "/truth.csv", "--filter", "none", "--json"])
        #expect(run.status == 0, "\(run.err)")
        let json = try JSONParser.parse(Array(run.out.utf8))
        #expect(json["fixes"]?.intValue == 240)
        #expect((json["p50_m"]?.doubleValue ?? 1) < 0.08 && (json["rmse_m"]?.doubleValue ?? 1) < 0.10, "\(run.out.prefix(400))")
    }

    @Test("real ranges as differences (the shared CUHK-SZ fast run, each round a blink against its shortest range, as scripts/datasets/derive_tdoa.py): raw, causal and smoothed against the truth, causal ≤ raw, smoothed ≤ causal",
          .enabled(if: TestPaths.dataset("cuhksz-planar-uwb") != nil, "../shared/datasets/cuhksz-planar-uwb is not present"))
    func realRangesAsDifferences() throws {
        let d = try #require(TestPaths.dataset("cuhksz-planar-uwb"))
        let lines = try String(contentsOfFile: d + "/trace.csv", encoding: .utf8).split(separator: "\n").dropFirst()
        var text = "t,tag,anchor_a,anchor_b,tdoa_m\n"
        var round: [(anchor: Substring, range: Double)] = [], time: Substring = ""
        func close() {
            guard round.count >= 3, let a = round.min(by: { $0.range < $1.range }) else { return }
            for b in round where b.anchor != a.anchor {
                text += "\(time),tag,\(a.anchor),\(b.anchor),\(DecimalText.string(b.range - a.range, decimals: 4))\n"
            }
        }
        for line in lines {
            let f = line.split(separator: ",")  // t,anchor,range_m
            if f[0] != time || round.contains(where: { $0.anchor == f[1] }) {
                close()
                round.removeAll(keepingCapacity: true)
                time = f[0]
            }
            round.append((f[1], Double(f[2]) ?? .nan))
        }
        close()
        let dir = TestPaths.temporaryDirectory()
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir + "/tdoa.csv"))
        func rmse(_ extra: [String]) throws -> Double {
            let run = CapturedRun(["replay", "--site", d + "/site.json", "--trace", dir + "/tdoa.csv", "--truth", d + "/truth.csv", "--json"] + extra)
            #expect(run.status == 0, "\(run.err)")
            let json = try JSONParser.parse(Array(run.out.utf8))
            #expect(json["differences"]?.intValue == 94_357 && (json["fixes"]?.intValue ?? 0) >= 520, "\(run.out.prefix(300))")
            return try #require(json["rmse_m"]?.doubleValue)
        }
        // Measured 0.1411 / 0.1011 / 0.0980 m (docs/tdoa.md, "Real ranges as differences"); ranging reads 0.0841 / 0.0813 / 0.0773.
        let raw = try rmse(["--filter", "none"]), causal = try rmse([]), smoothed = try rmse(["--smooth"])
        #expect(causal <= raw && smoothed <= causal, "raw \(raw), causal \(causal), smoothed \(smoothed)")
        #expect(raw < 0.17 && causal < 0.12 && smoothed < 0.115, "raw \(raw), causal \(causal), smoothed \(smoothed)")
    }

    @Test("simulate --tdoa is deterministic for a seed, and another seed gives other bytes")
    func simulateDeterministic() {
        let dir = TestPaths.temporaryDirectory()
        func run(_ seed: String, _ name: String, _ mode: String) -> [UInt8] {
            let r = CapturedRun(["simulate", "--site", Self.hall, "--trace", "\(dir)/\(name).csv", "--truth", "\(dir)/\(name)-t.csv",
                                 "--tdoa", mode, "--duration", "10", "--nlos", "0.1", "--dropout", "0.1", "--tdoa-clock-noise", "2e-10",
                                 "--seed", seed])
            #expect(r.status == 0, "\(r.err)")
            return TestPaths.bytes("\(dir)/\(name).csv")
        }
        for mode in ["uplink", "downlink"] {
            let a = run("7", "a-\(mode)", mode), b = run("7", "b-\(mode)", mode), c = run("8", "c-\(mode)", mode)
            #expect(!a.isEmpty && a == b && a != c)
        }
    }

    @Test("uplink with --tdoa-reference: A is that locator unless a blink missed it, and the summary says how often")
    func fixedReference() throws {
        let dir = TestPaths.temporaryDirectory()
        let run = CapturedRun(["simulate", "--site", Self.hall, "--trace", "\(dir)/u.csv", "--truth", "\(dir)/t.csv", "--tdoa", "uplink",
                               "--tdoa-reference", "0x9DD7", "--dropout", "0.3", "--duration", "30"])
        #expect(run.status == 0, "\(run.err)")
        let rows = try Self.rows("\(dir)/u.csv")
        let blinks = Dictionary(grouping: rows) { $0.t }
        let standIns = blinks.values.filter { $0[0].a != 0x9DD7 }.count
        #expect(standIns > 10 && standIns < 60, "\(standIns) of \(blinks.count)")
        #expect(run.out.contains("reference 0x9DD7 missed in \(standIns) blinks"), "\(run.out)")
        let json = CapturedRun(["simulate", "--site", Self.hall, "--trace", "\(dir)/u.csv", "--truth", "\(dir)/t.csv", "--tdoa", "uplink",
                                "--tdoa-reference", "0x9DD7", "--dropout", "0.3", "--duration", "30", "--json"])
        #expect(json.err.contains("note: the reference 0x9DD7 missed \(standIns) blinks"), "\(json.err)")
        #expect(try JSONParser.parse(Array(json.out.utf8))["reference_stand_ins"]?.intValue == standIns)
        for rows in blinks.values { #expect(Set(rows.map(\.a)).count == 1) }
    }

    @Test("simulate --tdoa usage errors exit 2 and name the option")
    func simulateUsage() {
        let dir = TestPaths.temporaryDirectory()
        let common = ["simulate", "--site", Self.hall, "--trace", dir + "/x.csv", "--truth", dir + "/y.csv"]
        let cases: [([String], String)] = [
            (["--tdoa", "sideways"], "--tdoa"),
            (["--tdoa", "downlink", "--tdoa-reference", "0x9DD7"], "--tdoa-reference"),
            (["--tdoa", "uplink", "--tdoa-reference", "0x1234"], "--tdoa-reference"),
            (["--tdoa", "uplink", "--tdoa-reference", "north"], "--tdoa-reference"),
            (["--tdoa-clock-noise", "1e-9"], "--tdoa-clock-noise"),
            (["--tdoa", "uplink", "--tdoa-clock-noise", "-1"], "--tdoa-clock-noise"),
        ]
        for (extra, option) in cases {
            let run = CapturedRun(common + extra)
            #expect(run.status == 2, "\(extra): \(run.status) \(run.err)")
            #expect(run.err.contains(option), "\(extra): \(run.err)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/x.csv"))
        let help = CapturedRun(["simulate", "--help"])
        for option in ["--tdoa MODE", "--tdoa-reference ADDR", "--tdoa-clock-noise S"] { #expect(help.out.contains(option), "\(option)") }
    }

    @Test("geometry --tdoa --json: measurement tdoa, the SPEC keys, and the ranging summary keeps no measurement key")
    func geometryJSON() throws {
        let tdoa = CapturedRun(["geometry", "--site", Self.hall, "--tdoa", "--json"])
        #expect(tdoa.status == 0, "\(tdoa.err)")
        let summary = try JSONParser.parse(Array(tdoa.out.utf8))
        #expect(summary["measurement"]?.stringValue == "tdoa")
        #expect(tdoa.out.hasPrefix("{\"floor\":\"1F\",\"mode\":\"planar\",\"measurement\":\"tdoa\","))
        for key in ["cells", "hdop_p50", "hdop_p95", "hdop_max", "coverage"] { #expect(summary[key] != nil, "\(key)") }
        let range = CapturedRun(["geometry", "--site", Self.hall, "--json"])
        #expect(!range.out.contains("measurement"))
        let r = try JSONParser.parse(Array(range.out.utf8))
        // The hall's hull is nearly the floor: TDoA is close to ranging there (p50 0.93 vs 0.90).
        let p50t = try #require(summary["hdop_p50"]?.doubleValue), p50r = try #require(r["hdop_p50"]?.doubleValue)
        #expect(p50t >= p50r && p50t < 1.2 * p50r)
        #expect(summary["coverage"]?.doubleValue == 1)
        let text = CapturedRun(["geometry", "--site", Self.hall, "--tdoa"])
        #expect(text.out.contains("TDoA (uplink, reference: the nearest locator heard)") && text.out.contains("≥ 4 locators in range"), "\(text.out)")
    }

    @Test("geometry --tdoa on a site larger than its locators' hull: coverage drops, the SVG outlines the hull, --suggest helps")
    func geometryOutsideHull() throws {
        let dir = TestPaths.temporaryDirectory()
        try Self.squareSite.write(toFile: dir + "/square.json", atomically: false, encoding: .utf8)
        let common = ["geometry", "--site", dir + "/square.json", "--max-range", "60", "--json"]
        let range = CapturedRun(common)
        let tdoa = CapturedRun(common + ["--tdoa", "--suggest", "--svg", dir + "/t.svg"])
        #expect(range.status == 0 && tdoa.status == 0, "\(range.err) \(tdoa.err)")
        let r = try JSONParser.parse(Array(range.out.utf8)), t = try JSONParser.parse(Array(tdoa.out.utf8))
        #expect(r["coverage"]?.doubleValue == 1)
        let coverage = try #require(t["coverage"]?.doubleValue)
        #expect(coverage > 0.3 && coverage < 0.6, "\(coverage)")
        #expect(try #require(t["hdop_max"]?.doubleValue) > 3 * #require(r["hdop_max"]?.doubleValue))
        let warnings = (t["warnings"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(warnings.contains { $0.hasPrefix("geometry.poorHDOP: ") }, "\(warnings)")
        let s = try #require(t["suggestion"])
        #expect(s["improves"]?.boolValue == true)
        #expect(try #require(s["after"]?["coverage"]?.doubleValue) > coverage)

        let svg = TestPaths.bytes(dir + "/t.svg")
        let (ok, check) = XMLCheck.parse(Data(svg))
        #expect(ok, "\(String(describing: check.error))")
        #expect(String(decoding: svg, as: UTF8.self).contains("id=\"locator-hull\""))
        #expect(check.texts.contains("locators' hull: TDoA"))
        #expect(check.texts.contains { $0.contains("TDoA uplink, nearest locator the reference") })
        #expect(check.texts.contains("no fix: < 4 locators"))
        // Deterministic bytes; the ranging heatmap draws no hull.
        let again = CapturedRun(common + ["--tdoa", "--suggest", "--svg", dir + "/t2.svg"])
        #expect(again.status == 0 && TestPaths.bytes(dir + "/t2.svg") == svg)
        let ranged = CapturedRun(common + ["--svg", dir + "/r.svg"])
        #expect(ranged.status == 0 && !String(decoding: TestPaths.bytes(dir + "/r.svg"), as: UTF8.self).contains("locator-hull"))
    }

    @Test("the hall's TDoA heatmap: hull outlined, labels clear of each other, renders without seams")
    func hallHeatmap() throws {
        let (svg, path) = try GeometryHeatmapTests.draw(Self.hall, ["--tdoa", "--suggest"])
        #expect(String(decoding: TestPaths.bytes(path), as: UTF8.self).contains("id=\"locator-hull\""))
        let boxes = svg.all("text", in: "labels").compactMap(TextBox.init)
        #expect(boxes.contains { $0.text == "+1 suggested" })
        for (i, a) in boxes.enumerated() {
            for b in boxes[(i + 1)...] { #expect(!a.overlaps(b), "\(a) overlaps \(b)") }
        }
        GeometryHeatmapTests.checkRendering(path, svg)
    }

    @Test("geometry --help documents --tdoa")
    func geometryHelp() {
        let help = CapturedRun(["geometry", "--help"])
        #expect(help.status == 0 && help.out.contains("--tdoa") && help.out.contains("5 on a spatial floor"), "\(help.out)")
    }
}
