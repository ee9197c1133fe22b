import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
@testable import LocusLive
@testable import LocusServe
import LocusTestSupport
import Testing

/// `locus stream` trusts no sender (issue #41 items 1, 2, 3 and the live parts of 8): one arrival
/// rule for every input, rows from the future skipped, tag ids checked and never topic syntax,
/// failed publishes counted, logs that say which client.
@Suite("locus stream: time and ids", .serialized)
struct StreamHardeningTests {
    static let site = StreamCommandTests.site("hall")

    /// A child that exits early (a refused option) must fail the test, not kill it with SIGPIPE.
    init() { signal(SIGPIPE, SIG_IGN) }

    /// Hall rows up to `seconds`.
    static func rows(upTo seconds: Double) -> [String] {
        StreamCommandTests.rows("hall").filter { Double($0.split(separator: ",")[0])! <= seconds }
    }

    /// Replay's positions and events for `rows` (written to a trace in `dir`).
    static func replay(_ rows: [String], dir: String) throws -> (positions: [UInt8], events: [UInt8]) {
        let trace = dir + "/trace.csv"
        try Data(("t,tag,anchor,range_m,floor\n" + rows.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: trace))
        return try StreamingReplayTests.reference(site: site, trace: trace)
    }

    /// The `--json` summary: stderr's last line.
    static func summary(_ err: String) throws -> JSONValue {
        try JSONParser.parse(Array((err.split(separator: "\n").last.map(String.init) ?? "").utf8))
    }

    /// A file's bytes; none when it is missing (a run that failed).
    static func read(_ path: String) -> [UInt8] {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { Array($0) } ?? []
    }

    static func port(_ started: String) -> UInt16? {
        UInt16(started.split(separator: "→")[0].split(separator: ":").last!.trimmingCharacters(in: .whitespaces))
    }

    /// (t, tag, zone, event) of each JSON Lines event.
    static func events(_ bytes: [UInt8]) throws -> [(Double, String, String)] {
        try String(decoding: bytes, as: UTF8.self).split(separator: "\n").map { line in
            let v = try JSONParser.parse(Array(line.utf8))
            guard case .number(let t)? = v["t"]?.kind, case .string(let tag)? = v["tag"]?.kind,
                  case .string(let zone)? = v["zone"]?.kind, case .string(let kind)? = v["event"]?.kind else { return (-1, "", "") }
            return (t.value, tag, zone + " " + kind)
        }
    }

    // MARK: item 1 — arrival time

