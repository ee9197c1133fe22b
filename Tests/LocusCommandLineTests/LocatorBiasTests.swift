import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// Issue #42, "a filter that earns its keep on real recordings": the online per-locator range biases
/// (`TagLocatorBiasEstimator`, `--locator-bias auto`, the default) on the CUHK-SZ recordings (skipped
/// without the dataset) and their 4-locator subsets, and on simulated walks with and without biases.
@Suite("Locator biases: real recordings and simulated walks")
struct LocatorBiasTests {
    static let dataset = TestPaths.dataset("cuhksz-planar-uwb")

    /// `replay --json` RMSE (m) of `site`, `trace` against `truth` with `options`.
    static func rmse(_ site: String, _ trace: String, _ truth: String, _ options: [String] = []) throws -> Double {
        let run = CapturedRun(["replay", "--site", site, "--trace", trace, "--truth", truth, "--json"] + options)
        #expect(run.status == 0, "\(run.err)")
        return try #require(try JSONParser.parse(Array(run.out.utf8))["rmse_m"]?.doubleValue)
    }

    /// The recording's directory: "fast" (the dataset's top), "mid" (runs/mid), "static".
    static func directory(_ run: String) throws -> String {
        let d = try #require(dataset)
        switch run {
        case "fast": return d
        case "mid": return d + "/runs/mid"
        default: return d + "/" + run
        }
    }

