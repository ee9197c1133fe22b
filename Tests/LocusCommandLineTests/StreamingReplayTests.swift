import Foundation
@testable import Locus
@testable import LocusCommandLine
@testable import LocusEvaluation
@testable import LocusReports
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// The streamed replay (`locus replay` without --smooth) against the whole-file path it replaced:
/// the same bytes for every input, job count, order and encoding; bounded memory; honest results.
@Suite("Streamed replay")
struct StreamingReplayTests {
    static func site(_ name: String) -> String { TestPaths.fixture("sites/\(name).json") }
    static func trace(_ name: String) -> String { TestPaths.fixture("traces/\(name)-walk.csv") }

    /// The whole-file path: `TraceReader` + `EngineDriver.replay` (the rows sorted stably by time in memory).
    static func reference(site: String, trace: String, options: [String] = []) throws -> (positions: [UInt8], events: [UInt8]) {
        var arguments = ParsedArguments(command: "replay", values: [:], flags: [])
        var k = 0
        while k < options.count {
            if options[k] == "--smooth" { arguments.flags.insert("smooth"); k += 1; continue }
            arguments.values[String(options[k].dropFirst(2))] = options[k + 1]
            k += 2
        }
        let configuration = EngineConfiguration(try EngineOptions(arguments))
        var driver = try EngineDriver(site: try SiteDecoder.load(path: site), configuration: configuration)
        let result = try driver.replay(try TraceReader.read(path: trace))
        var p = PositionsWriter(), e = ZoneEventWriter()
        for f in result.fixes { p.append(f) }
        for x in result.events { e.append(x) }
        return (p.bytes, e.bytes)
    }

    /// `locus replay` in-process with outputs to files: (run, positions, events).
    static func replay(_ arguments: [String]) -> (run: CapturedRun, positions: [UInt8], events: [UInt8]) {
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = CapturedRun(["replay"] + arguments + ["--positions", dir + "/p.csv", "--events", dir + "/e.jsonl"])
        return (run, TestPaths.bytes(dir + "/p.csv"), TestPaths.bytes(dir + "/e.jsonl"))
    }

    /// A summary without its timing fields.
    static func untimed(_ json: String) throws -> JSONValue {
        let v = try JSONParser.parse(Array(json.utf8))
        return .object((v.members ?? []).filter { $0.key != "elapsed_s" && $0.key != "fixes_per_s" }.map { ($0.key, $0.value) })
    }

    @Test("--jobs 1, 2, 3 and 8 give the whole-file path's bytes and the same summary, on both fixtures and both filters",
          arguments: ["hall", "corridor"], ["kalman", "none"])
    func jobsInvariance(fixture: String, filter: String) throws {
        let expected = try Self.reference(site: Self.site(fixture), trace: Self.trace(fixture), options: ["--filter", filter])
        var summaries: [JSONValue] = []
        for jobs in [1, 2, 3, 8] {
            let r = Self.replay(["--site", Self.site(fixture), "--trace", Self.trace(fixture), "--filter", filter, "--jobs", "\(jobs)",
                                 "--truth", TestPaths.fixture("traces/\(fixture)-walk-truth.csv"), "--json"])
            #expect(r.run.status == 0, "\(r.run.err)")
            #expect(r.positions == expected.positions, "positions, --jobs \(jobs)")
            #expect(r.events == expected.events, "events, --jobs \(jobs)")
            summaries.append(try Self.untimed(r.run.out))
        }
        #expect(Set(summaries.map { JSONWriter(style: .compact).string($0) }).count == 1)
    }

    @Test("the recorded CUHK-SZ runs give the whole-file path's bytes with 1, 2 and 3 jobs")
    func realRecordings() throws {
        guard let dataset = TestPaths.dataset("cuhksz-planar-uwb") else {
            print("skipped: ../shared/datasets/cuhksz-planar-uwb is absent")
            return
        }
        for trace in [dataset + "/trace.csv", dataset + "/runs/mid/trace.csv"] {
            let expected = try Self.reference(site: dataset + "/site.json", trace: trace)
            for jobs in [1, 2, 3] {
                let r = Self.replay(["--site", dataset + "/site.json", "--trace", trace, "--jobs", "\(jobs)"])
                #expect(r.run.status == 0, "\(r.run.err)")
                #expect(r.positions == expected.positions && r.events == expected.events, "\(trace), --jobs \(jobs)")
            }
        }
    }

