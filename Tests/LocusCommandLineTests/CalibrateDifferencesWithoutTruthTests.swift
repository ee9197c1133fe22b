import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// `locus calibrate` without `--truth` on uplink TDoA traces (`locus simulate --tdoa uplink`): the
/// bundle adjustment of differences, its JSON (measurement, gauge, per-locator figures), the survey
/// check, the site it writes, and the traces it refuses.
@Suite("locus calibrate without truth from range differences")
struct CalibrateDifferencesWithoutTruthTests {
    /// The biases the simulation applies to the hall's locators, metres (mean 0.15625).
    static let biasesMeters: [Double] = [0.10, 0.25, 0.05, 0.20, 0.15, 0.12, 0.30, 0.08]

    /// The hall fixture with `biases` (every locator), locator `moved` displaced by `by`.
    static func hall(biases: [Double], moved: Int? = nil, by: Point2 = Point2(x: 0, y: 0)) throws -> Site {
        var site = try SiteDecoder.decode(TestPaths.bytes(TestPaths.fixture("sites/hall.json")), file: "hall.json")
        for k in site.floors[0].locators.indices { site.floors[0].locators[k].biasMeters = biases[k] }
        if let k = moved {
            site.floors[0].locators[k].position.x += by.x
            site.floors[0].locators[k].position.y += by.y
        }
        return site
    }

    /// Simulates 150 s of uplink TDoA from two tags on the biased hall (`seconds`, `site` to simulate
    /// on when given) and writes `calibrating`, the site to calibrate. (300 s until 2026-12-07: the same
    /// verdicts at half the test time; at 150 s the biases' differences come back within 5 mm and the
    /// moved locator's fitted offset within 2 cm.)
    static func recording(in dir: String, calibrating: Site, seconds: String = "150", seed: String = "4",
                          simulated: Site? = nil) throws -> (site: String, trace: String) {
        let biased = dir + "/biased.json", surveyed = dir + "/site.json", trace = dir + "/trace.csv"
        try Data(SiteEncoder.encode(simulated ?? Self.hall(biases: biasesMeters))).write(to: URL(fileURLWithPath: biased))
        try Data(SiteEncoder.encode(calibrating)).write(to: URL(fileURLWithPath: surveyed))
        let sim = CapturedRun(["simulate", "--site", biased, "--tdoa", "uplink", "--tags", "2", "--duration", seconds, "--seed", seed,
                               "--trace", trace, "--truth", dir + "/truth.csv"])
        #expect(sim.status == 0, "\(sim.err)")
        return (surveyed, trace)
    }

