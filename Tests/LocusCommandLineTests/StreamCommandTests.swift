import Foundation
@testable import LocusCommandLine
@testable import LocusEvaluation
@testable import LocusReports
@testable import LocusCore
@testable import LocusIO
@testable import LocusLive
import LocusTestSupport
import Testing

/// `locus stream` (issue 16): the same rows through stdin, UDP or MQTT give replay's bytes; the tick
/// moves the clock; malformed input is counted; bad endpoints fail with their exit codes.
@Suite("locus stream", .serialized)
struct StreamCommandTests {
    static func site(_ name: String) -> String { StreamingReplayTests.site(name) }
    static func trace(_ name: String) -> String { StreamingReplayTests.trace(name) }

    /// The trace's data lines (header dropped).
    static func rows(_ name: String) -> [String] {
        Array(String(decoding: TestPaths.bytes(trace(name)), as: UTF8.self).split(separator: "\n").dropFirst().map(String.init))
    }

    /// A CSV row `t,tag,anchor,range_m,floor` as the JSON object of a live message.
    static func json(_ row: String) -> String {
        let f = row.split(separator: ",", omittingEmptySubsequences: false)
        return "{\"t\": \(f[0]), \"tag\": \"\(f[1])\", \"anchor\": \(f[2]), \"range_m\": \(f[3]), \"floor\": \"\(f[4])\"}"
    }

    static func files() -> (dir: String, positions: String, events: String) {
        let dir = TestPaths.temporaryDirectory()
        return (dir, dir + "/p.csv", dir + "/e.jsonl")
    }

    @Test("trace CSV and JSON Lines on stdin (--tick-ms 0) give replay's positions and events, byte for byte; stdout holds the positions CSV",
          arguments: ["hall", "corridor"])
    func standardInput(fixture: String) throws {
        let expected = try StreamingReplayTests.reference(site: Self.site(fixture), trace: Self.trace(fixture))
        let (dir, p, e) = Self.files()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let csv = try StreamingReplayTests.locus(["stream", "--site", Self.site(fixture), "--tick-ms", "0", "--positions", p, "--events", e],
                                                 input: TestPaths.bytes(Self.trace(fixture)))
        #expect(csv.status == 0, "\(csv.err)")
        #expect(TestPaths.bytes(p) == expected.positions)
        #expect(TestPaths.bytes(e) == expected.events)
        #expect(csv.out == expected.positions)
        #expect(csv.err.contains("rows received"), "\(csv.err)")

        let lines = Self.rows(fixture).map(Self.json).joined(separator: "\n") + "\n"
        let jsonl = try StreamingReplayTests.locus(["stream", "--site", Self.site(fixture), "--tick-ms", "0", "--positions", p, "--events", e,
                                                    "--format", "jsonl"], input: Array(lines.utf8))
        #expect(jsonl.status == 0, "\(jsonl.err)")
        #expect(TestPaths.bytes(p) == expected.positions)
        #expect(TestPaths.bytes(e) == expected.events)
        // JSON Lines on stdout: every position (with its uncertainty) and every event, in time order.
        let out = String(decoding: jsonl.out, as: UTF8.self).split(separator: "\n")
        let eventLines = out.filter { $0.contains("\"event\": ") }.map { $0 + "\n" }.joined()
        #expect(Array(eventLines.utf8) == expected.events)
        let positionLines = out.filter { $0.contains("\"r95\": ") }
        #expect(positionLines.count == String(decoding: expected.positions, as: UTF8.self).split(separator: "\n").count - 1)
        let first = try JSONParser.parse(Array(positionLines[0].utf8))
        for key in ["t", "tag", "floor", "x", "y", "z", "sd_x", "sd_y", "r95"] { #expect(first[key] != nil, "position JSON lacks \(key)") }
        let times = out.compactMap { line -> Double? in (try? JSONParser.parse(Array(line.utf8)))?["t"].flatMap { if case .number(let n) = $0.kind { n.value } else { nil } } }
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "positions and events interleaved in time order")
    }

