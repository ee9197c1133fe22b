import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// `locus calibrate` without `--truth`: the report, the site it writes, the survey check, and the
/// real recordings calibrated from their own ranges.
@Suite("locus calibrate without truth")
struct CalibrateWithoutTruthTests {
    /// Biases of the simulated site, metres.
    static let biasesMeters: [Double] = [0.12, 0.28, 0.04, 0.22, 0.18, 0.07]

    /// The 20 m × 12 m floor of `CalibrateCommandTests` with `biases`, locator `moved` displaced by `by`.
    static func site(biases: [Double], moved: Int? = nil, by: Point2 = Point2(x: 0, y: 0)) -> Site {
        var site = CalibrateCommandTests.site(biases: biases)
        if let k = moved {
            site.floors[0].locators[k].position.x += by.x
            site.floors[0].locators[k].position.y += by.y
        }
        return site
    }

    /// Simulates 5 min of walking on the biased site and writes `site` (the one to calibrate).
    static func recording(in dir: String, calibrating site: Site) throws -> (site: String, trace: String) {
        let biased = dir + "/biased.json", surveyed = dir + "/site.json", trace = dir + "/trace.csv"
        try Data(SiteEncoder.encode(Self.site(biases: biasesMeters))).write(to: URL(fileURLWithPath: biased))
        try Data(SiteEncoder.encode(site)).write(to: URL(fileURLWithPath: surveyed))
        let sim = CapturedRun(["simulate", "--site", biased, "--trace", trace, "--truth", dir + "/truth.csv", "--duration", "300",
                               "--random-walk", "--seed", "5"])
        #expect(sim.status == 0, "\(sim.err)")
        return (surveyed, trace)
    }