    /// The fixture's rows regrouped tag by tag (per-tag exports concatenated): not in time order.
    static func concatenatedByTag(_ fixture: String, to path: String) throws {
        let lines = try String(contentsOfFile: Self.trace(fixture), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let header = lines[0]
        let tagColumn = header.split(separator: ",").firstIndex(of: "tag")!
        var byTag: [Substring: [Substring]] = [:]
        var order: [Substring] = []
        for line in lines.dropFirst() where !line.isEmpty {
            let tag = line.split(separator: ",", omittingEmptySubsequences: false)[tagColumn]
            if byTag[tag] == nil { order.append(tag) }
            byTag[tag, default: []].append(line)
        }
        let text = ([header] + order.reversed().flatMap { byTag[$0]! }).joined(separator: "\n") + "\n"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    @Test("a trace of per-tag exports concatenated replays as the whole-file path sorts it, and says it was sorted")
    func outOfOrderTrace() throws {
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.concatenatedByTag("hall", to: dir + "/byTag.csv")
        let expected = try Self.reference(site: Self.site("hall"), trace: dir + "/byTag.csv")
        for jobs in [1, 2] {
            let r = Self.replay(["--site", Self.site("hall"), "--trace", dir + "/byTag.csv", "--jobs", "\(jobs)"])
            #expect(r.run.status == 0, "\(r.run.err)")
            #expect(r.positions == expected.positions && r.events == expected.events, "--jobs \(jobs)")
            #expect(r.run.err.contains("is not in time order"), "\(r.run.err)")
            #expect(r.run.err.contains("time-ordered runs"), "\(r.run.err)")
        }
    }

    @Test("an out-of-order trace sorted through spilled blocks (17 rows each) gives the same bytes")
    func spilledSort() throws {
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.concatenatedByTag("corridor", to: dir + "/byTag.csv")
        let expected = try Self.reference(site: Self.site("corridor"), trace: dir + "/byTag.csv")
        let site = try SiteDecoder.load(path: Self.site("corridor"))
        var replay = StreamingReplay(site: site, configuration: .standard, jobs: 2)
        replay.sortBlockRows = 17
        let positions = try ByteSink(path: dir + "/p.csv"), events = try ByteSink(path: dir + "/e.jsonl")
        let outcome = try replay.run(source: try ByteSource(path: dir + "/byTag.csv"), positions: positions, events: events)
        try positions.close()
        try events.close()
        #expect(outcome.spilledBlocks > 100)
        #expect((outcome.sortedRuns ?? 0) > 1)
        #expect(TestPaths.bytes(dir + "/p.csv") == expected.positions)
        #expect(TestPaths.bytes(dir + "/e.jsonl") == expected.events)
    }

    @Test("the external sort gives a stable sort by time, in memory or through the temporary file")
    func sorter() throws {
        var rng = SeededGenerator(seed: 99)
        var rows: [TraceRow] = []
        for k in 0..<5_000 {
            rows.append(TraceRow(timeSeconds: Double(rng.next() % 700) / 4, rangeMeters: 1, tagIndex: 0, floorIndex: -1,
                                 line: Int32(k + 2), locator: 1))
        }
        let expected = rows.enumerated().sorted { a, b in
            a.element.timeSeconds < b.element.timeSeconds || (a.element.timeSeconds == b.element.timeSeconds && a.offset < b.offset)
        }.map(\.element)
        for block in [16, 333, 1 << 20] {
            let s = TraceRowSorter(blockRows: block)
            try s.add(rows[..<2_500])
            try s.add(rows[2_500...])
            var out: [TraceRow] = []
            while try s.next(into: &out, limit: 97) {}
            #expect(out == expected, "blocks of \(block)")
        }
    }

    @Test("gzip input replays to the plain file's bytes")
    func gzipTrace() throws {
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = FileManager.default.createFile(atPath: dir + "/t.csv.gz", contents: Data(try TraceStreamTestsGzip.gzip(TestPaths.bytes(Self.trace("hall")))))
        let plain = Self.replay(["--site", Self.site("hall"), "--trace", Self.trace("hall")])
        let gz = Self.replay(["--site", Self.site("hall"), "--trace", dir + "/t.csv.gz"])
        #expect(gz.run.status == 0, "\(gz.run.err)")
        #expect(gz.positions == plain.positions && gz.events == plain.events)
    }

    /// The built `locus` with `arguments`, `input` on its stdin; (status, stdout, stderr).
    static func locus(_ arguments: [String], input: [UInt8]) throws -> (status: Int32, out: [UInt8], err: String) {
        try locus(arguments, input: input, executable: locusPath)
    }

    @Test("'-' reads the trace from stdin and writes positions (or events) to stdout, the summary then on stderr — in order or not")
    func standardStreams() throws {
        let expected = try Self.reference(site: Self.site("hall"), trace: Self.trace("hall"))
        let p = try Self.locus(["replay", "--site", Self.site("hall"), "--trace", "-", "--positions", "-", "--json"],
                               input: TestPaths.bytes(Self.trace("hall")))
        #expect(p.status == 0, "\(p.err)")
        #expect(p.out == expected.positions)
        #expect(p.err.contains("\"fixes\":"), "\(p.err)")
        let e = try Self.locus(["replay", "--site", Self.site("hall"), "--trace", "-", "--events", "-"], input: TestPaths.bytes(Self.trace("hall")))
        #expect(e.status == 0 && e.out == expected.events, "\(e.err)")
        // Out of order through a pipe into a pipe: the order is checked before anything is written.
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.concatenatedByTag("hall", to: dir + "/byTag.csv")
        let sortedExpected = try Self.reference(site: Self.site("hall"), trace: dir + "/byTag.csv")
        let s = try Self.locus(["replay", "--site", Self.site("hall"), "--trace", "-", "--positions", "-"], input: TestPaths.bytes(dir + "/byTag.csv"))
        #expect(s.status == 0 && s.out == sortedExpected.positions, "\(s.err)")
        let both = CapturedRun(["replay", "--site", Self.site("hall"), "--trace", Self.trace("hall"), "--positions", "-", "--events", "-"])
        #expect(both.status == 2 && both.err.contains("only one of --positions and --events"), "\(both.err)")
    }

    @Test("memory does not grow with the recording: 50× the rows (8 M, 240 MB) generated into a pipe, the same peak RSS (within 10 % + 4 MB, under 96 MB)",
          .enabled(if: ResidentMemory.measuresTheCode, "\(ResidentMemory.sanitizerMessage)"))
    func boundedMemory() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else {
            print("skipped: /usr/bin/time is absent (scripts/setup installs it)")
            return
        }
        func peakKilobytes(rounds: Int) throws -> Int {
            let r = try Self.peakRSS(["replay", "--site", Self.site("hall"), "--trace", "-", "--jobs", "2"], generator: Self.hallTrace(rounds: rounds))
            #expect(r.out.contains("from \(rounds * 20 * 8) range rows"), "\(r.out)")
            return r.kilobytes
        }
        // 1,000 rounds (160,000 rows, 4.8 MB) already fill every buffer; 50,000 (8 M rows, 240 MB)
        // are 50× longer. The whole-file path held ~90 bytes per row (352 MB for 3.84 M rows): it
        // would have needed ~700 MB here.
        let short = try peakKilobytes(rounds: 1_000), long = try peakKilobytes(rounds: 50_000)
        #expect(short > 0 && long > 0)
        #expect(Double(long) <= Double(short) * 1.1 + 4_096, "peak RSS \(short) kB for 160,000 rows, \(long) kB for 8,000,000")
        #expect(long <= 96 * 1_024, "peak RSS \(long) kB for 8,000,000 rows")
    }

    /// A range trace on the hall fixture generated piece by piece (one piece per call, nil at the
    /// end; never the whole text in memory): 20 tags circling the floor, ranged by its 8 locators
    /// at 4 Hz, true distances plus a few millimetres of deterministic noise.
    static func hallTrace(rounds: Int) -> () -> [UInt8]? {
        let locators: [(address: Int, x: Double, y: Double, z: Double)] = [
            (40407, 0.3, 0.3, 2.6), (40408, 20.0, 0.3, 2.6), (40409, 39.7, 0.3, 2.6), (40410, 39.7, 12.5, 2.6),
            (40411, 39.7, 24.7, 2.6), (40412, 20.0, 24.7, 2.6), (40413, 0.3, 24.7, 2.6), (40414, 0.3, 12.5, 2.55)]
        var k = -1
        return {
            if k >= rounds { return nil }
            var text: [UInt8] = []
            if k < 0 {
                text = Array("t,tag,anchor,range_m\n".utf8)
                k = 0
            }
            text.reserveCapacity(100 * 20 * 8 * 32)
            let end = min(rounds, k + 100)
            while k < end {
                for tag in 0..<20 {
                    let angle = Double(k) * 0.0125 + Double(tag)
                    let x = 20 + 12 * cos(angle), y = 12.5 + 8 * sin(angle)
                    for (i, l) in locators.enumerated() {
                        let d = ((x - l.x) * (x - l.x) + (y - l.y) * (y - l.y) + (1.2 - l.z) * (1.2 - l.z)).squareRoot()
                        // Milliseconds and millimetres as integers: fast to spell.
                        Self.appendMilli(k * 250 + tag * 8 + i, to: &text)
                        text.append(contentsOf: ",T".utf8)
                        DecimalText.append(tag, to: &text)
                        text.append(UInt8(ascii: ","))
                        DecimalText.append(l.address, to: &text)
                        text.append(UInt8(ascii: ","))
                        Self.appendMilli(Int(d * 1000) + (k * 7 + tag * 3 + i * 5) % 11 - 5, to: &text)
                        text.append(0x0A)
                    }
                }
                k += 1
            }
            return text
        }
    }

    /// `value` thousandths as a decimal with 3 places.
    static func appendMilli(_ value: Int, to text: inout [UInt8]) {
        DecimalText.append(value / 1000, to: &text)
        text.append(UInt8(ascii: "."))
        let r = value % 1000
        text.append(UInt8(ascii: "0") + UInt8(r / 100))
        text.append(UInt8(ascii: "0") + UInt8(r / 10 % 10))
        text.append(UInt8(ascii: "0") + UInt8(r % 10))
    }

    /// Runs `locus arguments` under /usr/bin/time with standard input from `generator`: its peak
    /// RSS (kB; −1 when unreadable) and standard output. Expects exit status 0.
    static func peakRSS(_ arguments: [String], generator: @escaping () -> [UInt8]?) throws -> (kilobytes: Int, out: String) {
        let r = try locus(["-f", "%M", locusPath] + arguments, generator: generator, executable: "/usr/bin/time")
        #expect(r.status == 0, "\(r.err)")
        let kilobytes = Int(r.err.split(separator: "\n").last.map { String($0).trimmingCharacters(in: .whitespaces) } ?? "") ?? -1
        return (kilobytes, String(decoding: r.out, as: UTF8.self))
    }

    static var locusPath: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("locus").path
    }

