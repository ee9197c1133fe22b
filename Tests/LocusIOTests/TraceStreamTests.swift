import Foundation
import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// The streamed reader reads what the whole-file reader reads, whatever the chunk size and however
/// the bytes arrive (file, gzip, concatenated gzip members).
@Suite("Trace stream")
struct TraceStreamTests {
    /// Everything a trace read produces, for comparison.
    struct Outcome: Equatable {
        var rows: [TraceRow] = []
        var tags: [TagID] = []
        var floors: [FloorID] = []
        var skipped = SkipTally()
        var error: String?
    }

    static func whole(_ bytes: [UInt8], file: String) -> Outcome {
        let result = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(LocusError) -> RangeTrace in try TraceReader.parse(buffer, file: file) }
        }
        switch result {
        case .failure(let e): return Outcome(error: e.description)
        case .success(let trace):
            var out = Outcome(tags: trace.tags, floors: trace.floors, skipped: trace.skipped)
            out.rows = trace.rows
            return out
        }
    }

    /// The trace streamed into an array, or (`intoRun`) into a `TraceRowRun` of room for 3 rows at
    /// first — grown as the parser writes — emptied after each piece.
    static func streamed(path: String, chunkBytes: Int, intoRun: Bool = false) -> Outcome {
        do throws(LocusError) {
            var stream = TraceStream(source: try ByteSource(path: path), chunkBytes: chunkBytes)
            var out = Outcome()
            if intoRun {
                let run = TraceRowRun(capacity: 3)
                while try stream.nextRows(into: run) {
                    out.rows.append(contentsOf: run.rows)
                    run.removeAll()
                }
            } else {
                while try stream.nextRows(into: &out.rows) {}
            }
            out.tags = stream.tags
            out.floors = stream.floors
            out.skipped = stream.skipped
            return out
        } catch {
            return Outcome(error: error.description)
        }
    }

    static func write(_ bytes: [UInt8], _ path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }

    /// `gzip -c` of `bytes` (Debian's gzip).
    static func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        write(bytes, dir + "/in")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c", "-n", dir + "/in"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return [UInt8](data)
    }

    @Test("300 seeded awkward traces (quoted multi-line fields, CRLF, comments, bad cells) read alike whole and in chunks of 64 B to 1 MiB, into arrays and runs")
    func randomTracesInChunks() {
        var rng = SeededGenerator(seed: 7_117)
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for k in 0..<300 {
            let bytes = FastPathEquivalenceTests().randomTrace(&rng, rows: 150)
            let path = dir + "/t\(k).csv"
            Self.write(bytes, path)
            let expected = Self.whole(bytes, file: path)
            for chunk in [64, 97, 1_000, 1 << 20] {
                let got = Self.streamed(path: path, chunkBytes: chunk)
                #expect(got == expected, "trace \(k), chunks of \(chunk) B")
                if got != expected { return }
            }
            // Into a run (the replay's reader), in small and whole-file pieces.
            for chunk in [97, 1 << 20] {
                #expect(Self.streamed(path: path, chunkBytes: chunk, intoRun: true) == expected, "trace \(k), into a run, chunks of \(chunk) B")
            }
        }
    }

    @Test("the fixtures and every bad-input trace read alike whole and streamed in small chunks")
    func fixturesInChunks() throws {
        let bad = try FileManager.default.contentsOfDirectory(atPath: TestPaths.fixture("bad-input/trace")).sorted()
        let paths = ["traces/hall-walk.csv", "traces/corridor-walk.csv"].map(TestPaths.fixture)
            + bad.map { TestPaths.fixture("bad-input/trace/" + $0) }
        for path in paths {
            let expected = Self.whole(TestPaths.bytes(path), file: path)
            for chunk in [64, 4_096] {
                #expect(Self.streamed(path: path, chunkBytes: chunk) == expected, "\(path), chunks of \(chunk) B")
            }
        }
    }

    @Test("gzip data — one member or several concatenated — reads as the plain bytes; truncated gzip is E5004")
    func gzipInput() throws {
        let plain = TestPaths.bytes(TestPaths.fixture("traces/hall-walk.csv"))
        let half = plain.count / 2
        let cut = plain[..<half].lastIndex(of: 0x0A)! + 1
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let expected = Self.whole(plain, file: dir + "/t.csv.gz")
        Self.write(try Self.gzip(plain), dir + "/t.csv.gz")
        #expect(Self.streamed(path: dir + "/t.csv.gz", chunkBytes: 4_096) == expected)
        Self.write(try Self.gzip(Array(plain[..<cut])) + (try Self.gzip(Array(plain[cut...]))), dir + "/two.csv.gz")
        var two = Self.streamed(path: dir + "/two.csv.gz", chunkBytes: 1_000)
        two.error = two.error.map { $0.replacingOccurrences(of: "two.csv.gz", with: "t.csv.gz") }
        #expect(two == expected)
        // Named without .gz: the magic bytes decide.
        Self.write(try Self.gzip(plain), dir + "/disguised.csv")
        #expect(Self.streamed(path: dir + "/disguised.csv", chunkBytes: 1 << 20).rows == expected.rows)
        let compressed = try Self.gzip(plain)
        Self.write(Array(compressed[..<(compressed.count * 2 / 3)]), dir + "/truncated.csv.gz")
        let truncated = Self.streamed(path: dir + "/truncated.csv.gz", chunkBytes: 4_096)
        #expect(truncated.error?.contains("E5004") == true)
        #expect(truncated.error?.contains("truncated.csv.gz") == true)
    }

    @Test("a missing file is E5001 naming it; a directory is refused")
    func unreadable() {
        #expect(Self.streamed(path: "/nonexistent/trace.csv", chunkBytes: 64).error?.contains("E5001") == true)
        #expect(Self.streamed(path: "/tmp", chunkBytes: 64).error?.contains("directory") == true)
    }

    @Test("a byte source rewinds to its first byte, plain and gzip")
    func rewind() throws {
        let plain = TestPaths.bytes(TestPaths.fixture("traces/corridor-walk.csv"))
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.write(try Self.gzip(plain), dir + "/t.gz")
        for path in [TestPaths.fixture("traces/corridor-walk.csv"), dir + "/t.gz"] {
            let source = try ByteSource(path: path)
            func readAll() throws -> [UInt8] {
                var out: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 777)
                while true {
                    let n = try chunk.withUnsafeMutableBytes { raw in Result { () throws(LocusError) in try source.read(into: raw) } }.get()
                    if n == 0 { return out }
                    out += chunk[..<n]
                }
            }
            let first = try readAll()
            try source.rewind()
            #expect(first == plain)
            #expect(try readAll() == plain)
        }
    }
}
