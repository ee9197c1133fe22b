import Foundation
@testable import Locus
@testable import LocusCore
@testable import LocusIO
import LocusLive
import LocusTestSupport
import Synchronization
import Testing

/// Range differences (TDoA, issue #40) through every face: `locus simulate --tdoa` writes the rows,
/// `locus replay` solves them (and scores them against the truth), and `locus stream` on standard
/// input, a `FloorSession` and `--jobs 2` give replay's bytes at non-default options.
@Suite("range differences on every face")
struct DifferenceFaceTests {
    /// A simulated TDoA recording of `fixture`'s site: (directory, trace, truth); the caller removes the directory.
    static func simulate(_ fixture: String, mode: String = "uplink", tags: Int = 3, extra: [String] = []) throws -> (String, String, String) {
        let dir = TestPaths.temporaryDirectory()
        let trace = dir + "/tdoa.csv", truth = dir + "/truth.csv"
        let run = CapturedRun(["simulate", "--site", TestPaths.fixture("sites/\(fixture).json"), "--trace", trace, "--truth", truth,
                               "--tdoa", mode, "--tags", "\(tags)", "--duration", "40", "--seed", "7"] + extra)
        #expect(run.status == 0, "\(run.err)")
        return (dir, trace, truth)
    }

    static let optionSets: [[String]] = [[], ["--rate", "2", "--sigma", "0.15"], ["--filter", "none"], ["--coupling", "loose", "--rate", "5"],
                                         ["--smooth"]]

    @Test("replay scores a TDoA walk near the truth; raw least squares, the tight and loose filters and the smoother all give fixes and no NaN",
          arguments: ["uplink", "downlink"])
    func replayAgainstTruth(mode: String) throws {
        let (dir, trace, truth) = try Self.simulate("hall", mode: mode)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for options in Self.optionSets {
            let run = CapturedRun(["replay", "--site", TestPaths.fixture("sites/hall.json"), "--trace", trace, "--truth", truth,
                                   "--positions", dir + "/p.csv", "--json"] + options)
            #expect(run.status == 0, "\(options): \(run.err)")
            let summary = try JSONParser.parse(Array(run.out.utf8))
            guard case .number(let rmse)? = summary["rmse_m"]?.kind, case .number(let fixes)? = summary["fixes"]?.kind else {
                Issue.record("no rmse_m/fixes in \(run.out)"); continue
            }
            #expect(fixes.value > 100, "\(mode) \(options)")
            #expect(summary["differences"] == summary["ranges"], "every row a difference: \(run.out)")
            #expect(rmse.value < 0.3, "\(mode) \(options): rmse \(rmse.value)")
            let text = String(decoding: TestPaths.bytes(dir + "/p.csv"), as: UTF8.self)
            #expect(!text.lowercased().contains("nan"), "\(mode) \(options)")
        }
    }