    static func locus(_ arguments: [String], input: [UInt8], executable: String) throws -> (status: Int32, out: [UInt8], err: String) {
        var given = false
        return try locus(arguments, generator: {
            defer { given = true }
            return given ? nil : input
        }, executable: executable)
    }

    /// Runs `executable` with standard input written from `generator`'s pieces as they come.
    static func locus(_ arguments: [String], generator: @escaping () -> [UInt8]?, executable: String) throws -> (status: Int32, out: [UInt8], err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let pieces = UncheckedBox(generator)
        let writer = Thread {
            // A child that exits before it has read everything (a usage error) closes the pipe: the
            // rest is not written (the throwing write, not the trapping one), and the test sees its
            // status and output instead of the test process crashing.
            while let piece = pieces.value() {
                do { try stdin.fileHandleForWriting.write(contentsOf: Data(piece)) } catch { break }
            }
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let errReader = ErrorText(stderr)
        let out = [UInt8](stdout.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        return (process.terminationStatus, out, errReader.text())
    }

    @Test("a run with no fix exits 1 naming the cause; over half skipped warns; truth covering nothing exits 1 with null figures")
    func honestResults() throws {
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The corridor's trace against the hall's site: its floor is not the hall's.
        let wrongSite = CapturedRun(["replay", "--site", Self.site("hall"), "--trace", Self.trace("corridor"), "--json"])
        #expect(wrongSite.status == 1)
        #expect(wrongSite.err.contains("every row skipped (unknown_floor "), "\(wrongSite.err)")
        #expect(wrongSite.err.contains("do the rows' floor ids match the site's floors?"), "\(wrongSite.err)")
        #expect(wrongSite.out.contains("\"fixes\":0"), "the summary is printed all the same")
        // A header alone.
        let headerOnly = CapturedRun(["replay", "--site", Self.site("hall"), "--trace", TestPaths.fixture("bad-input/trace/header-only.csv")])
        #expect(headerOnly.status == 1 && headerOnly.err.contains("holds no data rows"), "\(headerOnly.err)")
        // Every row going backwards after the first.
        var lines = try String(contentsOfFile: Self.trace("hall"), encoding: .utf8).split(separator: "\n").map(String.init)
        let header = lines.removeFirst()
        try ([header] + lines.reversed()).joined(separator: "\n").appending("\n").write(toFile: dir + "/backwards.csv", atomically: false, encoding: .utf8)
        let backwards = CapturedRun(["replay", "--site", Self.site("hall"), "--trace", dir + "/backwards.csv"])
        // Reversed, each tag's rows run backwards: the reader keeps each tag's first row only.
        #expect(backwards.status == 1, "\(backwards.err)")
        #expect(backwards.err.contains("time_backwards"), "\(backwards.err)")
        // Truth outside the trace's time span.
        let truth = try String(contentsOfFile: TestPaths.fixture("traces/hall-walk-truth.csv"), encoding: .utf8).split(separator: "\n")
        let shifted = [String(truth[0])] + truth.dropFirst().map { line -> String in
            var cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            cells[0] = String((Double(cells[0]) ?? 0) + 100_000)
            return cells.joined(separator: ",")
        }
        try (shifted.joined(separator: "\n") + "\n").write(toFile: dir + "/late-truth.csv", atomically: false, encoding: .utf8)
        let late = CapturedRun(["replay", "--site", Self.site("hall"), "--trace", Self.trace("hall"), "--truth", dir + "/late-truth.csv", "--json"])
        #expect(late.status == 1 && late.err.contains("truth covers 0 of the"), "\(late.err)")
        #expect(late.out.contains("\"rmse_m\":null") && late.out.contains("\"compared\":0"), "\(late.out)")
        // Over half the rows with an unknown anchor: a warning, exit 0.
        let rows = lines
        let mixed = [header] + rows.enumerated().map { k, line -> String in
            guard k % 3 != 0 else { return line }
            var cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let anchor = header.split(separator: ",").firstIndex(of: "anchor")!
            cells[anchor] = "7"
            return cells.joined(separator: ",")
        }
        try (mixed.joined(separator: "\n") + "\n").write(toFile: dir + "/mixed.csv", atomically: false, encoding: .utf8)
        let warned = CapturedRun(["replay", "--site", Self.site("hall"), "--trace", dir + "/mixed.csv"])
        #expect(warned.status == 0, "\(warned.err)")
        #expect(warned.err.contains("warning:") && warned.err.contains("rows skipped (unknown_anchor"), "\(warned.err)")
        // Every anchor unknown: a trace of another site.
        let foreign = [header] + rows.map { line -> String in
            var cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            cells[header.split(separator: ",").firstIndex(of: "anchor")!] = "7"
            return cells.joined(separator: ",")
        }
        try (foreign.joined(separator: "\n") + "\n").write(toFile: dir + "/foreign.csv", atomically: false, encoding: .utf8)
        let unknown = CapturedRun(["replay", "--site", Self.site("hall"), "--trace", dir + "/foreign.csv"])
        #expect(unknown.status == 1, "\(unknown.err)")
        #expect(unknown.err.contains("every row skipped (unknown_anchor ") && unknown.err.contains("does this trace belong to this site?"),
                "\(unknown.err)")
        let badJobs = CapturedRun(["replay", "--site", Self.site("hall"), "--trace", Self.trace("hall"), "--jobs", "0"])
        #expect(badJobs.status == 2)
    }
}

/// Reads a pipe to its end on a thread of its own (so that a child filling stderr never blocks).
/// A value handed to one other thread, which alone uses it from then on.
final class UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

final class ErrorText: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)
    init(_ pipe: Pipe) {
        Thread { [self] in
            self.data = pipe.fileHandleForReading.readDataToEndOfFile()
            self.done.signal()
        }.start()
    }
    func text() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}

