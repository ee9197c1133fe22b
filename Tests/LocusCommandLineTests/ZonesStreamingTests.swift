import Foundation
@testable import LocusCommandLine
@testable import LocusEvaluation
@testable import LocusReports
@testable import LocusCore
import LocusIO
import LocusTestSupport
import Testing

/// `locus zones` judging a position stream as it is read: pipes in and out, rows out of time order,
/// memory that does not grow with the stream.
@Suite("Streamed zones")
struct ZonesStreamingTests {
    static let site = TestPaths.fixture("sites/hall.json")

    /// Positions of the hall walk (from `locus replay`) and the events `zones` writes for them.
    static func positions(in dir: String) throws -> (positions: String, events: [UInt8]) {
        let replay = CapturedRun(["replay", "--site", site, "--trace", TestPaths.fixture("traces/hall-walk.csv"), "--filter", "none",
                                  "--positions", dir + "/p.csv"])
        #expect(replay.status == 0, "\(replay.err)")
        let zones = CapturedRun(["zones", "--site", site, "--positions", dir + "/p.csv", "--events", dir + "/e.jsonl"])
        #expect(zones.status == 0, "\(zones.err)")
        return (dir + "/p.csv", TestPaths.bytes(dir + "/e.jsonl"))
    }

    @Test("positions from a pipe, events to standard output as released: the bytes of files in and out")
    func pipes() throws {
        let dir = TestPaths.temporaryDirectory()
        let (path, expected) = try Self.positions(in: dir)
        #expect(expected.count > 1_000)
        let r = try StreamingReplayTests.locus(["zones", "--site", Self.site, "--positions", "-", "--events", "-"],
                                               input: TestPaths.bytes(path), executable: StreamingReplayTests.locusPath)
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out == expected)
        // The summary went to stderr.
        #expect(r.err.contains("fixes judged"), "\(r.err)")
    }

    @Test("rows out of time order are sorted (said on stderr): the same events to a file (written again) and to stdout (order checked first)")
    func outOfOrder() throws {
        let dir = TestPaths.temporaryDirectory()
        let (path, expected) = try Self.positions(in: dir)
        // The rows' halves swapped: the second half first (stable order within equal times kept).
        let lines = String(decoding: TestPaths.bytes(path), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let body = lines.dropFirst().filter { !$0.isEmpty }
        let half = body.count / 2
        let swapped = ([lines[0]] + body[half...] + body[..<half]).joined(separator: "\n") + "\n"
        try swapped.write(toFile: dir + "/swapped.csv", atomically: false, encoding: .utf8)
        let toFile = CapturedRun(["zones", "--site", Self.site, "--positions", dir + "/swapped.csv", "--events", dir + "/s.jsonl"])
        #expect(toFile.status == 0, "\(toFile.err)")
        #expect(toFile.err.contains("not in time order"), "\(toFile.err)")
        #expect(TestPaths.bytes(dir + "/s.jsonl") == expected)
        let toStdout = try StreamingReplayTests.locus(["zones", "--site", Self.site, "--positions", "-"],
                                                      input: Array(swapped.utf8), executable: StreamingReplayTests.locusPath)
        #expect(toStdout.status == 0, "\(toStdout.err)")
        #expect(toStdout.out == expected)
    }

    @Test("memory does not grow with the stream: 50× the positions (2 M rows) through a pipe, the same peak RSS (within 10 % + 4 MB)",
          .enabled(if: ResidentMemory.measuresTheCode, "\(ResidentMemory.sanitizerMessage)"))
    func boundedMemory() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else {
            print("skipped: /usr/bin/time is absent (scripts/setup installs it)")
            return
        }
        func peakKilobytes(rounds: Int) throws -> Int {
            // 40 tags circling the hall at 4 Hz, generated piece by piece into the pipe.
            var k = -1
            let generator: () -> [UInt8]? = {
                if k >= rounds { return nil }
                var text: [UInt8] = k < 0 ? Array("t,tag,x,y\n".utf8) : []
                k = max(k, 0)
                let end = min(rounds, k + 500)
                while k < end {
                    for tag in 0..<40 {
                        let angle = Double(k) * 0.0125 + Double(tag)
                        StreamingReplayTests.appendMilli(k * 250, to: &text)
                        text.append(contentsOf: ",T".utf8)
                        DecimalText.append(tag, to: &text)
                        text.append(UInt8(ascii: ","))
                        StreamingReplayTests.appendMilli(Int((20 + 12 * cos(angle)) * 1000), to: &text)
                        text.append(UInt8(ascii: ","))
                        StreamingReplayTests.appendMilli(Int((12.5 + 8 * sin(angle)) * 1000), to: &text)
                        text.append(0x0A)
                    }
                    k += 1
                }
                return text
            }
            let r = try StreamingReplayTests.peakRSS(["zones", "--site", Self.site, "--positions", "-", "--json"], generator: generator)
            #expect(r.out.contains("\"fixes\":\(rounds * 40)"), "\(r.out)")
            return r.kilobytes
        }
        let short = try peakKilobytes(rounds: 1_000), long = try peakKilobytes(rounds: 50_000)
        #expect(short > 0 && long > 0)
        #expect(Double(long) <= Double(short) * 1.1 + 4_096, "peak RSS \(short) kB for 40,000 rows, \(long) kB for 2,000,000")
    }
}