    @Test("locus stream on standard input, a FloorSession and --jobs 2 give replay's bytes for a TDoA trace", arguments: 0..<4)
    func facesAgree(index: Int) throws {
        let options = Self.optionSets[index]
        let (dir, trace, _) = try Self.simulate("hall", mode: index % 2 == 0 ? "uplink" : "downlink")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let site = TestPaths.fixture("sites/hall.json")
        let replay = CapturedRun(["replay", "--site", site, "--trace", trace, "--positions", dir + "/p.csv", "--events", dir + "/e.jsonl",
                                  "--jobs", "1"] + options)
        #expect(replay.status == 0, "\(replay.err)")
        let positions = TestPaths.bytes(dir + "/p.csv"), events = TestPaths.bytes(dir + "/e.jsonl")
        #expect(positions.count > 1_000)

        let jobs = CapturedRun(["replay", "--site", site, "--trace", trace, "--positions", dir + "/p2.csv", "--events", dir + "/e2.jsonl",
                                "--jobs", "2"] + options)
        #expect(jobs.status == 0, "\(jobs.err)")
        #expect(TestPaths.bytes(dir + "/p2.csv") == positions && TestPaths.bytes(dir + "/e2.jsonl") == events, "--jobs 2 \(options)")

        let stream = try StreamingReplayTests.locus(["stream", "--site", site, "--tick-ms", "0", "--positions", dir + "/p3.csv",
                                                     "--events", dir + "/e3.jsonl"] + options, input: TestPaths.bytes(trace))
        #expect(stream.status == 0, "\(stream.err)")
        #expect(TestPaths.bytes(dir + "/p3.csv") == positions && TestPaths.bytes(dir + "/e3.jsonl") == events, "stream \(options)")

        // The same rows as JSON Lines on standard input.
        let rows = try TraceReader.read(path: trace)
        var lines = ""
        for i in rows.timeOrder() {
            let d = rows.difference(i)
            lines += #"{"t": \#(d.timeSeconds), "tag": "\#(d.tag.rawValue)", "anchor_a": \#(d.reference.rawValue), "anchor_b": \#(d.locator.rawValue), "tdoa_m": \#(d.differenceMeters)\#(d.floor.map { #", "floor": "\#($0.rawValue)""# } ?? "")}"# + "\n"
        }
        let json = try StreamingReplayTests.locus(["stream", "--site", site, "--tick-ms", "0", "--format", "jsonl", "--positions", dir + "/p4.csv",
                                                   "--events", dir + "/e4.jsonl"] + options, input: Array(lines.utf8))
        #expect(json.status == 0, "\(json.err)")
        #expect(TestPaths.bytes(dir + "/p4.csv") == positions && TestPaths.bytes(dir + "/e4.jsonl") == events, "stream JSON \(options)")

        // A FloorSession fed the same rows in time order.
        var configuration = FloorSession.Configuration()
        if options.contains("--rate") { configuration.rateHertz = Double(options[options.firstIndex(of: "--rate")! + 1])! }
        if options.contains("--sigma") { configuration.rangeSigmaMeters = Double(options[options.firstIndex(of: "--sigma")! + 1])! }
        if options.contains("none") { configuration.positioning = .leastSquares }
        guard !options.contains("--coupling") else { return }  // (the session has no coupling option)
        let session = try FloorSession(sitePath: site, configuration: configuration)
        let fixes = Mutex<[PositionFix]>([])
        let zoneEvents = Mutex<[ZoneEvent]>([])
        session.onPosition = { fix in fixes.withLock { $0.append(fix) } }
        session.onZoneEnter = { _, e in zoneEvents.withLock { $0.append(e) } }
        session.onZoneExit = { _, e in zoneEvents.withLock { $0.append(e) } }
        session.onZoneDwell = { _, _, e in zoneEvents.withLock { $0.append(e) } }
        try session.begin()
        try session.ingest(contentsOf: rows.timeOrder().map { Measurement.difference(rows.difference($0)) })
        session.end()
        var p = PositionsWriter(), e = ZoneEventWriter()
        for f in fixes.withLock({ $0 }) { p.append(f) }
        for z in zoneEvents.withLock({ $0 }) { e.append(z) }
        #expect(p.bytes == positions, "session \(options)")
        #expect(e.bytes == events, "session \(options)")
    }