    @Test("--max-lag: T2's rows arriving 0.75 s behind T1's (a slower gateway) give replay's bytes with --max-lag 1; without it T2's fixes come out after later ones and its zone events at the stream's clock")
    func maximumLag() throws {
        let expected = try StreamingReplayTests.reference(site: Self.site("hall"), trace: Self.trace("hall"))
        // The rows in the order they would arrive: T2's 0.75 s late (a stable sort keeps each tag's order).
        let rows = Self.rows("hall").enumerated().sorted { a, b in
            func arrival(_ row: String) -> Double { Double(row.split(separator: ",")[0])! + (row.contains(",T2,") ? 0.75 : 0) }
            return (arrival(a.element), a.offset) < (arrival(b.element), b.offset)
        }.map(\.element)
        let input = Array(("t,tag,anchor,range_m,floor\n" + rows.joined(separator: "\n") + "\n").utf8)
        let (dir, p, e) = Self.files()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        /// The summary's late_fixes (`--json`: the last line of standard error).
        func lateFixes(_ err: String) throws -> Int? {
            let summary = try JSONParser.parse(Array(String(err.split(separator: "\n").last ?? "").utf8))
            if case .number(let n)? = summary["late_fixes"]?.kind { return Int(n.value) }
            return nil
        }
        let held = try StreamingReplayTests.locus(["stream", "--site", Self.site("hall"), "--tick-ms", "0", "--max-lag", "1",
                                                   "--positions", p, "--events", e, "--json"], input: input)
        #expect(held.status == 0, "\(held.err)")
        #expect(TestPaths.bytes(p) == expected.positions)
        #expect(TestPaths.bytes(e) == expected.events)
        #expect(try lateFixes(held.err) == 0)
        let plain = try StreamingReplayTests.locus(["stream", "--site", Self.site("hall"), "--tick-ms", "0", "--positions", p, "--events", e,
                                                    "--json"], input: input)
        #expect(plain.status == 0, "\(plain.err)")
        #expect(TestPaths.bytes(p) != expected.positions, "without --max-lag the positions leave out of time order")
        #expect(TestPaths.bytes(e) != expected.events, "without --max-lag T2's events are judged at the stream's clock")
        let late = try #require(try lateFixes(plain.err))
        #expect(late > 0 && late <= 480, "T2's late fixes counted: \(late)")
        let bad = try StreamingReplayTests.locus(["stream", "--site", Self.site("hall"), "--max-lag", "-1"], input: [])
        #expect(bad.status == 2, "\(bad.err)")
    }