    @Test("--json gives every locator's bias ± σ, noise, position offset, flagged, observable and the fit's residual RMS; --out carries the biases to 2 cm")
    func report() throws {
        let dir = TestPaths.temporaryDirectory()
        let files = try Self.recording(in: dir, calibrating: Self.site(biases: Array(repeating: 0, count: 6)))
        let run = CapturedRun(["calibrate", "--site", files.site, "--trace", files.trace, "--out", dir + "/out.json", "--json"])
        #expect(run.status == 0, "\(run.err)")
        let json = try JSONParser.parse(Array(run.out.utf8))
        #expect(json["mode"]?.stringValue == "without_truth")
        let rms = try #require(json["residual_rms_m"]?.doubleValue)
        #expect((0.07...0.12).contains(rms), "residual RMS \(rms)")
        let locators = try #require(json["locators"]?.arrayValue)
        #expect(locators.count == 6)
        for l in locators {
            for key in ["address", "bias_m", "bias_sd_m", "noise_m", "position_offset_m", "flagged", "observable", "position_check"] {
                #expect(l[key] != nil, "missing \(key) in \(l)")
            }
            // The survey check per locator: what was checkable, and the test when something was.
            let check = l["position_check"]
            #expect(check?["checkable"]?.boolValue != nil && check?["summary"]?.stringValue != nil, "\(l)")
            if check?["checkable"]?.boolValue == true {
                let test = check?["test"]
                #expect(test?["decision"]?.stringValue == "fits" && (test?["p_value"]?.doubleValue ?? 0) > 1e-4
                        && test?["alpha"]?.doubleValue == 0.0001 && test?["dof"]?.arrayValue?.count == 2, "\(l)")
            }
            #expect(l["flagged"]?.boolValue == false && l["observable"]?.boolValue == true)
        }
        let site = try SiteDecoder.decode(TestPaths.bytes(dir + "/out.json"), file: "out.json")
        let errors = zip(site.floors[0].locators.map(\.biasMeters), Self.biasesMeters).map { $0 - $1 }
        let error = (errors.reduce(0) { $0 + $1 * $1 } / Double(errors.count)).squareRoot()
        #expect(error <= 0.02, "bias RMS error \(error): \(site.floors[0].locators.map(\.biasMeters))")
        // The text report names the method and every locator.
        let text = CapturedRun(["calibrate", "--site", files.site, "--trace", files.trace])
        #expect(text.status == 0)
        #expect(text.out.contains("without truth") && text.out.contains("0x0205"), "\(text.out)")
        #expect(text.out.contains("0x0204 position checkable ("), "\(text.out)")
        #expect(!text.out.contains("left where surveyed"), "nothing flagged, no hint")
    }

    @Test("a locator surveyed 0.5 m off is flagged on stderr and in --json; --fix-positions writes it back within 5 cm")
    func surveyCheck() throws {
        let dir = TestPaths.temporaryDirectory()
        let files = try Self.recording(in: dir, calibrating: Self.site(biases: Array(repeating: 0, count: 6), moved: 4, by: Point2(x: 0.3, y: 0.4)))
        let run = CapturedRun(["calibrate", "--site", files.site, "--trace", files.trace, "--out", dir + "/fixed.json", "--fix-positions", "--json"])
        #expect(run.status == 0, "\(run.err)")
        #expect(run.err.contains("flagged") && run.err.contains("0x0204") && run.err.contains("from its surveyed position"), "\(run.err)")
        let locators = try #require(try JSONParser.parse(Array(run.out.utf8))["locators"]?.arrayValue)
        #expect(locators.map { $0["flagged"]?.boolValue == true } == [false, false, false, false, true, false])
        #expect(locators[4]["position_check"]?["test"]?["decision"]?.stringValue == "flagged", "\(locators[4])")
        let fixed = try SiteDecoder.decode(TestPaths.bytes(dir + "/fixed.json"), file: "fixed.json").floors[0].locators[4].position
        let truth = Self.site(biases: Self.biasesMeters).floors[0].locators[4].position
        let miss = ((fixed.x - truth.x) * (fixed.x - truth.x) + (fixed.y - truth.y) * (fixed.y - truth.y)).squareRoot()
        #expect(miss <= 0.05, "moved back to \(fixed), \(miss) m from \(truth)")
        // Without --fix-positions the text says the flagged locator stays and how to move it; with it, not.
        let plain = CapturedRun(["calibrate", "--site", files.site, "--trace", files.trace])
        #expect(plain.out.contains("flagged 0x0204: left where surveyed") && plain.out.contains("--fix-positions moves a flagged locator"),
                "\(plain.out)")
        let fixing = CapturedRun(["calibrate", "--site", files.site, "--trace", files.trace, "--fix-positions"])
        #expect(!fixing.out.contains("left where surveyed"), "\(fixing.out)")
    }

    @Test("geometry --trace marks the flagged locator on the SVG with the position the recording fits; a correct site has no mark")
    func geometrySurvey() throws {
        let dir = TestPaths.temporaryDirectory()
        let files = try Self.recording(in: dir, calibrating: Self.site(biases: Array(repeating: 0, count: 6), moved: 4, by: Point2(x: 0.3, y: 0.4)))
        let run = CapturedRun(["geometry", "--site", files.site, "--trace", files.trace, "--svg", dir + "/map.svg", "--json"])
        #expect(run.status == 0, "\(run.err)")
        let survey = try #require(try JSONParser.parse(Array(run.out.utf8))["survey"])
        #expect(survey["flagged"]?.doubleValue == 1)
        // The held-out blocks confirm the move, as `calibrate --fix-positions` judges it before moving.
        let confirmation = survey["confirmation"]
        #expect(confirmation?["positions"]?["accepted"]?.boolValue == true
                && confirmation?["positions"]?["moved"]?.arrayValue?.compactMap(\.stringValue) == ["0x0204"]
                && confirmation?["held_out_blocks"]?.doubleValue == 15, "\(run.out)")
        let svg = String(decoding: TestPaths.bytes(dir + "/map.svg"), as: UTF8.self)
        #expect(svg.contains("0x0204 fits") && svg.contains("flagged locator") && !svg.contains("not confirmed"),
                "the SVG marks 0x0204 and explains the mark")
        let text = CapturedRun(["geometry", "--site", files.site, "--trace", files.trace])
        #expect(text.out.contains("1 locator flagged") && text.out.contains("0x0204 fits")
                && text.out.contains("held-out blocks confirm moving 0x0204: median |range residual| "), "\(text.out)")
        // The first 32 s of the same recording: the survey check flags a locator, which the held-out
        // blocks (3 of 10 s fitted, 1 held out… 2 of them) do not confirm — the map and the text say so.
        // And 30 s (three blocks of 10 s): one held-out block, too little to judge at all.
        let rows = String(decoding: TestPaths.bytes(files.trace), as: UTF8.self).split(separator: "\n")
        for seconds in [32.0, 30.0] {
            let short = dir + "/short.csv"
            try (([rows[0]] + rows.dropFirst().filter { (Double($0.prefix { $0 != "," }) ?? .infinity) < seconds }).joined(separator: "\n") + "\n")
                .write(toFile: short, atomically: false, encoding: .utf8)
            let brief = CapturedRun(["geometry", "--site", files.site, "--trace", short, "--svg", dir + "/short.svg", "--json"])
            #expect(brief.status == 0, "\(brief.err)")
            let briefSurvey = try #require(try JSONParser.parse(Array(brief.out.utf8))["survey"])
            let c = briefSurvey["confirmation"]
            #expect((briefSurvey["flagged"]?.doubleValue ?? 0) >= 1, "\(seconds) s: \(brief.out)")
            if seconds == 32 {
                #expect(c?["judged"]?.boolValue == true && c?["refused"]?.stringValue == "positions", "\(brief.out)")
            } else {
                #expect(c?["judged"]?.boolValue == false && c?["held_out_blocks"]?.doubleValue == 1
                        && c?["reason"]?.stringValue?.contains("1 held-out block with rows (2 needed") == true, "\(brief.out)")
            }
            let map = String(decoding: TestPaths.bytes(dir + "/short.svg"), as: UTF8.self)
            #expect(map.contains("m away, not confirmed") && !map.contains("m away<"), "\(seconds) s: every flag on the map is unconfirmed")
            let said = CapturedRun(["geometry", "--site", files.site, "--trace", short]).out
            #expect(said.contains("held-out blocks do not confirm the flags: ") && !said.contains("--holdout-block"), "\(said)")
        }

        let clean = TestPaths.temporaryDirectory()
        let good = try Self.recording(in: clean, calibrating: Self.site(biases: Array(repeating: 0, count: 6)))
        let ok = CapturedRun(["geometry", "--site", good.site, "--trace", good.trace, "--svg", clean + "/map.svg"])
        #expect(ok.status == 0, "\(ok.err)")
        #expect(ok.out.contains("every locator fits its surveyed position") && ok.out.contains("checkable: ")
                && !ok.out.contains("held-out"), "\(ok.out)")
        #expect(!String(decoding: TestPaths.bytes(clean + "/map.svg"), as: UTF8.self).contains("flagged locator"))
    }

    @Test("a trace of another site calibrates nothing: exit 1 naming the cause")
    func honestResult() throws {
        let dir = TestPaths.temporaryDirectory()
        let files = try Self.recording(in: dir, calibrating: Self.site(biases: Array(repeating: 0, count: 6)))
        let run = CapturedRun(["calibrate", "--site", TestPaths.fixture("sites/hall.json"), "--trace", files.trace])
        #expect(run.status == 1)
        #expect(run.err.contains("unknown_anchor"), "\(run.err)")
    }

    /// The trace at `path` keeping every `k`-th timestamp (the real runs hold 8 ranges per 10 ms:
    /// a quarter of them calibrates as well, four times faster in a debug build).
    static func thinned(_ path: String, every k: Int, to out: String) throws {
        let lines = String(decoding: TestPaths.bytes(path), as: UTF8.self).split(separator: "\n")
        var kept = [lines[0]]
        var index: [Substring: Int] = [:]
        for line in lines.dropFirst() {
            let t = line.prefix { $0 != "," }
            if index[t] == nil { index[t] = index.count }
            if index[t]! % k == 0 { kept.append(line) }
        }
        try (kept.joined(separator: "\n") + "\n").write(toFile: out, atomically: false, encoding: .utf8)
    }

    @Test("real runs calibrated from their own ranges: the causal RMSE within 10 % of the truth-calibrated figure (fast ≤ 0.075 m, mid ≤ 0.067 m), across runs and in-sample; no locator flagged",
          .enabled(if: TestPaths.dataset("cuhksz-planar-uwb") != nil, "../shared/datasets/cuhksz-planar-uwb is not present"))
    func realData() throws {
        let d = try #require(TestPaths.dataset("cuhksz-planar-uwb"))
        let dir = TestPaths.temporaryDirectory()
        let runs = [("fast", d, 0.075), ("mid", d + "/runs/mid", 0.067)]
        for (name, directory, _) in runs {
            try Self.thinned(directory + "/trace.csv", every: 4, to: dir + "/\(name).csv")
            let calibrate = CapturedRun(["calibrate", "--site", d + "/site.json", "--trace", dir + "/\(name).csv",
                                         "--out", dir + "/\(name)-cal.json", "--json"])
            #expect(calibrate.status == 0, "\(calibrate.err)")
            let locators = try #require(try JSONParser.parse(Array(calibrate.out.utf8))["locators"]?.arrayValue)
            #expect(!locators.contains { $0["flagged"]?.boolValue == true }, "\(calibrate.err)")
            for (other, otherDirectory, bound) in runs {
                let rmse = try CalibrateCommandTests.replayRMSE(site: dir + "/\(name)-cal.json", run: otherDirectory, [])
                #expect(rmse <= bound, "calibrated on \(name), replayed \(other): \(rmse)")
            }
        }
    }

    @Test("the real static session (30 points as 30 tags, all from t = 0): place blocks keep the points' shared errors out of the spread, so no locator is flagged (4 were, at ± 1–2 mm)",
          .enabled(if: TestPaths.dataset("cuhksz-planar-uwb") != nil, "../shared/datasets/cuhksz-planar-uwb is not present"))
    func realStaticSession() throws {
        let d = try #require(TestPaths.dataset("cuhksz-planar-uwb"))
        let dir = TestPaths.temporaryDirectory()
        try Self.thinned(d + "/static/trace.csv", every: 4, to: dir + "/static.csv")
        let run = CapturedRun(["geometry", "--site", d + "/static/site.json", "--trace", dir + "/static.csv", "--json"])
        #expect(run.status == 0, "\(run.err)")
        let survey = try #require(try JSONParser.parse(Array(run.out.utf8))["survey"])
        let locators = try #require(survey["locators"]?.arrayValue)
        #expect(locators.count == 8 && survey["flagged"]?.doubleValue == 0, "\(run.out)")
        // Not everything is left unjudged: some locators are still checked (place blocks, not none).
        #expect(locators.contains { $0["position_check"]?["test"]?["decision"]?.stringValue == "fits" }, "\(run.out)")
    }

    @Test("real runs with 4 of their 8 anchors (the corners; the others' rows dropped): the survey check says not checkable or stays quiet, never a flag",
          .enabled(if: TestPaths.dataset("cuhksz-planar-uwb") != nil, "../shared/datasets/cuhksz-planar-uwb is not present"))
    func realDataFourAnchors() throws {
        let d = try #require(TestPaths.dataset("cuhksz-planar-uwb"))
        let dir = TestPaths.temporaryDirectory()
        var site = try SiteDecoder.decode(TestPaths.bytes(d + "/site.json"), file: "site.json")
        let kept: Set<UInt16> = [0, 2, 4, 6]
        site.floors[0].locators.removeAll { !kept.contains($0.address.rawValue) }
        try Data(SiteEncoder.encode(site)).write(to: URL(fileURLWithPath: dir + "/site4.json"))
        for (name, directory) in [("fast", d), ("mid", d + "/runs/mid")] {
            try Self.thinned(directory + "/trace.csv", every: 4, to: dir + "/\(name)-all.csv")
            let lines = String(decoding: TestPaths.bytes(dir + "/\(name)-all.csv"), as: UTF8.self).split(separator: "\n")
            let column = lines[0].split(separator: ",").firstIndex(of: "anchor") ?? 1
            let rows = lines.dropFirst().filter { line in
                let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                return fields.count > column && UInt16(fields[column]).map(kept.contains) == true
            }
            try ([String(lines[0])] + rows.map(String.init)).joined(separator: "\n").appending("\n").write(toFile: dir + "/\(name).csv", atomically: false, encoding: .utf8)
            let run = CapturedRun(["calibrate", "--site", dir + "/site4.json", "--trace", dir + "/\(name).csv", "--holdout-block", "0", "--json"])
            #expect(run.status == 0, "\(run.err)")
            let locators = try #require(try JSONParser.parse(Array(run.out.utf8))["locators"]?.arrayValue)
            #expect(locators.count == 4)
            #expect(!locators.contains { $0["flagged"]?.boolValue == true }, "\(name): \(run.err)")
            for l in locators { print("4 anchors, \(name): \(l["address"]?.stringValue ?? "") \(l["position_check"]?["summary"]?.stringValue ?? "-")") }
        }
    }
}