    @Test("--json: measurement differences, the gauge, each locator's bias (differences to 2 cm, mean at the site's), noise per arrival and position check; --out writes them")
    func report() throws {
        let dir = TestPaths.temporaryDirectory()
        let files = try Self.recording(in: dir, calibrating: Self.hall(biases: Array(repeating: 0, count: 8)))
        let run = CapturedRun(["calibrate", "--site", files.site, "--trace", files.trace, "--out", dir + "/out.json", "--json"])
        #expect(run.status == 0, "\(run.err)")
        #expect(run.err.contains("only differences of biases are observable"), "\(run.err)")
        let json = try JSONParser.parse(Array(run.out.utf8))
        #expect(json["mode"]?.stringValue == "without_truth" && json["measurement"]?.stringValue == "differences")
        let floor = try #require(json["floors"]?.arrayValue?.first)
        #expect(floor["measurement"]?.stringValue == "differences" && (floor["differences"]?.doubleValue ?? 0) > 5_000)
        #expect(floor["gauge"]?["observable"]?.stringValue == "differences of biases" && floor["gauge"]?["held"]?.stringValue == "site")
        #expect(abs(floor["gauge"]?["mean_bias_m"]?.doubleValue ?? 1) < 0.002)
        let locators = try #require(json["locators"]?.arrayValue)
        #expect(locators.count == 8)
        for l in locators {
            #expect(l["flagged"]?.boolValue == false && l["observable"]?.boolValue == true, "\(l)")
            #expect((0.07...0.12).contains(l["noise_m"]?.doubleValue ?? 0), "noise per arrival \(l)")
            #expect(l["position_check"]?["checkable"]?.boolValue == true && (l["arrivals"]?.doubleValue ?? 0) > 1_000, "\(l)")
        }
        let fitted = try SiteDecoder.decode(TestPaths.bytes(dir + "/out.json"), file: "out.json").floors[0].locators.map(\.biasMeters)
        let mean = fitted.reduce(0, +) / 8, trueMean = Self.biasesMeters.reduce(0, +) / 8
        #expect(abs(mean) < 0.002, "the mean bias \(mean): the site's is 0")
        for (f, b) in zip(fitted, Self.biasesMeters) { #expect(abs((f - mean) - (b - trueMean)) <= 0.02, "\(fitted)") }
        let text = CapturedRun(["calibrate", "--site", files.site, "--trace", files.trace, "--holdout-block", "0"])
        #expect(text.out.contains("blinks") && text.out.contains("arrivals") && text.out.contains("position checkable"), "\(text.out)")
    }

    @Test("a locator surveyed 0.5 m off is flagged with its direction (stderr and --json); the others are not")
    func surveyCheck() throws {
        let dir = TestPaths.temporaryDirectory()
        let surveyed = try Self.hall(biases: Array(repeating: 0, count: 8), moved: 5, by: Point2(x: 0.3, y: 0.4))
        let files = try Self.recording(in: dir, calibrating: surveyed)
        // The survey check, not the held-out validation (heldOut): --holdout-block 0 spares its second fit.
        let run = CapturedRun(["calibrate", "--site", files.site, "--trace", files.trace, "--json", "--holdout-block", "0"])
        #expect(run.status == 0, "\(run.err)")
        #expect(run.err.contains("flagged") && run.err.contains("0x9DDC") && run.err.contains("Δx -0.") && run.err.contains("Δy -0."),
                "\(run.err)")
        let locators = try #require(try JSONParser.parse(Array(run.out.utf8))["locators"]?.arrayValue)
        #expect(locators.map { $0["flagged"]?.boolValue == true } == [false, false, false, false, false, true, false, false])
        let offset = (locators[5]["position_offset_m"]?.arrayValue ?? []).compactMap { $0.doubleValue }
        try #require(offset.count == 3)
        #expect(abs(offset[0] + 0.3) < 0.05 && abs(offset[1] + 0.4) < 0.05, "\(offset)")
        // The range version's block test and its JSON (`test`, `reason`, `left_as_surveyed`).
        let check = locators[5]["position_check"]
        #expect(check?["test"]?["decision"]?.stringValue == "flagged" && check?["test"]?["blocks"]?.doubleValue == 20, "\(locators[5])")
        #expect(check?["reason"] != nil && check?["left_as_surveyed"]?.arrayValue != nil, "\(locators[5])")
        #expect(locators[0]["position_check"]?["test"]?["decision"]?.stringValue == "fits", "\(locators[0])")
        // geometry --trace runs the same check on a trace of differences.
        let geometry = CapturedRun(["geometry", "--site", files.site, "--trace", files.trace, "--json"])
        #expect(geometry.status == 0, "\(geometry.err)")
        let survey = try #require(try JSONParser.parse(Array(geometry.out.utf8))["survey"])
        #expect(survey["flagged"]?.doubleValue == 1, "\(geometry.out)")
        #expect(survey["locators"]?.arrayValue?[5]["position_check"]?["test"]?["decision"]?.stringValue == "flagged", "\(geometry.out)")
    }

    @Test("a trace too short, or a site with too few locators heard, is refused (exit 2) saying what is missing")
    func refused() throws {
        let dir = TestPaths.temporaryDirectory()
        let unbiased = try Self.hall(biases: Array(repeating: 0, count: 8))
        let short = try Self.recording(in: dir, calibrating: unbiased, seconds: "1")
        let run = CapturedRun(["calibrate", "--site", short.site, "--trace", short.trace, "--min-samples", "1"])
        #expect(run.status == 2 && run.err.contains("E4001") && run.err.contains("at least 10 are needed"), "\(run.err)")
        var three = unbiased
        three.floors[0].locators = Array(three.floors[0].locators.prefix(3))
        let dir3 = TestPaths.temporaryDirectory()
        let few = try Self.recording(in: dir3, calibrating: three, seconds: "30", simulated: three)
        let refused = CapturedRun(["calibrate", "--site", few.site, "--trace", few.trace])
        #expect(refused.status == 2 && refused.err.contains("needs at least 4"), "\(refused.err)")
        let slope = CapturedRun(["calibrate", "--site", few.site, "--trace", few.trace, "--slope"])
        #expect(slope.status == 2 && slope.err.contains("--slope applies to ranges"), "\(slope.err)")
    }