    @Test("UDP datagrams of 1 to 7 rows, with malformed ones between them, give replay's bytes; SIGTERM drains and exits 0 with the counts")
    func udp() throws {
        let expected = try StreamingReplayTests.reference(site: Self.site("hall"), trace: Self.trace("hall"))
        let (dir, p, e) = Self.files()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let live = try LiveProcess(["stream", "--site", Self.site("hall"), "--input", "udp://127.0.0.1:0", "--tick-ms", "0",
                                    "--positions", p, "--events", e, "--output", "-", "--json"])
        let first = try #require(live.started())
        let port = try #require(UInt16(first.split(separator: ":").last!.split(separator: " ").first!), "\(first)")
        let sender = try UDPSender(host: "127.0.0.1", port: port)
        let rows = Self.rows("hall")
        var i = 0, k = 0
        while i < rows.count {
            let n = 1 + k % 7
            try sender.send(Array((rows[i..<min(rows.count, i + n)].joined(separator: "\n") + "\n").utf8))
            i += n
            k += 1
            if k % 100 == 0 {
                try sender.send(Array("not a row at all".utf8))
                try sender.send(Array("{\"t\": 1, broken".utf8))
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
        #expect(live.wait { live.outText.split(separator: "\n").count >= 700 }, "positions keep coming out live")
        live.signal(SIGTERM)
        #expect(live.finish() == 0, "\(live.err)")
        #expect(TestPaths.bytes(p) == expected.positions)
        #expect(TestPaths.bytes(e) == expected.events)
        #expect(live.out == expected.positions)
        let summary = try JSONParser.parse(Array(live.err.split(separator: "\n").last!.utf8))
        #expect(summary["rows"] == .integer(rows.count + k / 100), "the malformed CSV datagrams are rows skipped, \(live.err)")
        #expect(summary["malformed_messages"] == .integer(k / 100), "\(live.err)")
        #expect(summary["skipped"]?["missing_field"] == .integer(k / 100), "\(live.err)")
    }

    @Test("MQTT in and out through a private broker: replay's bytes in the files, every position and event published under the prefix")
    func mqtt() throws {
        guard MosquittoBroker.isAvailable else { print("skipped: \(MosquittoBroker.unavailableMessage)"); return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let expected = try StreamingReplayTests.reference(site: Self.site("hall"), trace: Self.trace("hall"))
        let expectedPositions = String(decoding: expected.positions, as: UTF8.self).split(separator: "\n").dropFirst()
        let expectedEvents = String(decoding: expected.events, as: UTF8.self).split(separator: "\n")
        let (dir, p, e) = Self.files()
        defer { try? FileManager.default.removeItem(atPath: dir) }

        let subscriber = try MQTTClient(configuration: .standard(clientID: "test-sub"), log: { _ in })
        defer { subscriber.close() }
        try subscriber.connect(host: broker.host, port: broker.port)
        try subscriber.subscribe("live/tags/#", qos: 1)
        let live = try LiveProcess(["stream", "--site", Self.site("hall"), "--input", broker.uri(topic: "site/ranges"),
                                    "--output", broker.uri(topic: "live"), "--tick-ms", "0", "--positions", p, "--events", e])
        #expect(live.started() != nil, "\(live.err)")
        let publisher = try MQTTClient(configuration: .standard(clientID: "test-pub"), log: { _ in })
        defer { publisher.close() }
        try publisher.connect(host: broker.host, port: broker.port)
        // One message per round (8 rows, a JSON array), then a few single objects and a malformed one.
        let rows = Self.rows("hall")
        for start in stride(from: 0, to: rows.count - 16, by: 8) {
            try publisher.publish(topic: "site/ranges", payload: Array(("[" + rows[start..<start + 8].map(Self.json).joined(separator: ",") + "]").utf8))
        }
        try publisher.publish(topic: "site/ranges", payload: Array("definitely not json".utf8))
        for row in rows[(rows.count - 16)...] { try publisher.publish(topic: "site/ranges", payload: Array(Self.json(row).utf8)) }
        #expect(publisher.waitForAcknowledgements(timeoutMilliseconds: 30_000))

        var messages: [MQTTMessage] = []
        #expect(live.wait(seconds: 60) {
            _ = subscriber.receive(into: &messages, maximumCount: 100_000, timeoutMilliseconds: 0)
            return messages.count >= expectedPositions.count - 10
        }, "positions published live: \(messages.count)")
        live.signal(SIGINT)
        #expect(live.finish() == 0, "\(live.err)")
        #expect(live.err.contains("malformed messages: 1"), "\(live.err)")
        #expect(TestPaths.bytes(p) == expected.positions)
        #expect(TestPaths.bytes(e) == expected.events)
        _ = subscriber.receive(into: &messages, maximumCount: 100_000, timeoutMilliseconds: 2_000)
        while subscriber.receive(into: &messages, maximumCount: 100_000, timeoutMilliseconds: 500) > 0 {}
        let positions = messages.filter { $0.topic.hasSuffix("/position") }
        let zones = messages.filter { $0.topic.hasSuffix("/zone") }
        #expect(positions.count == expectedPositions.count)
        #expect(zones.map { String(decoding: $0.payload, as: UTF8.self) } == expectedEvents.map(String.init))
        // Each position: its topic names its tag; t, x, y as the CSV spells them.
        for (m, row) in zip(positions, expectedPositions) {
            let f = row.split(separator: ",", omittingEmptySubsequences: false)
            let v = try JSONParser.parse(m.payload)
            #expect(m.topic == "live/tags/\(f[1])/position")
            #expect(v["sd_x"] != nil && v["sd_y"] != nil && v["r95"] != nil)
            if case .number(let t)? = v["t"]?.kind, case .number(let x)? = v["x"]?.kind {
                #expect(t.literal == String(f[0]) && x.literal == String(f[2]), "\(row) vs \(String(decoding: m.payload, as: UTF8.self))")
            } else {
                Issue.record("position without t or x: \(String(decoding: m.payload, as: UTF8.self))")
            }
        }
    }

    @Test("the wall-clock tick moves the clock while nothing arrives: a tag that fell silent inside a zone leaves it on time; with --tick-ms 0 it does not")
    func tickExitsSilentTags() throws {
        // Hall rows up to t = 1 s: T1 entered reception (outPeriod 4 s) at 0.278 and then falls silent.
        let rows = Self.rows("hall").filter { Double($0.split(separator: ",")[0])! <= 1.0 }
        let input = Array(("t,tag,anchor,range_m,floor\n" + rows.joined(separator: "\n") + "\n").utf8)
        for tick in ["20", "0"] {
            let live = try LiveProcess(["stream", "--site", Self.site("hall"), "--format", "jsonl", "--tick-ms", tick])
            live.write(input)
            let exited = live.wait(seconds: tick == "0" ? 6 : 20) { live.outText.contains("\"zone\": \"reception\", \"event\": \"exit\"") }
            live.closeInput()
            #expect(live.finish() == 0, "\(live.err)")
            if tick == "0" {
                #expect(!exited && !live.outText.contains("\"event\": \"exit\""), "without the tick the clock waits for data")
            } else {
                #expect(exited, "\(live.outText)")
                let line = live.outText.split(separator: "\n").first { $0.contains("\"zone\": \"reception\", \"event\": \"exit\"") }!
                let t = try JSONParser.parse(Array(line.utf8))["t"]
                if case .number(let n)? = t?.kind { #expect(abs(n.value - 5.0) < 0.1, "exit at the last detection (~1.0 s) + 4 s: \(line)") }
            }
        }
    }

    @Test("--max-tags/--tag-idle (issue #41 item 4): a flood of 2,000 new ids among the honest rows on stdin, as CSV and as JSON Lines, leaves the honest tags' files byte-identical to replay of their rows alone; refused rows counted as tag_limit, evictions as tags_evicted, alike")
    func boundedTags() throws {
        let expected = try StreamingReplayTests.reference(site: Self.site("hall"), trace: Self.trace("hall"))
        var rows = Self.rows("hall").map { row -> (Double, String) in (Double(row.split(separator: ",")[0])!, row) }
        for k in 0..<2000 {
            let t = 0.0021 + 0.0445 * Double(k)
            rows.append((t, "\(DecimalText.string(t, decimals: 4)),X\(k),40407,5.0,1F"))
        }
        rows.sort { $0.0 < $1.0 }
        let input = "t,tag,anchor,range_m,floor\n" + rows.map { $0.1 + "\n" }.joined()
        let (dir, p, e) = Self.files()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        /// The stream of `input` bounded to 4 tags: its files must be the honest replay's; its summary.
        func bounded(_ input: String) throws -> JSONValue {
            let run = try StreamingReplayTests.locus(["stream", "--site", Self.site("hall"), "--tick-ms", "0", "--positions", p, "--events", e,
                                                      "--max-tags", "4", "--tag-idle", "5", "--json"], input: Array(input.utf8))
            #expect(run.status == 0, "\(run.err)")
            #expect(TestPaths.bytes(p) == expected.positions)
            #expect(TestPaths.bytes(e) == expected.events)
            return try JSONParser.parse(Array((run.err.split(separator: "\n").last ?? "").utf8))
        }
        let summary = try bounded(input)
        let limited = summary["skipped"]?["tag_limit"].flatMap { if case .number(let n) = $0.kind { n.value } else { nil } } ?? 0
        let evicted = summary["tags_evicted"].flatMap { if case .number(let n) = $0.kind { n.value } else { nil } } ?? 0
        #expect(limited > 1000, "\(summary)")
        #expect(evicted > 20, "two free slots, flood ids idle after 5 s over 90 s: \(summary)")
        // The same rows as JSON Lines (by id, not through the CSV reader): the same files and counts.
        let jsonSummary = try bounded(rows.map { Self.json($0.1) + "\n" }.joined())
        #expect(jsonSummary["skipped"] == summary["skipped"] && jsonSummary["tags_evicted"] == summary["tags_evicted"], "\(jsonSummary)")

        for bad in [["--max-tags", "0"], ["--max-tags", "many"], ["--tag-idle", "0"], ["--tag-idle", "-3"]] {
            let r = CapturedRun(["stream", "--site", Self.site("hall")] + bad)
            #expect(r.status == 2 && r.err.contains("E1001") && r.err.contains(bad[0]), "\(bad): \(r.err)")
        }
    }

    @Test("a bad URI exits 2 naming it; an unreachable broker exits 1 with E5008; a UDP port in use exits 1")
    func badEndpoints() throws {
        let site = Self.site("hall")
        for (input, output) in [("ftp://x/y", "-"), ("-", "udp://127.0.0.1:9"), ("mqtt://127.0.0.1/t", "-"), ("-", "mqtt://127.0.0.1:1883/a/#")] {
            let r = CapturedRun(["stream", "--site", site, "--input", input, "--output", output])
            #expect(r.status == 2, "\(input) \(output): \(r.err)")
            #expect(r.err.contains("E1001") && (r.err.contains(input) || r.err.contains(output)), "\(r.err)")
        }
        let port = try MosquittoBroker.freeTCPPort()
        let unreachable = CapturedRun(["stream", "--site", site, "--input", "mqtt://127.0.0.1:\(port)/ranges"])
        #expect(unreachable.status == 1, "\(unreachable.err)")
        #expect(unreachable.err.contains("E5008"), "\(unreachable.err)")
        let taken = try UDPReceiver(host: "127.0.0.1", port: 0)
        defer { taken.close() }
        let inUse = CapturedRun(["stream", "--site", site, "--input", "udp://127.0.0.1:\(taken.port)"])
        #expect(inUse.status == 1 && inUse.err.contains("E5008"), "\(inUse.err)")
    }
}

/// The broker going away in the middle of a stream (issue 16, item 3).
@Suite("locus stream: broker restart", .serialized)
struct StreamBrokerRestartTests {
    @Test("the broker stopped and started again: the loss is logged once per client, naming it; the stream reconnects and subscribes again, rows published after the restart are solved; nothing fatal")
    func brokerRestart() throws {
        guard MosquittoBroker.isAvailable else { print("skipped: \(MosquittoBroker.unavailableMessage)"); return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let rows = StreamCommandTests.rows("hall")
        let half = rows.count / 2
        let live = try LiveProcess(["stream", "--site", StreamCommandTests.site("hall"), "--input", broker.uri(topic: "site/ranges"),
                                    "--output", broker.uri(topic: "out"), "--positions", "-", "--tick-ms", "0", "--client-id", "restart-test"])
        #expect(live.started() != nil, "\(live.err)")
        func publish(_ part: ArraySlice<String>) throws {
            let publisher = try MQTTClient(configuration: .standard(clientID: "restart-pub"), log: { _ in })
            defer { publisher.close() }
            try publisher.connect(host: broker.host, port: broker.port)
            for start in stride(from: part.startIndex, to: part.endIndex, by: 8) {
                try publisher.publish(topic: "site/ranges",
                                      payload: Array(("[" + part[start..<min(part.endIndex, start + 8)].map(StreamCommandTests.json).joined(separator: ",") + "]").utf8))
            }
            #expect(publisher.waitForAcknowledgements(timeoutMilliseconds: 30_000))
        }
        try publish(rows[..<half])
        #expect(live.wait { live.outText.split(separator: "\n").count > 300 }, "first half solved")
        broker.stop()
        #expect(live.wait { live.err.contains("lost the connection") }, "the loss is logged: \(live.err)")
        try broker.start()
        #expect(live.wait { live.err.contains("reconnected") || live.err.contains("connected again") }, "reconnected: \(live.err)")
        // Rows published before the broker has the subscription again would be dropped (a restarted
        // broker keeps no session): wait for the re-subscription's SUBACK, which the input logs.
        #expect(live.wait { live.err.contains("subscribed again to 'site/ranges'") }, "subscribed again: \(live.err)")
        // Both clients report the loss, each line once and naming its client (issue #41 item 8).
        let lossLines = { live.err.split(separator: "\n").filter { $0.contains("lost the connection") } }
        #expect(live.wait { lossLines().count >= 2 }, "\(live.err)")
        #expect(lossLines().filter { $0.contains("MQTT input (client id restart-test)") }.count == 1, "\(live.err)")
        #expect(lossLines().filter { $0.contains("MQTT output (client id restart-test-out)") }.count == 1, "\(live.err)")
        try publish(rows[half...])
        #expect(live.wait { live.outText.split(separator: "\n").count > 650 }, "second half solved: \(live.outText.split(separator: "\n").count)")
        live.signal(SIGTERM)
        #expect(live.finish() == 0, "\(live.err)")
        #expect(live.err.contains("reconnects 1"), "\(live.err)")
    }
}
