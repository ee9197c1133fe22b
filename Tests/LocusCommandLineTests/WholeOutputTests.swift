#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import LocusCommandLine
import LocusTestSupport
import Testing

/// SPEC §5, "Output files appear whole or not at all: a run that fails leaves files that existed as
/// they were" (issue #41 item 6): the commands' output files are written aside and put in place
/// only by a run that passed.
@Suite("Whole outputs")
struct WholeOutputTests {
    static let site = TestPaths.fixture("sites/hall.json")
    static let trace = TestPaths.fixture("traces/hall-walk.csv")
    static let truth = TestPaths.fixture("traces/hall-walk-truth.csv")

    /// The directory's entries, sorted (a temporary file left behind shows here).
    static func entries(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }

    /// A directory with the old outputs and a `.gz` of the hall trace cut in half.
    static func preparedDirectory() throws -> String {
        let dir = TestPaths.temporaryDirectory()
        let gz = try TraceStreamTestsGzip.gzip(TestPaths.bytes(trace))
        #expect(FileManager.default.createFile(atPath: dir + "/cut.csv.gz", contents: Data(gz.prefix(gz.count / 2))))
        #expect(FileManager.default.createFile(atPath: dir + "/p.csv", contents: Data("old positions\n".utf8)))
        #expect(FileManager.default.createFile(atPath: dir + "/e.jsonl", contents: Data("old events\n".utf8)))
        #expect(FileManager.default.createFile(atPath: dir + "/r.svg", contents: Data("old report\n".utf8)))
        return dir
    }

    @Test("a truncated .gz replay leaves the existing --positions, --events and --report byte-identical, and no temporary file")
    func truncatedGzipKeepsOldOutputs() throws {
        let dir = try Self.preparedDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let before = Self.entries(dir)
        let run = CapturedRun(["replay", "--site", Self.site, "--trace", dir + "/cut.csv.gz", "--truth", Self.truth,
                               "--positions", dir + "/p.csv", "--events", dir + "/e.jsonl", "--report", dir + "/r.svg"])
        #expect(run.status == 2, "\(run.err)")
        #expect(run.err.contains("E5004"))
        #expect(TestPaths.bytes(dir + "/p.csv") == Array("old positions\n".utf8))
        #expect(TestPaths.bytes(dir + "/e.jsonl") == Array("old events\n".utf8))
        #expect(TestPaths.bytes(dir + "/r.svg") == Array("old report\n".utf8))
        #expect(Self.entries(dir) == before)
    }

    @Test("a replay ended by SIGINT or SIGTERM mid-run (the locus process) leaves the old outputs and removes its staged files", arguments: [SIGINT, SIGTERM])
    func signalKeepsOldOutputs(signal: Int32) throws {
        let dir = try Self.preparedDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let before = Self.entries(dir)
        // The trace comes through a pipe held open: the run waits for it with its outputs staged.
        let live = try LiveProcess(["replay", "--site", Self.site, "--trace", "-", "--positions", dir + "/p.csv", "--events", dir + "/e.jsonl"])
        let rows = String(decoding: TestPaths.bytes(Self.trace), as: UTF8.self).split(separator: "\n")
        live.write(Array((rows.prefix(2_000).joined(separator: "\n") + "\n").utf8))
        #expect(live.wait { Self.entries(dir).contains { $0.hasPrefix(".p.csv.locus-") } }, "the positions are staged: \(Self.entries(dir))")
        live.signal(signal)
        let status = live.finish()
        #expect(status == signal, "ended by the signal: \(status) \(live.err)")
        #expect(TestPaths.bytes(dir + "/p.csv") == Array("old positions\n".utf8))
        #expect(TestPaths.bytes(dir + "/e.jsonl") == Array("old events\n".utf8))
        #expect(Self.entries(dir) == before, "no staged file left: \(Self.entries(dir))")
    }

    @Test("a replay with no fix (exit 1) leaves the existing outputs as they were")
    func failedVerdictKeepsOldOutputs() throws {
        let dir = try Self.preparedDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A trace of another site: every row's anchor is unknown, no fix.
        #expect(FileManager.default.createFile(atPath: dir + "/foreign.csv", contents: Data("t,anchor,range_m,tag\n0,999,1.0,a\n0.25,998,2.0,a\n".utf8)))
        let before = Self.entries(dir)
        let run = CapturedRun(["replay", "--site", Self.site, "--trace", dir + "/foreign.csv",
                               "--positions", dir + "/p.csv", "--events", dir + "/e.jsonl"])
        #expect(run.status == 1, "\(run.err)")
        #expect(TestPaths.bytes(dir + "/p.csv") == Array("old positions\n".utf8))
        #expect(TestPaths.bytes(dir + "/e.jsonl") == Array("old events\n".utf8))
        #expect(Self.entries(dir) == before)
    }

    @Test("a successful replay replaces the outputs, through a symlink to its target, leaving nothing beside them")
    func successReplacesThroughSymlink() throws {
        let dir = try Self.preparedDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(symlink("e.jsonl", dir + "/link.jsonl") == 0)  // relative, as `ln -s` makes them
        let before = Self.entries(dir)
        let run = CapturedRun(["replay", "--site", Self.site, "--trace", Self.trace, "--truth", Self.truth,
                               "--positions", dir + "/p.csv", "--events", dir + "/link.jsonl", "--report", dir + "/r.svg"])
        #expect(run.status == 0, "\(run.err)")
        let positions = TestPaths.bytes(dir + "/p.csv")
        #expect(positions.starts(with: Array("t,tag,x,y".utf8)))
        #expect(String(decoding: TestPaths.bytes(dir + "/e.jsonl"), as: UTF8.self).contains("\"event\""))
        #expect(String(decoding: TestPaths.bytes(dir + "/r.svg"), as: UTF8.self).contains("<svg"))
        var info = stat()
        #expect(lstat(dir + "/link.jsonl", &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, "the link stays a link")
        #expect(Self.entries(dir) == before)
    }

    @Test("zones --events: a run with no fix leaves the old file; simulate writes its pair whole")
    func zonesAndSimulate() throws {
        let dir = try Self.preparedDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileManager.default.createFile(atPath: dir + "/none.csv", contents: Data("t,tag,x,y\n".utf8)))
        let before = Self.entries(dir)
        let zones = CapturedRun(["zones", "--site", Self.site, "--positions", dir + "/none.csv", "--events", dir + "/e.jsonl"])
        #expect(zones.status == 1, "\(zones.err)")
        #expect(TestPaths.bytes(dir + "/e.jsonl") == Array("old events\n".utf8))
        #expect(Self.entries(dir) == before)

        // simulate into a directory that does not exist: neither file appears, nothing is left.
        let simulate = CapturedRun(["simulate", "--site", Self.site, "--trace", dir + "/t.csv", "--truth", dir + "/missing/truth.csv",
                                    "--duration", "2"])
        #expect(simulate.status != 0)
        #expect(Self.entries(dir) == before, "the trace is not written when its truth cannot be")
    }
}
