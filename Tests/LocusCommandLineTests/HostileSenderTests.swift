import Foundation
@testable import LocusCommandLine
@testable import LocusCore
@testable import LocusIO
@testable import LocusLive
import LocusTestSupport
import Testing

/// The hostile-sender suite (issue #41): `locus stream` on loopback fed the hall's honest rows with
/// everything a sender it does not control can write between them — a flood of new ids, ids made of
/// topic syntax and control characters, bytes that are not UTF-8, 64 KiB datagrams, rows from the
/// future and the past, forged rows for an honest tag, garbage — and, over MQTT, a broker restart.
/// Each hostile kind lands in its expected count, and the honest tags' positions and events are
/// byte-identical to a replay of their rows alone.
@Suite("locus stream: hostile senders", .serialized)
struct HostileSenderTests {
    static let site = StreamCommandTests.site("hall")
    static let honest: Set<String> = ["T1", "T2"]

    init() { signal(SIGPIPE, SIG_IGN) }

    /// The lines of a positions CSV (header kept) or an events JSON Lines file whose tag is honest.
    static func honestLines(_ bytes: [UInt8], csv: Bool) -> [String] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init).enumerated().filter { k, line in
            if csv { return k == 0 || honest.contains(String(line.split(separator: ",", omittingEmptySubsequences: false)[1])) }
            return honest.contains { line.contains("\"tag\": \"\($0)\"") }
        }.map(\.element)
    }

    /// A summary count (0 when absent).
    static func count(_ v: JSONValue?) -> Int {
        guard let v, case .number(let n) = v.kind else { return 0 }
        return Int(n.value)
    }

    static func lines(_ bytes: [UInt8]) -> [String] { String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init) }

    /// The t of a CSV row `t,tag,anchor,range_m,floor`.
    static func time(_ row: String) -> Double { Double(row.split(separator: ",")[0])! }

    /// One round of hostile datagrams at the honest stream's time `t` (the latest honest row's),
    /// the `round`-th; each kind's rows counted in `expected`.
    struct Hostile {
        var futureTime = 0, invalidTag = 0, timeBackwards = 0, floodRows = 0, malformed = 0
        /// Ids that are valid but made of topic syntax: they are tags of their own.
        static let syntaxIDs = ["T#", "+", "a/b", "T1/position", "T1/zone", "%2F", "a b", "é", "#/+"]
        /// Ids that are refused: control characters (as JSON escapes), over 128 bytes.
        static let refusedIDs = ["T1/position\\u0000", "T1\\n", "\\u007f", "\\u0001T2", String(repeating: "x", count: 129),
                                 "T1\\u001b[2J"]

        mutating func datagrams(round: Int, t: Double) -> [[UInt8]] {
            var out: [[UInt8]] = []
            let ts = String(format: "%.4f", t)
            func json(_ tag: String, _ time: String?) -> String {
                "{" + (time.map { "\"t\": \($0), " } ?? "") + "\"tag\": \"\(tag)\", \"anchor\": 40407, \"range_m\": 5.0, \"floor\": \"1F\"}"
            }
            // A flood of new ids, at the honest time (CSV, 20 rows).
            out.append(Array((0..<20).map { "\(ts),F\(round)-\($0),40407,5.0,1F" }.joined(separator: "\n").utf8))
            floodRows += 20
            // Topic syntax (valid ids: tags of their own) and refused ids (JSON array).
            out.append(Array(("[" + (Self.syntaxIDs + Self.refusedIDs).map { json($0, ts) }.joined(separator: ", ") + "]").utf8))
            invalidTag += Self.refusedIDs.count
            // Not UTF-8 (CSV): refused, never merged through U+FFFD.
            out.append(Array("\(ts),T".utf8) + [0xFF, 0xFE] + Array("1,40407,5.0,1F\n\(ts),T".utf8) + [0xC3] + Array("2,40407,5.0,1F".utf8))
            invalidTag += 2
            // The future: a new tag at 1e9, a forged honest row an hour ahead, a row without t (Unix time).
            out.append(Array(json("X\(round)", "1e9").utf8))
            out.append(Array("\(String(format: "%.4f", t + 3600)),T1,40407,5.0,1F".utf8))
            out.append(Array(json("T2", nil).utf8))
            futureTime += 3
            // The past: a forged row for an honest tag before its latest (skipped by its clock).
            out.append(Array(json("T1", String(format: "%.4f", t - 30)).utf8))
            timeBackwards += 1
            // Garbage and the largest datagrams: counted as malformed or skipped rows, never fatal.
            out.append(Array("{\"t\": 1, broken".utf8)); malformed += 1
            out.append(Array("[1, 2, 3]".utf8)); malformed += 3
            out.append(Array("{".utf8) + [UInt8](repeating: 0x20, count: 65_506)); malformed += 1
            var seed = UInt64(round + 1) &* 0x9E37_79B9_7F4A_7C15
            out.append((0..<65_507).map { _ in
                seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
                return UInt8(truncatingIfNeeded: seed) | 0x80  // never a newline or '{': CSV garbage
            })
            return out
        }
    }

    @Test("UDP: honest rows with floods, topic and control ids, non-UTF-8, 64 KiB datagrams, future, past and garbage between them — the honest tags' bytes are replay's; every kind counted")
    func udp() throws {
        let rows = StreamCommandTests.rows("hall")
        let expected = try StreamingReplayTests.reference(site: Self.site, trace: StreamCommandTests.trace("hall"))
        let (dir, p, e) = StreamCommandTests.files()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let live = try LiveProcess(["stream", "--site", Self.site, "--input", "udp://127.0.0.1:0", "--tick-ms", "0",
                                    "--max-tags", "64", "--tag-idle", "5", "--positions", p, "--events", e, "--json"])
        let started = try #require(live.started(), "\(live.err)")
        let port = try #require(StreamHardeningTests.port(started), "\(started)")
        let sender = try UDPSender(host: "127.0.0.1", port: port)
        var hostile = Hostile()
        var i = 0, k = 0, round = 0
        while i < rows.count {
            let n = 1 + k % 7
            let chunk = rows[i..<min(rows.count, i + n)]
            try sender.send(Array((chunk.joined(separator: "\n") + "\n").utf8))
            i += n
            k += 1
            if k % 40 == 0 {
                for d in hostile.datagrams(round: round, t: Self.time(chunk.last!)) { try sender.send(d) }
                round += 1
                Thread.sleep(forTimeInterval: 0.01)  // the kernel's queue, not the engine, is the limit
            }
        }
        live.signal(SIGTERM)
        #expect(live.finish() == 0, "\(live.err)")
        #expect(Self.honestLines(TestPaths.bytes(p), csv: true) == Self.lines(expected.positions), "honest positions are replay's")
        #expect(Self.honestLines(TestPaths.bytes(e), csv: false) == Self.lines(expected.events), "honest events are replay's")
        let summary = try StreamHardeningTests.summary(live.err)
        let skipped = summary["skipped"]
        #expect(skipped?["future_time"] == .integer(hostile.futureTime), "\(live.err)")
        #expect(skipped?["invalid_tag"] == .integer(hostile.invalidTag), "\(live.err)")
        #expect(skipped?["time_backwards"] == .integer(hostile.timeBackwards), "\(live.err)")
        #expect(Self.count(skipped?["tag_limit"]) > 0, "the flood met the limit: \(live.err)")
        #expect(Self.count(summary["tags_evicted"]) > 0, "idle flood tags evicted: \(live.err)")
        #expect(Self.count(summary["malformed_messages"]) >= hostile.malformed, "\(live.err)")
        #expect(round > 10, "the hostile rounds ran: \(round)")
    }

    @Test("MQTT in and out: hostile ids and future rows between the honest messages, and the broker restarted halfway — the honest bytes are replay's, every topic holds its own tag")
    func mqtt() throws {
        guard MosquittoBroker.isAvailable else { print("skipped: \(MosquittoBroker.unavailableMessage)"); return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let rows = StreamCommandTests.rows("hall")
        let expected = try StreamingReplayTests.reference(site: Self.site, trace: StreamCommandTests.trace("hall"))
        let (dir, p, e) = StreamCommandTests.files()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let live = try LiveProcess(["stream", "--site", Self.site, "--input", broker.uri(topic: "site/ranges"), "--output", broker.uri(topic: "live"),
                                    "--tick-ms", "0", "--client-id", "hostile", "--positions", p, "--events", e, "--json"])
        #expect(live.started() != nil, "\(live.err)")
        let subscriber = try MQTTClient(configuration: .standard(clientID: "hostile-sub"), log: { _ in })
        defer { subscriber.close() }
        try subscriber.connect(host: broker.host, port: broker.port)
        try subscriber.subscribe("live/#", qos: 1)
        var futureRows = 0, refused = 0
        func publish(_ part: ArraySlice<String>) throws {
            let publisher = try MQTTClient(configuration: .standard(clientID: "hostile-pub"), log: { _ in })
            defer { publisher.close() }
            try publisher.connect(host: broker.host, port: broker.port)
            for start in stride(from: part.startIndex, to: part.endIndex, by: 8) {
                let chunk = part[start..<min(part.endIndex, start + 8)]
                try publisher.publish(topic: "site/ranges", payload: Array(("[" + chunk.map(StreamCommandTests.json).joined(separator: ",") + "]").utf8))
                if (start / 8) % 25 == 0 {
                    let t = String(format: "%.4f", Self.time(chunk.last!))
                    let ids = Hostile.syntaxIDs + Hostile.refusedIDs
                    let hostile = ids.map { "{\"t\": \(t), \"tag\": \"\($0)\", \"anchor\": 40407, \"range_m\": 5.0, \"floor\": \"1F\"}" }
                        + ["{\"t\": 1e9, \"tag\": \"X\", \"anchor\": 40407, \"range_m\": 5.0}", "{\"tag\": \"T1\", \"anchor\": 40407, \"range_m\": 5.0}"]
                    try publisher.publish(topic: "site/ranges", payload: Array(("[" + hostile.joined(separator: ",") + "]").utf8))
                    futureRows += 2
                    refused += Hostile.refusedIDs.count
                }
            }
            #expect(publisher.waitForAcknowledgements(timeoutMilliseconds: 30_000))
        }
        let half = rows.count / 2
        try publish(rows[..<half])
        // Everything of the first half solved (the last fixes wait for later rows) before the broker goes.
        let firstHalf = try StreamHardeningTests.replay(Array(rows[..<half]), dir: dir)
        let solved = Self.lines(firstHalf.positions).count - 10
        #expect(live.wait { Self.honestLines(StreamHardeningTests.read(p), csv: true).count >= solved }, "first half solved")
        Thread.sleep(forTimeInterval: 0.5)
        broker.stop()
        #expect(live.wait { live.err.components(separatedBy: "lost the connection").count - 1 >= 2 }, "both clients lose it: \(live.err)")
        try broker.start()
        #expect(live.wait(seconds: 60) { live.err.components(separatedBy: "reconnected").count - 1 >= 2 }, "both reconnect: \(live.err)")
        try publish(rows[half...])
        Thread.sleep(forTimeInterval: 1)
        live.signal(SIGTERM)
        #expect(live.finish() == 0, "\(live.err)")
        #expect(Self.honestLines(TestPaths.bytes(p), csv: true) == Self.lines(expected.positions), "honest positions are replay's")
        #expect(Self.honestLines(TestPaths.bytes(e), csv: false) == Self.lines(expected.events), "honest events are replay's")
        let summary = try StreamHardeningTests.summary(live.err)
        #expect(summary["skipped"]?["future_time"] == .integer(futureRows), "\(live.err)")
        #expect(summary["skipped"]?["invalid_tag"] == .integer(refused), "\(live.err)")
        #expect(summary["publish_failures"] == .integer(0), "\(live.err)")
        // Every message the subscriber saw sits on its own tag's level.
        var messages: [MQTTMessage] = []
        while subscriber.receive(into: &messages, maximumCount: 100_000, timeoutMilliseconds: 500) > 0 {}
        #expect(!messages.isEmpty)
        for m in messages {
            let levels = m.topic.split(separator: "/", omittingEmptySubsequences: false)
            guard levels.count == 4, levels[0] == "live", levels[1] == "tags", let id = TopicEncoding.decode(String(levels[2])),
                  case .string(let tag)? = (try? JSONParser.parse(m.payload))?["tag"]?.kind else { Issue.record("\(m.topic)"); continue }
            #expect(id == tag, "\(m.topic) carries \(tag)'s message")
        }
    }
}
