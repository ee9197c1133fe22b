import Foundation
@testable import LocusCommandLine
import LocusCore
import LocusTestSupport
import Testing

@Suite("Exit codes: --help and behaviour agree")
struct ExitCodeTests {
    /// The subcommands that write files, and so can fail at run time with exit 1 (E5005) — and
    /// `stream`, which also fails so when its network endpoint cannot be used (E5008).
    static let writers: Set<String> = ["replay", "stream", "serve", "zones", "simulate", "calibrate", "geometry"]

    @Test("every subcommand's --help lists its exit codes: 0 and 2 always, 1 where the command writes files")
    func helpListsCodes() {
        for command in LocusTool.commands {
            // One line: the discussion may wrap anywhere.
            let help = CapturedRun([command.spec.name, "--help"]).out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            let name = command.spec.name
            #expect(help.contains("Exit codes: 0"), "\(name) --help lists no exit codes")
            #expect(help.contains(", 2 usage error"), "\(name) --help does not document 2")
            #expect(help.contains(", 1 failure at run time") == Self.writers.contains(name), "\(name) --help and its outputs disagree on 1")
        }
        #expect(CapturedRun(["--help"]).out.contains("exit codes: 0 success, 1"))
    }

    @Test("an output that cannot be written exits 1 (E5005) for geometry --svg, zones --events and simulate --trace")
    func unwritableOutputExitsOne() throws {
        let dir = TestPaths.temporaryDirectory()
        let unwritable = dir + "/no-such-directory/out"
        let site = TestPaths.fixture("sites/hall.json")
        let geometry = CapturedRun(["geometry", "--site", site, "--svg", unwritable + ".svg"])
        #expect(geometry.status == 1 && geometry.err.contains("E5005"), "\(geometry.err)")

        try "t,tag,x,y\n0,T1,5,5\n".write(toFile: dir + "/p.csv", atomically: false, encoding: .utf8)
        let zones = CapturedRun(["zones", "--site", site, "--positions", dir + "/p.csv", "--events", unwritable + ".jsonl"])
        #expect(zones.status == 1 && zones.err.contains("E5005"), "\(zones.err)")

        let simulate = CapturedRun(["simulate", "--site", site, "--trace", unwritable + ".csv", "--truth", dir + "/truth.csv",
                                    "--duration", "1"])
        #expect(simulate.status == 1 && simulate.err.contains("E5005"), "\(simulate.err)")

        // Invalid input is 2, for the same commands.
        #expect(CapturedRun(["geometry", "--site", dir + "/missing.json"]).status == 2)
        #expect(CapturedRun(["zones", "--site", site, "--positions", dir + "/missing.csv"]).status == 2)
    }
}