    @Test("bad difference rows are skipped by reason on replay: same_locator, unknown_anchor, difference_too_long, non_finite; a hybrid trace (ranges and downlink pairs) gives fixes of both kinds, raw, filtered and smoothed")
    func skipsAndHybrid() throws {
        let (dir, trace, _) = try Self.simulate("hall", mode: "downlink", tags: 1)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let site = TestPaths.fixture("sites/hall.json")
        var text = String(decoding: TestPaths.bytes(trace), as: UTF8.self)
        let header = text.prefix { $0 != "\n" }
        let columns = header.split(separator: ",").map(String.init)
        func row(_ cells: [String: String]) -> String { columns.map { cells[$0] ?? "" }.joined(separator: ",") + "\n" }
        let hall = try SiteDecoder.load(path: site)
        let a = hall.floors[0].locators[0].address.rawValue, b = hall.floors[0].locators[1].address.rawValue
        text += row(["t": "1000", "tag": "X", "anchor_a": "\(a)", "anchor_b": "\(a)", "tdoa_m": "0.5"])
        text += row(["t": "1000", "tag": "X", "anchor_a": "\(a)", "anchor_b": "65000", "tdoa_m": "0.5"])
        text += row(["t": "1000", "tag": "X", "anchor_a": "\(a)", "anchor_b": "\(b)", "tdoa_m": "500"])
        text += row(["t": "1000", "tag": "X", "anchor_a": "\(a)", "anchor_b": "\(b)", "tdoa_m": "nan"])
        try text.write(toFile: dir + "/bad.csv", atomically: true, encoding: .utf8)
        let run = CapturedRun(["replay", "--site", site, "--trace", dir + "/bad.csv", "--json"])
        #expect(run.status == 0, "\(run.err)")
        let skipped = try JSONParser.parse(Array(run.out.utf8))["skipped"]
        #expect(skipped?["same_locator"] == .integer(1) && skipped?["unknown_anchor"] == .integer(1), "\(run.out)")
        #expect(skipped?["difference_too_long"] == .integer(1) && skipped?["non_finite"] == .integer(1), "\(run.out)")

        // Hybrid: the simulated ranges of the same walk beside the differences, one file.
        let ranges = dir + "/ranges.csv"
        let sim = CapturedRun(["simulate", "--site", site, "--trace", ranges, "--truth", dir + "/truth2.csv", "--tags", "1",
                               "--duration", "40", "--seed", "7"])
        #expect(sim.status == 0, "\(sim.err)")
        var lines: [(Double, String)] = []
        for line in String(decoding: TestPaths.bytes(ranges), as: UTF8.self).split(separator: "\n").dropFirst() {
            let c = line.split(separator: ",", omittingEmptySubsequences: false)
            lines.append((Double(c[0])!, "\(c[0]),\(c[1]),\(c[2]),\(c[3]),,,,\(c.count > 4 ? c[4] : "")\n"))
        }
        for line in String(decoding: TestPaths.bytes(trace), as: UTF8.self).split(separator: "\n").dropFirst() {
            let c = line.split(separator: ",", omittingEmptySubsequences: false)
            lines.append((Double(c[0])!, "\(c[0]),\(c[1]),,,\(c[2]),\(c[3]),\(c[4]),\(c.count > 5 ? c[5] : "")\n"))
        }
        // One file in time order (stable: ranges first at equal times).
        let hybrid = "t,tag,anchor,range_m,anchor_a,anchor_b,tdoa_m,floor\n"
            + lines.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element.1).joined()
        try hybrid.write(toFile: dir + "/hybrid.csv", atomically: true, encoding: .utf8)
        for options in [[], ["--filter", "none"], ["--smooth"]] {
            let fused = CapturedRun(["replay", "--site", site, "--trace", dir + "/hybrid.csv", "--truth", dir + "/truth.csv", "--json"] + options)
            #expect(fused.status == 0, "\(options): \(fused.err)")
            let summary = try JSONParser.parse(Array(fused.out.utf8))
            guard case .number(let rmse)? = summary["rmse_m"]?.kind else { Issue.record("\(fused.out)"); continue }
            #expect(rmse.value < (options.isEmpty || options == ["--smooth"] ? 0.1 : 0.25), "hybrid \(options) rmse \(rmse.value)")
        }
    }

    @Test("JSON difference rows in UDP datagrams (1 to 5 rows each, the uplink blinks' order) give replay's bytes")
    func udpDifferences() throws {
        let (dir, trace, _) = try Self.simulate("hall", tags: 2)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let site = TestPaths.fixture("sites/hall.json")
        let replay = CapturedRun(["replay", "--site", site, "--trace", trace, "--positions", dir + "/p.csv", "--events", dir + "/e.jsonl"])
        #expect(replay.status == 0, "\(replay.err)")
        let live = try LiveProcess(["stream", "--site", site, "--input", "udp://127.0.0.1:0", "--tick-ms", "0",
                                    "--positions", dir + "/p2.csv", "--events", dir + "/e2.jsonl", "--json"])
        let first = try #require(live.started())
        let port = try #require(UInt16(first.split(separator: ":").last!.split(separator: " ").first!), "\(first)")
        let sender = try UDPSender(host: "127.0.0.1", port: port)
        let rows = try TraceReader.read(path: trace)
        let order = rows.timeOrder()
        var i = 0, k = 0
        while i < order.count {
            let n = 1 + k % 5
            let objects = order[i..<min(order.count, i + n)].map { j -> String in
                let d = rows.difference(j)
                return #"{"t": \#(d.timeSeconds), "tag": "\#(d.tag.rawValue)", "anchor_a": \#(d.reference.rawValue), "anchor_b": \#(d.locator.rawValue), "tdoa_m": \#(d.differenceMeters)}"#
            }
            try sender.send(Array(("[" + objects.joined(separator: ", ") + "]").utf8))
            i += n
            k += 1
            if k % 200 == 0 { Thread.sleep(forTimeInterval: 0.005) }
        }
        Thread.sleep(forTimeInterval: 0.3)
        live.signal(SIGTERM)
        #expect(live.finish() == 0, "\(live.err)")
        #expect(TestPaths.bytes(dir + "/p2.csv") == TestPaths.bytes(dir + "/p.csv"))
        #expect(TestPaths.bytes(dir + "/e2.jsonl") == TestPaths.bytes(dir + "/e.jsonl"))
    }

    @Test("JSON difference rows published over MQTT (a blink's rows one message) give replay's bytes in the files")
    func mqttDifferences() throws {
        guard MosquittoBroker.isAvailable else { print("skipped: \(MosquittoBroker.unavailableMessage)"); return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let (dir, trace, _) = try Self.simulate("hall", tags: 2)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let site = TestPaths.fixture("sites/hall.json")
        let replay = CapturedRun(["replay", "--site", site, "--trace", trace, "--positions", dir + "/p.csv", "--events", dir + "/e.jsonl"])
        #expect(replay.status == 0, "\(replay.err)")
        let live = try LiveProcess(["stream", "--site", site, "--input", broker.uri(topic: "site/tdoa"), "--tick-ms", "0",
                                    "--positions", dir + "/p2.csv", "--events", dir + "/e2.jsonl"])
        #expect(live.started() != nil, "\(live.err)")
        let publisher = try MQTTClient(configuration: .standard(clientID: "tdoa-pub"), log: { _ in })
        defer { publisher.close() }
        try publisher.connect(host: broker.host, port: broker.port)
        let rows = try TraceReader.read(path: trace)
        let order = rows.timeOrder()
        var start = 0
        while start < order.count {
            var end = start + 1
            while end < order.count, rows.rows[order[end]].timeSeconds == rows.rows[order[start]].timeSeconds,
                  rows.rows[order[end]].tagIndex == rows.rows[order[start]].tagIndex { end += 1 }
            let objects = order[start..<end].map { j -> String in
                let d = rows.difference(j)
                return #"{"t": \#(d.timeSeconds), "tag": "\#(d.tag.rawValue)", "anchor_a": \#(d.reference.rawValue), "anchor_b": \#(d.locator.rawValue), "tdoa_m": \#(d.differenceMeters)}"#
            }
            try publisher.publish(topic: "site/tdoa", payload: Array(("[" + objects.joined(separator: ",") + "]").utf8))
            start = end
        }
        #expect(publisher.waitForAcknowledgements(timeoutMilliseconds: 30_000))
        let expected = TestPaths.bytes(dir + "/p.csv")
        #expect(live.wait(seconds: 60) { TestPaths.bytes(dir + "/p2.csv").count >= expected.count - 2_000 }, "\(live.err)")
        live.signal(SIGINT)
        #expect(live.finish() == 0, "\(live.err)")
        #expect(TestPaths.bytes(dir + "/p2.csv") == expected)
        #expect(TestPaths.bytes(dir + "/e2.jsonl") == TestPaths.bytes(dir + "/e.jsonl"))
    }
}