    @Test("UDP, one range per datagram paced in real time, the default tick, after 2 s idle: about replay's fixes, and events at replay's times (not late by the idle time)")
    func udpPacedDefaultTick() throws {
        let rows = Self.rows(upTo: 6.0)
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let expected = try Self.replay(rows, dir: dir)
        let (p, e) = (dir + "/p.csv", dir + "/e.jsonl")
        let live = try LiveProcess(["stream", "--site", Self.site, "--input", "udp://127.0.0.1:0", "--positions", p, "--events", e, "--json"])
        let started = try #require(live.started(), "\(live.err)")
        let port = try #require(Self.port(started), "\(started)")
        let sender = try UDPSender(host: "127.0.0.1", port: port)
        Thread.sleep(forTimeInterval: 2.0)  // the stream sits idle before the first row
        let start = Date()
        for row in rows {
            let wait = Double(row.split(separator: ",")[0])! - Date().timeIntervalSince(start)
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            try sender.send(Array((row + "\n").utf8))
        }
        Thread.sleep(forTimeInterval: 0.3)
        live.signal(SIGTERM)
        #expect(live.finish() == 0, "\(live.err)")
        let replayFixes = String(decoding: expected.positions, as: UTF8.self).split(separator: "\n").count - 1
        let liveFixes = String(decoding: Self.read(p), as: UTF8.self).split(separator: "\n").count - 1
        // Rounds are not split: the fix count is replay's (a little slack for a late send on a busy machine).
        #expect(abs(liveFixes - replayFixes) <= max(3, replayFixes / 10), "live \(liveFixes) fixes, replay \(replayFixes)")
        let replayEvents = try Self.events(expected.events).filter { $0.0 <= 5.9 }
        let liveEvents = try Self.events(Self.read(e)).filter { $0.0 <= 5.9 }
        #expect(!replayEvents.isEmpty)
        #expect(liveEvents.map { "\($0.1) \($0.2)" } == replayEvents.map { "\($0.1) \($0.2)" }, "\(liveEvents) vs \(replayEvents)")
        for (l, r) in zip(liveEvents, replayEvents) { #expect(abs(l.0 - r.0) < 0.1, "event at \(l.0), replay \(r.0)") }
    }

    // MARK: item 3 — future time

    static let futureRow = "{\"t\": 1e9, \"tag\": \"X9\", \"anchor\": 40407, \"range_m\": 3.0, \"floor\": \"1F\"}"
    /// A row for the honest tag T1, 10 s after `row`'s time (inside `TagClock`'s 300 s, beyond the
    /// 5 s horizon): were it admitted by T1's clock, T1's honest rows would read as going backwards.
    static func forgedT1Row(after row: String) -> String {
        "\(Double(row.split(separator: ",")[0])! + 10),T1,40407,3.0,1F"
    }
    static let timelessRow = "{\"tag\": \"T1\", \"anchor\": 40407, \"range_m\": 3.0, \"floor\": \"1F\"}"

    @Test("stdin with --future-horizon 5: a row at t = 1e9 from a new tag, a row without t and a forged row 10 s ahead for an honest tag leave every position and event byte-identical; all counted future_time")
    func futureRowsOnStandardInput() throws {
        let rows = Self.rows(upTo: 20).map(StreamCommandTests.json)
        var hostile = rows
        let ahead = Self.forgedT1Row(after: Self.rows(upTo: 20)[rows.count / 2 - 1])
        hostile.insert(contentsOf: [Self.futureRow, Self.timelessRow, StreamCommandTests.json(ahead)], at: rows.count / 2)
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var outputs: [[UInt8]] = []
        for (lines, futures) in [(rows, 0), (hostile, 3)] {
            let (p, e) = (dir + "/p\(futures).csv", dir + "/e\(futures).jsonl")
            let r = try StreamingReplayTests.locus(["stream", "--site", Self.site, "--tick-ms", "0", "--future-horizon", "5",
                                                    "--positions", p, "--events", e, "--json"],
                                                   input: Array((lines.joined(separator: "\n") + "\n").utf8))
            #expect(r.status == 0, "\(r.err)")
            let summary = try Self.summary(r.err)
            #expect(summary["skipped"]?["future_time"] == (futures == 0 ? nil : .integer(futures)), "\(r.err)")
            outputs += [Self.read(p), Self.read(e)]
        }
        #expect(outputs[0] == outputs[2], "positions untouched by the hostile rows")
        #expect(outputs[1] == outputs[3], "events untouched by the hostile rows")
        #expect(!String(decoding: outputs[3], as: UTF8.self).contains("1000000000"))
    }

    @Test("UDP's default horizon: a CSV row at t = 1e9, a JSON row without t and a forged CSV row 10 s ahead for T1 between replay's rows change nothing; all counted future_time")
    func futureRowsOnUDP() throws {
        let rows = Self.rows(upTo: 20)
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let expected = try Self.replay(rows, dir: dir)
        let (p, e) = (dir + "/p.csv", dir + "/e.jsonl")
        let live = try LiveProcess(["stream", "--site", Self.site, "--input", "udp://127.0.0.1:0", "--tick-ms", "0",
                                    "--positions", p, "--events", e, "--json"])
        let started = try #require(live.started(), "\(live.err)")
        let port = try #require(Self.port(started), "\(started)")
        let sender = try UDPSender(host: "127.0.0.1", port: port)
        for start in stride(from: 0, to: rows.count, by: 8) {
            try sender.send(Array((rows[start..<min(rows.count, start + 8)].joined(separator: "\n") + "\n").utf8))
            if start == rows.count / 16 * 8 {
                try sender.send(Array("1000000000,X9,40407,3.0,1F\n".utf8))
                try sender.send(Array(Self.timelessRow.utf8))
                try sender.send(Array((Self.forgedT1Row(after: rows[start + 7]) + "\n").utf8))
            }
            if start % 400 == 0 { Thread.sleep(forTimeInterval: 0.005) }
        }
        Thread.sleep(forTimeInterval: 0.5)
        live.signal(SIGTERM)
        #expect(live.finish() == 0, "\(live.err)")
        #expect(Self.read(p) == expected.positions)
        #expect(Self.read(e) == expected.events)
        #expect(try Self.summary(live.err)["skipped"]?["future_time"] == .integer(3), "\(live.err)")
    }

    // MARK: item 2 — ids

    @Test("tag ids over 128 bytes, not UTF-8 or holding a control character are skipped as invalid_tag — stream (CSV and JSON) and replay alike; the rest is untouched")
    func invalidTagIDs() throws {
        let rows = Self.rows(upTo: 5)
        let dir = TestPaths.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let expected = try Self.replay(rows, dir: dir)
        // Two ids that differ only in their invalid bytes (which once both became "T\u{FFFD}").
        let badCSV: [[UInt8]] = [Array("2.0,T".utf8) + [0xFF] + Array(",40407,3.0,1F".utf8),
                                 Array("2.0,T".utf8) + [0xFE] + Array(",40407,3.0,1F".utf8),
                                 Array("2.0,\(String(repeating: "A", count: 129)),40407,3.0,1F".utf8),
                                 Array("2.0,\"T\u{1}\",40407,3.0,1F".utf8),
                                 Array("2.0,T\u{7F},40407,3.0,1F".utf8)]
        var csv = Array("t,tag,anchor,range_m,floor\n".utf8)
        for (k, row) in rows.enumerated() {
            csv += Array((row + "\n").utf8)
            if k == rows.count / 2 { for bad in badCSV { csv += bad + [0x0A] } }
        }
        let trace = dir + "/bad.csv"
        try Data(csv).write(to: URL(fileURLWithPath: trace))
        let (p, e) = (dir + "/p.csv", dir + "/e.jsonl")
        let stream = try StreamingReplayTests.locus(["stream", "--site", Self.site, "--tick-ms", "0", "--positions", p, "--events", e, "--json"], input: csv)
        #expect(stream.status == 0, "\(stream.err)")
        #expect(try Self.summary(stream.err)["skipped"]?["invalid_tag"] == .integer(5), "\(stream.err)")
        #expect(Self.read(p) == expected.positions)
        #expect(Self.read(e) == expected.events)
        #expect(!stream.err.contains("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), "no message prints a whole id")

        let replay = CapturedRun(["replay", "--site", Self.site, "--trace", trace, "--positions", p, "--json"])
        #expect(replay.status == 0, "\(replay.err)")
        #expect(try JSONParser.parse(Array(replay.out.utf8))["skipped"]?["invalid_tag"] == .integer(5), "\(replay.out)")
        #expect(Self.read(p) == expected.positions)

        // JSON: a NUL, a DEL, 129 bytes, 70,000 bytes.
        var lines = rows.map(StreamCommandTests.json)
        let bad = ["T1\\u0000", "T\\u007f", String(repeating: "é", count: 65), String(repeating: "x", count: 70_000)].map {
            "{\"t\": 2.0, \"tag\": \"\($0)\", \"anchor\": 40407, \"range_m\": 3.0, \"floor\": \"1F\"}"
        }
        lines.insert(contentsOf: bad, at: lines.count / 2)
        let json = try StreamingReplayTests.locus(["stream", "--site", Self.site, "--tick-ms", "0", "--positions", p, "--events", e, "--json"],
                                                  input: Array((lines.joined(separator: "\n") + "\n").utf8))
        #expect(json.status == 0, "\(json.err)")
        #expect(try Self.summary(json.err)["skipped"]?["invalid_tag"] == .integer(4), "\(json.err)")
        #expect(Self.read(p) == expected.positions)
        #expect(Self.read(e) == expected.events)
    }

    @Test("TagIDRule: at most 128 bytes of UTF-8 without C0 controls or DEL")
    func tagIDRule() {
        func valid(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer { TagIDRule.isValid($0) } }
        #expect(valid(Array("T1".utf8)) && valid(Array("T1/position".utf8)) && valid(Array("é漢字 #+".utf8)))
        #expect(valid(Array(repeating: 0x41, count: 128)) && !valid(Array(repeating: 0x41, count: 129)))
        #expect(!valid([0x54, 0xFF]) && !valid([0xC3]) && !valid([0xED, 0xA0, 0x80]) && !valid([0xC0, 0x80]))
        #expect(!valid([0x54, 0x00]) && !valid([0x09]) && !valid([0x0A]) && !valid([0x7F]) && !valid([0x1F]))
        #expect(TagIDRule.isValid("T1") && !TagIDRule.isValid("T1\u{0}") && !TagIDRule.isValid(String(repeating: "é", count: 65)))
    }

    @Test("TopicEncoding: every id is exactly one topic level with no MQTT syntax, and decodes back to itself")
    func topicEncoding() {
        #expect(TopicEncoding.level("T1") == "T1")
        #expect(TopicEncoding.level("T1/position\u{0}") == "T1%2Fposition%00")
        #expect(TopicEncoding.level("T#") == "T%23" && TopicEncoding.level("+") == "%2B" && TopicEncoding.level("a b%") == "a%20b%25")
        #expect(TopicEncoding.level("é") == "%C3%A9")
        for id in ["T1", "T1/zone", "#", "+/+", "%41", "a.b_c~d-e", "x\n\u{7F}", "漢字", ""] {
            let level = TopicEncoding.level(id)
            #expect(!level.contains("/") && !level.contains("+") && !level.contains("#") && level.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F })
            #expect(TopicEncoding.decode(level) == id, "\(id)")
        }
        #expect(TopicEncoding.decode("%2") == nil && TopicEncoding.decode("%zz") == nil && TopicEncoding.decode("%FF") == nil)
        #expect(TopicEncoding.shown(String(repeating: "x", count: 70_000)).count <= 40)
        #expect(TopicEncoding.shown("T1\n\u{0}") == "T1%0A%00")
    }

    @Test("MQTT out: hostile tag ids publish under their own encoded level only; nothing lands on another tag's topic; no publish fails")
    func hostileTagsOnMQTT() throws {
        guard MosquittoBroker.isAvailable else { print("skipped: \(MosquittoBroker.unavailableMessage)"); return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try MQTTClient(configuration: .standard(clientID: "hostile-sub"), log: { _ in })
        defer { subscriber.close() }
        try subscriber.connect(host: broker.host, port: broker.port)
        try subscriber.subscribe("live/#", qos: 1)
        // T1's rows again under each hostile id: each makes fixes of its own.
        let t1 = Self.rows(upTo: 4).filter { $0.contains(",T1,") }
        let hostile = ["T#", "+", "T1/position", "T1/zone", "a b", "%54%31"]
        var lines = Self.rows(upTo: 4).map(StreamCommandTests.json)
        for id in hostile {
            lines += t1.map { StreamCommandTests.json($0).replacingOccurrences(of: "\"T1\"", with: "\"\(id)\"") }
        }
        lines.sort { Double($0.split(separator: ",")[0].dropFirst(6))! < Double($1.split(separator: ",")[0].dropFirst(6))! }
        let r = try StreamingReplayTests.locus(["stream", "--site", Self.site, "--tick-ms", "0", "--output", broker.uri(topic: "live"), "--json"],
                                               input: Array((lines.joined(separator: "\n") + "\n").utf8))
        #expect(r.status == 0, "\(r.err)")
        #expect(try Self.summary(r.err)["publish_failures"] == .integer(0), "\(r.err)")
        var messages: [MQTTMessage] = []
        _ = subscriber.receive(into: &messages, maximumCount: 100_000, timeoutMilliseconds: 2_000)
        while subscriber.receive(into: &messages, maximumCount: 100_000, timeoutMilliseconds: 500) > 0 {}
        var tags: Set<String> = []
        for m in messages {
            let levels = m.topic.split(separator: "/", omittingEmptySubsequences: false)
            #expect(levels.count == 4 && levels[0] == "live" && levels[1] == "tags" && (levels[3] == "position" || levels[3] == "zone"), "\(m.topic)")
            guard levels.count == 4, let id = TopicEncoding.decode(String(levels[2])),
                  case .string(let payloadTag)? = (try? JSONParser.parse(m.payload))?["tag"]?.kind else { Issue.record("\(m.topic)"); continue }
            #expect(id == payloadTag, "\(m.topic) carries \(payloadTag)'s message")
            tags.insert(id)
        }
        #expect(tags == Set(["T1", "T2", "T#", "+", "T1/position", "T1/zone", "a b", "%54%31"]), "\(tags)")
    }

    @Test("a publish that fails is counted and logged once with a bounded id, never thrown")
    func publishFailureCounted() throws {
        guard MosquittoBroker.isAvailable else { print("skipped: \(MosquittoBroker.unavailableMessage)"); return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let log = LogLines()
        let publisher = try #require(try LivePublisher(try StreamEndpoint(parsing: broker.uri(topic: "live"), as: .output),
                                                       clientID: "failing-out", log: { log.append($0) }))
        publisher.close()  // every publish now fails
        var outputs = StreamOutputs(standardOutput: nil, jsonLines: false, positions: nil, events: nil, publisher: publisher,
                                    log: { log.append($0) })
        let id = TagID(String(repeating: "x", count: 120))
        let fix = PositionFix(timeSeconds: 1, tag: id, floor: FloorID("1F"), position: Point3(x: 1, y: 2, z: 0),
                              covariance: .zero, quality: FixQuality(hdop: 1, pdop: 1, residualRMSMeters: 0, locatorsUsed: 4))
        try outputs.write(fixes: [fix, fix, fix], events: [])
        #expect(outputs.publishFailures == 3)
        #expect(log.lines.count == 1, "\(log.lines)")
        #expect(log.lines.first.map { !$0.contains(id.rawValue) && $0.contains("xxxx") } == true, "\(log.lines)")
    }

    // MARK: item 8

    @Test("udp://0.0.0.0:PORT warns that it listens on every interface")
    func everyInterfaceWarning() throws {
        let live = try LiveProcess(["stream", "--site", Self.site, "--input", "udp://0.0.0.0:0"])
        #expect(live.wait { live.err.contains("every interface") }, "\(live.err)")
        live.signal(SIGTERM)
        #expect(live.finish() == 0, "\(live.err)")
        let local = try LiveProcess(["stream", "--site", Self.site, "--input", "udp://127.0.0.1:0"])
        _ = local.started()
        local.signal(SIGTERM)
        #expect(local.finish() == 0 && !local.err.contains("every interface"), "\(local.err)")
    }
}

/// Lines logged through a test console.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ s: String) { lock.withLock { stored.append(s) } }
    var lines: [String] { lock.withLock { stored } }
}