    @Test("held out: each arrival predicted from the blink's others, offset eliminated; the biased site's calibration shown better and written, the true site's unproven and not, 4 locators not judged and not written")
    func heldOut() throws {
        // Calibrating the site without the biases the recording has: judged on the held-out blocks and
        // shown better (the biases' differences are ~0.1–0.25 m; the arrivals' noise 0.1 m).
        let dir = TestPaths.temporaryDirectory()
        let files = try Self.recording(in: dir, calibrating: Self.hall(biases: Array(repeating: 0, count: 8)))
        let run = CapturedRun(["calibrate", "--site", files.site, "--trace", files.trace, "--out", dir + "/out.json", "--json"])
        #expect(run.status == 0, "\(run.err)")
        let v = try #require(try JSONParser.parse(Array(run.out.utf8))["validation"])
        #expect(v["judged"]?.boolValue == true && v["accepted"]?.boolValue == true && v["written"]?.boolValue == true, "\(v)")
        #expect(v["metric"]?.stringValue == "median_abs_residual_m" && (v["scored"]?.doubleValue ?? 0) > 1_000, "\(v)")
        let change = try #require(v["change"]?.doubleValue)
        #expect(change < -0.15, "held-out median arrival residual \(change)")
        let d = try #require(v["block_difference_m"])
        #expect((d["mean"]?.doubleValue ?? 0) + 2 * (d["se"]?.doubleValue ?? 1) < 0, "\(d)")
        #expect(FileManager.default.fileExists(atPath: dir + "/out.json"))

        // The site the recording was made on, calibrated again: not shown better, nothing written, exit 1.
        let right = TestPaths.temporaryDirectory()
        let same = try Self.recording(in: right, calibrating: Self.hall(biases: Self.biasesMeters), seconds: "90")
        let unproven = CapturedRun(["calibrate", "--site", same.site, "--trace", same.trace, "--out", right + "/out.json", "--json"])
        #expect(unproven.status == 1 && unproven.err.contains("not shown better"), "\(unproven.err)")
        let u = try #require(try JSONParser.parse(Array(unproven.out.utf8))["validation"])
        #expect(u["refused"]?.stringValue == "unproven" && u["written"]?.boolValue == false, "\(u)")
        #expect(!FileManager.default.fileExists(atPath: right + "/out.json"))

        // Four locators (planar): a blink of four arrivals calibrates (x, y, the offset and one to
        // spare) but predicts none from the others: not judged, said, and — from range differences,
        // where such fits went wrong on real walks — unproven: nothing written, exit 1 with --out.
        var four = try Self.hall(biases: Array(repeating: 0, count: 8))
        four.floors[0].locators = [0, 2, 5, 7].map { four.floors[0].locators[$0] }
        var fourBiased = try Self.hall(biases: Self.biasesMeters)
        fourBiased.floors[0].locators = [0, 2, 5, 7].map { fourBiased.floors[0].locators[$0] }
        let dir4 = TestPaths.temporaryDirectory()
        let few = try Self.recording(in: dir4, calibrating: four, seconds: "90", simulated: fourBiased)
        let notJudged = CapturedRun(["calibrate", "--site", few.site, "--trace", few.trace, "--out", dir4 + "/out.json", "--json"])
        #expect(notJudged.status == 1 && notJudged.err.contains("calibrate with --truth"), "\(notJudged.err)")
        let n = try #require(try JSONParser.parse(Array(notJudged.out.utf8))["validation"])
        #expect(n["judged"]?.boolValue == false && (n["reason"]?.stringValue ?? "").contains("no held-out blink holds two arrivals more"), "\(n)")
        #expect(n["refused"]?.stringValue == "unproven" && n["written"]?.boolValue == false, "\(n)")
        #expect(!FileManager.default.fileExists(atPath: dir4 + "/out.json"))
        // The report alone (no --out) is the product: exit 0, and the fitted biases are in it.
        let report = CapturedRun(["calibrate", "--site", few.site, "--trace", few.trace, "--json"])
        let fitted = try JSONParser.parse(Array(report.out.utf8))["locators"]?.arrayValue
        #expect(report.status == 0 && fitted?.count == 4, "\(report.err)")
    }

    @Test("a trace with ranges and differences on one floor is calibrated from its ranges, the differences counted and named unused")
    func mixed() throws {
        let dir = TestPaths.temporaryDirectory()
        let files = try Self.recording(in: dir, calibrating: Self.hall(biases: Array(repeating: 0, count: 8)), seconds: "20")
        let ranges = dir + "/ranges.csv"
        let sim = CapturedRun(["simulate", "--site", dir + "/biased.json", "--duration", "120", "--seed", "4", "--trace", ranges,
                               "--truth", dir + "/truth-ranges.csv"])
        #expect(sim.status == 0, "\(sim.err)")
        // One file, both kinds (SPEC §2: each row leaves the other kind's cells empty); the difference
        // rows under tags of their own (each tag's rows in time order).
        func lines(_ path: String) throws -> [Substring] { try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst().map { $0 } }
        var text = "t,tag,anchor,range_m,anchor_a,anchor_b,tdoa_m,floor\n"
        for line in try lines(ranges) {
            let c = line.split(separator: ",", omittingEmptySubsequences: false)
            text += "\(c[0]),\(c[1]),\(c[2]),\(c[3]),,,,\(c[4])\n"
        }
        for line in try lines(files.trace) {
            let c = line.split(separator: ",", omittingEmptySubsequences: false)
            text += "\(c[0]),D\(c[1]),,,\(c[2]),\(c[3]),\(c[4]),\(c[5])\n"
        }
        let mixed = dir + "/mixed.csv"
        try Data(text.utf8).write(to: URL(fileURLWithPath: mixed))
        let run = CapturedRun(["calibrate", "--site", files.site, "--trace", mixed, "--json"])
        #expect(run.status == 0, "\(run.err)")
        #expect(run.err.contains("range differences not used: the floor's ranges see each bias whole"), "\(run.err)")
        let json = try JSONParser.parse(Array(run.out.utf8))
        #expect(json["measurement"] == nil && json["floors"]?.arrayValue?.first?["measurement"] == nil, "a floor of ranges keeps the range report")
        #expect(json["skipped"]?.members?.isEmpty ?? true, "\(run.out)")
    }
}