/// `gzip -c -n` of some bytes (Debian's gzip).
enum TraceStreamTestsGzip {
    static func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c", "-n"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        Thread {
            input.fileHandleForWriting.write(Data(bytes))
            try? input.fileHandleForWriting.close()
        }.start()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return [UInt8](data)
    }
}

/// The honest-result rules and '-' for `locus zones` and `locus calibrate`.
@Suite("Zones and calibrate: honest results, standard input")
struct ZonesCalibrateHonestyTests {
    @Test("zones: nothing judgeable exits 1 naming the cause; '-' reads the positions from stdin")
    func zones() throws {
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let site = StreamingReplayTests.site("hall")
        let positions = TestPaths.fixture("golden/hall-walk.raw-positions.csv")
        try "t,tag,x,y\n".write(toFile: dir + "/empty.csv", atomically: false, encoding: .utf8)
        let empty = CapturedRun(["zones", "--site", site, "--positions", dir + "/empty.csv", "--json"])
        #expect(empty.status == 1 && empty.err.contains("holds no data rows"), "\(empty.err)")
        let lines = try String(contentsOfFile: positions, encoding: .utf8).split(separator: "\n").map(String.init)
        let floor = lines[0].split(separator: ",").firstIndex(of: "floor")!
        let elsewhere = [lines[0]] + lines.dropFirst().map { line -> String in
            var cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            cells[floor] = "9F"
            return cells.joined(separator: ",")
        }
        try (elsewhere.joined(separator: "\n") + "\n").write(toFile: dir + "/elsewhere.csv", atomically: false, encoding: .utf8)
        let unknown = CapturedRun(["zones", "--site", site, "--positions", dir + "/elsewhere.csv"])
        #expect(unknown.status == 1 && unknown.err.contains("every row skipped (unknown_floor"), "\(unknown.err)")
        let file = CapturedRun(["zones", "--site", site, "--positions", positions, "--events", dir + "/e.jsonl"])
        #expect(file.status == 0, "\(file.err)")
        let piped = try StreamingReplayTests.locus(["zones", "--site", site, "--positions", "-"], input: TestPaths.bytes(positions))
        #expect(piped.status == 0, "\(piped.err)")
        #expect(piped.out == TestPaths.bytes(dir + "/e.jsonl"))
    }