    /// The site and trace of `dir` restricted to the locators `keep` (addresses), written to a
    /// temporary directory: a 4-locator stand-in for the held-back recordings.
    static func subset(_ dir: String, keep: Set<Int>) throws -> (site: String, trace: String) {
        let out = TestPaths.temporaryDirectory()
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/site.json"))) as? [String: Any])
        var site = json
        var floors = try #require(json["floors"] as? [[String: Any]])
        let locators = try #require(floors[0]["locators"] as? [[String: Any]])
        floors[0]["locators"] = locators.filter { keep.contains(($0["address"] as? Int) ?? -1) }
        site["floors"] = floors
        try JSONSerialization.data(withJSONObject: site).write(to: URL(fileURLWithPath: out + "/site.json"))
        let text = try String(contentsOfFile: dir + "/trace.csv", encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        let header = lines.removeFirst()
        let column = try #require(header.split(separator: ",").firstIndex(of: "anchor"))
        let kept = lines.filter { line in
            let cells = line.split(separator: ",", omittingEmptySubsequences: false)
            return cells.count > column && keep.contains(Int(cells[column]) ?? -1)
        }
        try ([String(header)] + kept.map(String.init)).joined(separator: "\n").appending("\n")
            .write(toFile: out + "/trace.csv", atomically: true, encoding: .utf8)
        return (out + "/site.json", out + "/trace.csv")
    }

    @Test("CUHK-SZ fast and mid: the causal RMSE with locator biases ≥ 10 % below --locator-bias off, and no worse on static/ (where the tag stands still and nothing is applied)",
          .enabled(if: dataset != nil, "../shared/datasets/cuhksz-planar-uwb is not present"),
          arguments: [("fast", 0.90), ("mid", 0.90), ("static", 1.0)])
    func earnsItsKeep(_ run: String, _ ratio: Double) throws {
        let d = try Self.directory(run)
        let site = d + "/site.json", trace = d + "/trace.csv", truth = d + "/truth.csv"
        let on = try Self.rmse(site, trace, truth)
        let off = try Self.rmse(site, trace, truth, ["--locator-bias", "off"])
        #expect(on <= ratio * off, "\(run): \(on) m with locator biases, \(off) m without")
    }

    @Test("CUHK-SZ fast, mid, static and 4-locator subsets: smoothed ≤ causal; causal ≤ raw (fast's 4 corners too since the soft long gate: 0.0998 vs 0.1042 m, was 0.1060)",
          .enabled(if: dataset != nil, "../shared/datasets/cuhksz-planar-uwb is not present"),
          arguments: ["fast", "mid", "static"])
    func orderOfOutputs(_ run: String) throws {
        let d = try Self.directory(run)
        let truth = d + "/truth.csv"
        var cases: [(String, String, String)] = [("all", d + "/site.json", d + "/trace.csv")]
        for (name, keep) in [("corners", Set([0, 2, 4, 6])), ("lopsided", Set([0, 1, 2, 5])), ("edges", Set([1, 3, 5, 7]))] {
            let s = try Self.subset(d, keep: keep)
            cases.append((name, s.site, s.trace))
        }
        for (name, site, trace) in cases {
            let raw = try Self.rmse(site, trace, truth, ["--filter", "none"])
            let causal = try Self.rmse(site, trace, truth)
            let smoothed = try Self.rmse(site, trace, truth, ["--smooth"])
            #expect(smoothed <= causal, "\(run) \(name): smoothed \(smoothed) m, causal \(causal) m")
            #expect(causal <= raw, "\(run) \(name): causal \(causal) m, raw \(raw) m")
        }
    }

    /// A planar 8-locator room (the CUHK-SZ layout) with per-locator biases 0.12–0.32 m when `biased`.
    static func room(biased: Bool) -> String {
        let xy: [(Double, Double)] = [(-3.42, 3.01), (0, 3.01), (3.61, 2.98), (3.6, 0), (3.57, -3.01), (-0.01, -2.97), (-3.47, -2.96), (-3.49, -0.01)]
        let biases = [0.185, 0.122, 0.144, 0.137, 0.235, 0.239, 0.292, 0.317]
        let locators = xy.enumerated().map { i, p in
            "{\"address\": \(i), \"x\": \(p.0), \"y\": \(p.1), \"z\": 1.045" + (biased ? ", \"biasM\": \(biases[i])}" : "}")
        }
        return """
        {"building": {"id": "room"}, "floors": [{"id": "F1", "originX": -4, "originY": -3.5, "widthM": 8, "heightM": 7,
          "tagHeightM": 0.96, "sessionId": 1, "locators": [\(locators.joined(separator: ", "))], "zones": []}]}
        """
    }

    @Test("Simulated 300 s random walks in an 8-locator room, 5 % NLOS: with per-locator biases 0.12–0.32 m and the uncalibrated site, the causal RMSE ≥ 25 % below --locator-bias off; without biases (10 % NLOS), within 0.5 mm of it",
          arguments: [UInt64(1), 2])
    func simulated(seed: UInt64) throws {
        let dir = TestPaths.temporaryDirectory()
        try Self.room(biased: true).write(toFile: dir + "/biased.json", atomically: true, encoding: .utf8)
        try Self.room(biased: false).write(toFile: dir + "/raw.json", atomically: true, encoding: .utf8)
        for (name, site, nlos) in [("biased", "biased.json", "0.05"), ("unbiased", "raw.json", "0.1")] {
            let sim = CapturedRun(["simulate", "--site", dir + "/" + site, "--trace", dir + "/t.csv", "--truth", dir + "/truth.csv",
                                   "--duration", "300", "--random-walk", "--seed", "\(seed)", "--nlos", nlos])
            #expect(sim.status == 0, "\(sim.err)")
            let on = try Self.rmse(dir + "/raw.json", dir + "/t.csv", dir + "/truth.csv")
            let off = try Self.rmse(dir + "/raw.json", dir + "/t.csv", dir + "/truth.csv", ["--locator-bias", "off"])
            if name == "biased" {
                #expect(on <= 0.75 * off, "seed \(seed), biased: \(on) m with locator biases, \(off) m without")
                let smoothed = try Self.rmse(dir + "/raw.json", dir + "/t.csv", dir + "/truth.csv", ["--smooth"])
                #expect(smoothed <= on, "seed \(seed), biased: smoothed \(smoothed) m, causal \(on) m")
            } else {
                #expect(on <= off + 0.0005, "seed \(seed), no biases: \(on) m with locator biases, \(off) m without")
            }
        }
    }
}
