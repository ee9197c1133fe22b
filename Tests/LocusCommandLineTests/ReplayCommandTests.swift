import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

@Suite("locus replay")
struct ReplayCommandTests {
    @Test("every subcommand prints --help and exits 0")
    func helpForEach() {
        for command in LocusTool.commands {
            let run = CapturedRun([command.spec.name, "--help"])
            #expect(run.status == 0)
            #expect(run.out.contains("usage: locus \(command.spec.name)"))
        }
        #expect(CapturedRun(["--help"]).status == 0)
        #expect(CapturedRun([]).status == 2)
        #expect(CapturedRun(["frobnicate"]).status == 2)
    }

    @Test("usage errors exit 2 and name the option")
    func usageExit() {
        let run = CapturedRun(["replay", "--site", "x.json", "--trace", "t.csv", "--bogus", "1"])
        #expect(run.status == 2)
        #expect(run.err.contains("'--bogus'"))
    }

    @Test("an invalid site exits 2 naming the file and JSON path")
    func invalidSite() throws {
        let site = TestPaths.fixture("sites/invalid/duplicate-address.json")
        let dir = TestPaths.temporaryDirectory()
        let trace = dir + "/trace.csv"
        try "t,anchor,range_m\n0,1,1\n".write(toFile: trace, atomically: false, encoding: .utf8)
        let run = CapturedRun(["replay", "--site", site, "--trace", trace, "--filter", "none"])
        #expect(run.status == 2)
        #expect(run.err.contains("duplicate-address.json"))
        #expect(run.err.contains("floors[0].locators["))
        #expect(run.err.contains("E3104"))
    }

    @Test("a trace without a required column exits 2 naming the file and line")
    func invalidTrace() throws {
        let dir = TestPaths.temporaryDirectory()
        let trace = dir + "/bad.csv"
        try "t,anchor\n0,1\n".write(toFile: trace, atomically: false, encoding: .utf8)
        let run = CapturedRun(["replay", "--site", TestPaths.fixture("sites/hall.json"), "--trace", trace, "--filter", "none"])
        #expect(run.status == 2)
        #expect(run.err.contains("bad.csv:1"))
        #expect(run.err.contains("range_m"))
    }

    @Test("replay --filter none on the real fast run: positions and a JSON summary with accuracy",
          .enabled(if: TestPaths.dataset("cuhksz-planar-uwb") != nil, "../shared/datasets/cuhksz-planar-uwb is not present"))
    func realData() throws {
        let d = try #require(TestPaths.dataset("cuhksz-planar-uwb"))
        let out = TestPaths.temporaryDirectory() + "/positions.csv"
        let run = CapturedRun(["replay", "--site", d + "/site.json", "--trace", d + "/trace.csv", "--truth", d + "/truth.csv",
                               "--filter", "none", "--positions", out, "--json"])
        #expect(run.status == 0, "\(run.err)")
        let summary = try JSONParser.parse(Array(run.out.utf8))
        let fixes = try #require(summary["fixes"]?.intValue)
        #expect(fixes > 500)
        let rmse = try #require(summary["rmse_m"]?.doubleValue)
        // Raw ranges read ~0.2 m long here; plain least squares lands near 0.18 m (dataset README).
        #expect(rmse < 0.25)
        for key in ["skipped", "events", "elapsed_s", "fixes_per_s", "p50_m", "p95_m", "max_m"] {
            #expect(summary[key] != nil, "missing key \(key)")
        }
        let csv = try String(contentsOfFile: out, encoding: .utf8)
        #expect(csv.hasPrefix("t,tag,x,y,z,"))
        #expect(csv.split(separator: "\n").count == fixes + 1)
        #expect(!csv.contains("nan"))
    }
}