    @Test("calibrate: a trace of another site exits 1 naming the cause")
    func calibrate() throws {
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let lines = try String(contentsOfFile: StreamingReplayTests.trace("hall"), encoding: .utf8).split(separator: "\n").map(String.init)
        let anchor = lines[0].split(separator: ",").firstIndex(of: "anchor")!
        let foreign = [lines[0]] + lines.dropFirst().map { line -> String in
            var cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            cells[anchor] = "7"
            return cells.joined(separator: ",")
        }
        try (foreign.joined(separator: "\n") + "\n").write(toFile: dir + "/foreign.csv", atomically: false, encoding: .utf8)
        let run = CapturedRun(["calibrate", "--site", StreamingReplayTests.site("hall"), "--trace", dir + "/foreign.csv",
                               "--truth", TestPaths.fixture("traces/hall-walk-truth.csv")])
        #expect(run.status == 1, "\(run.err)")
        #expect(run.err.contains("every row skipped (unknown_anchor") && run.err.contains("does this trace belong to this site?"), "\(run.err)")
    }
}

/// Sharding across floors: tags that change floor, judges of two floors sharing one clock.
@Suite("Streamed replay on two floors")
struct StreamingReplayFloorsTests {
    @Test("""
          a two-floor site with tags moving between floors gives the whole-file path's bytes with 1, 2, 3 and 5 jobs, \
          and its counters: rows of a floor the site lacks counted by the shards as by the one engine
          """)
    func twoFloors() throws {
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var site = try SiteDecoder.load(path: StreamingReplayTests.site("hall"))
        var upstairs = site.floors[0]
        upstairs.id = "2F"
        upstairs.zones = upstairs.zones.map { var z = $0; z.rules.outPeriodSeconds += 1; return z }
        site.floors.append(upstairs)
        // Each tag's rows go to 2F during the second 20 s of every minute (its floor column rewritten);
        // one row in 50 names 9F, which the site lacks.
        let lines = try String(contentsOfFile: StreamingReplayTests.trace("hall"), encoding: .utf8).split(separator: "\n").map(String.init)
        let floor = lines[0].split(separator: ",").firstIndex(of: "floor")!
        let moved = [lines[0]] + lines.dropFirst().enumerated().map { (k, line) -> String in
            var cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let t = Double(cells[0]) ?? 0
            let tag = Int(cells[1].dropFirst()) ?? 0
            if Int(t + Double(tag) * 7) % 60 >= 20 && Int(t + Double(tag) * 7) % 60 < 40 { cells[floor] = "2F" }
            if k % 50 == 7 { cells[floor] = "9F" }
            return cells.joined(separator: ",")
        }
        try (moved.joined(separator: "\n") + "\n").write(toFile: dir + "/moved.csv", atomically: false, encoding: .utf8)
        var driver = try EngineDriver(site: site, configuration: .standard)
        let result = try driver.replay(try TraceReader.read(path: dir + "/moved.csv"))
        var p = PositionsWriter(), e = ZoneEventWriter()
        for f in result.fixes { p.append(f) }
        for x in result.events { e.append(x) }
        #expect(result.fixes.contains { $0.floor == "2F" } && result.fixes.contains { $0.floor == "1F" })
        #expect(result.events.contains { $0.floor == "2F" })
        #expect(driver.engine.diagnostics.skipped.count(.unknownFloor) > 100)
        for jobs in [1, 2, 3, 5] {
            let replay = StreamingReplay(site: site, configuration: .standard, jobs: jobs)
            let positions = try ByteSink(path: dir + "/p.csv"), events = try ByteSink(path: dir + "/e.jsonl")
            let outcome = try replay.run(source: try ByteSource(path: dir + "/moved.csv"), positions: positions, events: events)
            try positions.close()
            try events.close()
            #expect(TestPaths.bytes(dir + "/p.csv") == p.bytes, "positions, \(jobs) jobs")
            #expect(TestPaths.bytes(dir + "/e.jsonl") == e.bytes, "events, \(jobs) jobs")
            #expect(outcome.diagnostics == driver.engine.diagnostics, "counters, \(jobs) jobs")
        }
    }
}
