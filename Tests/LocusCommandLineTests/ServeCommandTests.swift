import Foundation
@testable import LocusCore
@testable import LocusIO
import LocusLive
import LocusTestSupport
import Testing

/// `locus serve` as a user runs it: a child process, its page and feed read over HTTP on 127.0.0.1.
@Suite("locus serve", .serialized)
struct ServeCommandTests {
    static func site(_ name: String) -> String { TestPaths.fixture("sites/\(name).json") }
    static func trace(_ name: String) -> String { TestPaths.fixture("traces/\(name)-walk.csv") }
    static func truth(_ name: String) -> String { TestPaths.fixture("traces/\(name)-walk-truth.csv") }

    /// The port from the first stderr line, `locus serve: SOURCE → http://127.0.0.1:PORT/`.
    static func port(_ process: LiveProcess) throws -> UInt16 {
        let line = try #require(process.started(), "no start line: \(process.err)")
        let url = try #require(line.range(of: "http://127.0.0.1:"), "\(line)")
        return try #require(UInt16(line[url.upperBound...].prefix { $0.isNumber }), "\(line)")
    }

    @Test("a replay at --speed 0: the feed's fixes and events (silent ones aside) are replay's, in replay's order; --positions/--events are replay's bytes; the page, site, geometry and status are served")
    func replayFeed() throws {
        let dir = TestPaths.temporaryDirectory()
        let reference = try StreamingReplayTests.reference(site: Self.site("hall"), trace: Self.trace("hall"))
        let process = try LiveProcess(["serve", "--site", Self.site("hall"), "--replay", Self.trace("hall"), "--truth", Self.truth("hall"),
                                       "--speed", "0", "--positions", dir + "/p.csv", "--events", dir + "/e.jsonl"])
        let port = try Self.port(process)
        defer { process.signal(SIGTERM); _ = process.finish() }

        // The feed from its start: every message until `end`.
        let feed = try HTTPTestClient.feed(port: port, until: { $0.contains(#""type":"end""#) })
        let messages = try feed.map { try JSONParser.parse(Array($0.utf8)) }
        let frames = messages.filter { $0["type"]?.stringValue == "frame" }
        let fixes = frames.flatMap { $0["fixes"]?.arrayValue ?? [] }
        let events = frames.flatMap { $0["events"]?.arrayValue ?? [] }
        #expect(messages.last?["type"]?.stringValue == "end")

        // Replay's positions, row by row: time and tag in the same order, coordinates to the mm.
        let rows = String(decoding: reference.positions, as: UTF8.self).split(separator: "\n").dropFirst().map { $0.split(separator: ",") }
        #expect(fixes.count == rows.count)
        for (f, r) in zip(fixes, rows) {
            #expect(f["tag"]?.stringValue == String(r[1]) && abs((f["t"]?.doubleValue ?? -1) - Double(r[0])!) < 5e-4)
            #expect(abs((f["x"]?.doubleValue ?? 1e9) - Double(r[2])!) < 6e-4 && abs((f["y"]?.doubleValue ?? 1e9) - Double(r[3])!) < 6e-4)
            #expect(f["err"]?.doubleValue != nil && f["truth"]?.arrayValue?.count == 2)
        }
        // Replay's events exactly (the same objects); the silent ones are the callInout-false zone's.
        let expected = try String(decoding: reference.events, as: UTF8.self).split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
        let listed = events.filter { $0["silent"] == nil }
        #expect(listed == expected)
        let silent = events.filter { $0["silent"]?.boolValue == true }
        #expect(!silent.isEmpty, "hall.json's callInout-false zone is entered in the walk")
        let quiet = try SiteDecoder.load(path: Self.site("hall")).floors[0].zones.filter { !$0.rules.callInout }.map { $0.id.rawValue }
        #expect(silent.allSatisfy { quiet.contains($0["zone"]?.stringValue ?? "") && $0["event"]?.stringValue != "dwell" })
        // Every locator was heard.
        let heard = Set(frames.flatMap { $0["heard"]?.arrayValue ?? [] }.compactMap { $0["address"]?.stringValue })
        #expect(heard.count == (try SiteDecoder.load(path: Self.site("hall"))).floors[0].locators.count)

        // The files are replay's bytes.
        #expect(process.wait(until: { TestPaths.bytes(dir + "/e.jsonl") == reference.events }))
        #expect(TestPaths.bytes(dir + "/p.csv") == reference.positions)

        // The other resources.
        let page = try HTTPTestClient.get(port: port, path: "/")
        #expect(page.status == 200 && page.body.contains("<svg") && page.headers.contains("content-security-policy"))
        let siteJSON = try JSONParser.parse(Array(try HTTPTestClient.get(port: port, path: "/api/site").body.utf8))
        #expect(siteJSON["mode"]?.stringValue == "replay" && siteJSON["hasTruth"]?.boolValue == true)
        let geometry = try JSONParser.parse(Array(try HTTPTestClient.get(port: port, path: "/api/geometry/0").body.utf8))
        #expect(geometry["hdop"]?.arrayValue?.isEmpty == false)
        #expect(process.wait(until: { (try? HTTPTestClient.get(port: port, path: "/api/status").body.contains(#""done":true"#)) == true }))
        #expect(try HTTPTestClient.get(port: port, path: "/api/nothing").status == 404)
    }

    @Test("--speed paces the replay: 6 s of data at --speed 4 take at least 1.5 s of wall time, and give replay's events")
    func pacing() throws {
        let dir = TestPaths.temporaryDirectory()
        let lines = String(decoding: TestPaths.bytes(Self.trace("hall")), as: UTF8.self).split(separator: "\n")
        let cut = lines.prefix { !$0.hasPrefix("6.") && !$0.hasPrefix("7.") }
        let trace = dir + "/cut.csv"
        _ = FileManager.default.createFile(atPath: trace, contents: Data((cut.joined(separator: "\n") + "\n").utf8))
        let reference = try StreamingReplayTests.reference(site: Self.site("hall"), trace: trace)
        let started = Date()
        let process = try LiveProcess(["serve", "--site", Self.site("hall"), "--replay", trace, "--speed", "4", "--events", dir + "/e.jsonl"])
        defer { process.signal(SIGTERM); _ = process.finish() }
        #expect(process.wait(until: { process.err.contains("the replay is done") }))
        let elapsed = Date().timeIntervalSince(started)
        let first = Double(cut[1].split(separator: ",")[0])!, last = Double(cut.last!.split(separator: ",")[0])!
        #expect(elapsed >= (last - first) / 4, "the schedule cannot be beaten: \(elapsed) s for \(last - first) s of data")
        #expect(TestPaths.bytes(dir + "/e.jsonl") == reference.events)
    }

    @Test("live from standard input: the feed carries the fixes and events locus stream gives; a viewer that joins late gets the history")
    func liveStandardInput() throws {
        let process = try LiveProcess(["serve", "--site", Self.site("hall"), "--input", "-", "--tick-ms", "0"])
        defer { process.signal(SIGTERM); _ = process.finish() }
        let port = try Self.port(process)
        process.write(TestPaths.bytes(Self.trace("hall")))
        process.closeInput()
        #expect(process.wait(until: { process.err.contains("the input ended") }), "\(process.err)")
        let reference = try StreamingReplayTests.reference(site: Self.site("hall"), trace: Self.trace("hall"))
        let rows = String(decoding: reference.positions, as: UTF8.self).split(separator: "\n").count - 1
        var fixes = 0
        _ = try HTTPTestClient.feed(port: port, until: { message in
            if message.contains(#""type":"frame""#), let json = try? JSONParser.parse(Array(message.utf8)) {
                fixes += json["fixes"]?.arrayValue?.count ?? 0
            }
            return fixes >= rows
        })
        #expect(fixes == rows)
        let siteJSON = try JSONParser.parse(Array(try HTTPTestClient.get(port: port, path: "/api/site").body.utf8))
        #expect(siteJSON["mode"]?.stringValue == "live")
    }

    @Test("live over MQTT through a private broker: the feed's fixes as they come, the malformed message counted in the status; stopped by SIGTERM it drains, --positions/--events are replay's bytes")
    func liveMQTT() throws {
        guard MosquittoBroker.isAvailable else { print("skipped: \(MosquittoBroker.unavailableMessage)"); return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let dir = TestPaths.temporaryDirectory()
        let reference = try StreamingReplayTests.reference(site: Self.site("hall"), trace: Self.trace("hall"))
        let process = try LiveProcess(["serve", "--site", Self.site("hall"), "--input", broker.uri(topic: "site/ranges"), "--tick-ms", "0",
                                       "--events", dir + "/e.jsonl", "--positions", dir + "/p.csv"])
        defer { process.signal(SIGTERM); _ = process.finish() }
        let port = try Self.port(process)
        let publisher = try MQTTClient(configuration: .standard(clientID: "serve-pub"), log: { _ in })
        defer { publisher.close() }
        try publisher.connect(host: broker.host, port: broker.port)
        let rows = StreamCommandTests.rows("hall")
        for start in stride(from: 0, to: rows.count, by: 8) {
            let round = rows[start..<min(rows.count, start + 8)].map(StreamCommandTests.json).joined(separator: ",")
            try publisher.publish(topic: "site/ranges", payload: Array(("[" + round + "]").utf8))
        }
        try publisher.publish(topic: "site/ranges", payload: Array("not json".utf8))
        #expect(publisher.waitForAcknowledgements(timeoutMilliseconds: 30_000))
        let expectedFixes = String(decoding: reference.positions, as: UTF8.self).split(separator: "\n").count - 1
        var fixes = 0
        _ = try HTTPTestClient.feed(port: port, until: { message in
            if message.contains(#""type":"frame""#), let json = try? JSONParser.parse(Array(message.utf8)) {
                fixes += json["fixes"]?.arrayValue?.count ?? 0
            }
            // The last round's fix waits for the next round or the end: all but a few are out.
            return fixes >= expectedFixes - 4
        })
        #expect(process.wait(until: {
            (try? HTTPTestClient.get(port: port, path: "/api/status").body.contains(#""malformed":1"#)) == true
        }))
        process.signal(SIGTERM)
        #expect(process.finish() == 0, "\(process.err)")
        // Stopped, it drained as locus stream does: replay's bytes.
        #expect(TestPaths.bytes(dir + "/e.jsonl") == reference.events)
        #expect(TestPaths.bytes(dir + "/p.csv") == reference.positions)
    }

    @Test("viewers that never read do not hold the engine up: with 5 of them connected and a history of 1 MB, the replay still finishes with replay's events, a new viewer still gets the end, the stalled ones are let go after --viewer-timeout with what they missed counted")
    func stalledViewers() throws {
        let dir = TestPaths.temporaryDirectory()
        // A longer recording than the hall walk: 60 tags for 180 s (about 6 MB of feed, 6 × the history).
        let sim = try StreamingReplayTests.locus(["simulate", "--site", Self.site("hall"), "--tags", "60", "--duration", "180", "--seed", "5",
                                                  "--trace", dir + "/t.csv", "--truth", dir + "/truth.csv"], input: [])
        #expect(sim.status == 0, "\(sim.err)")
        let process = try LiveProcess(["serve", "--site", Self.site("hall"), "--replay", dir + "/t.csv", "--truth", dir + "/truth.csv", "--speed", "0",
                                       "--history-mb", "1", "--viewer-timeout", "2", "--events", dir + "/e.jsonl"])
        defer { process.signal(SIGTERM); _ = process.finish() }
        let port = try Self.port(process)
        var stalled: [Int32] = []
        for _ in 0..<5 {
            let fd = try HTTPTestClient.connect(port: port)
            var small: Int32 = 4096
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            HTTPTestClient.send(fd, "GET /feed HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            stalled.append(fd)
        }
        defer { for fd in stalled { close(fd) } }
        #expect(process.wait(seconds: 120, until: { process.err.contains("the replay is done") }), "\(process.err)")
        let reference = try StreamingReplayTests.reference(site: Self.site("hall"), trace: dir + "/t.csv")
        #expect(TestPaths.bytes(dir + "/e.jsonl") == reference.events)
        let late = try HTTPTestClient.feed(port: port, until: { $0.contains(#""type":"end""#) })
        #expect(late.last?.contains(#""type":"end""#) == true)
        // The stalled viewers are let go after --viewer-timeout; what they missed is counted.
        #expect(process.wait(until: {
            guard let body = try? HTTPTestClient.get(port: port, path: "/api/status").body,
                  let json = try? JSONParser.parse(Array(body.utf8)) else { return false }
            return (json["viewers"]?.doubleValue ?? -1) == 0 && (json["droppedFrames"]?.doubleValue ?? 0) > 0
        }), "\((try? HTTPTestClient.get(port: port, path: "/api/status").body) ?? "")")
    }

    @Test("usage: --replay and --input together, neither, --speed without --replay, a bad --listen: exit 2 with a message")
    func usage() throws {
        for arguments in [["--replay", Self.trace("hall"), "--input", "-"], [], ["--input", "-", "--speed", "2"],
                          ["--replay", Self.trace("hall"), "--listen", "example.com:80"]] {
            let r = try StreamingReplayTests.locus(["serve", "--site", Self.site("hall")] + arguments, input: [])
            #expect(r.status == 2, "\(arguments): \(r.err)")
            #expect(r.err.contains("--"), "\(r.err)")
        }
    }
}

/// A minimal HTTP/1.1 client on 127.0.0.1 for the serve tests (Glibc sockets: no URLSession).
enum HTTPTestClient {
    struct Response { var status: Int; var headers: String; var body: String }

    static func connect(port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let r = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard r == 0 else { close(fd); throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    static func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// GET `path`, read to the end (the server closes after each response).
    static func get(port: UInt16, path: String, host: String? = nil) throws -> Response {
        let fd = try connect(port: port)
        defer { close(fd) }
        send(fd, "GET \(path) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\n\r\n")
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            all += buffer[0..<n]
        }
        let text = String(decoding: all, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw POSIXError(.EBADMSG) }
        let head = String(text[..<split.lowerBound])
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return Response(status: status, headers: head.lowercased(), body: String(text[split.upperBound...]))
    }

    /// GET /feed and hand each message's data to `until` until it returns true; returns them all.
    static func feed(port: UInt16, until: (String) -> Bool) throws -> [String] {
        let fd = try connect(port: port)
        defer { close(fd) }
        send(fd, "GET /feed HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n")
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var messages: [String] = []
        var headerDone = false
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw POSIXError(.ETIMEDOUT) }
            pending += buffer[0..<n]
            var text = String(decoding: pending, as: UTF8.self)
            if !headerDone {
                guard let split = text.range(of: "\r\n\r\n") else { continue }
                text = String(text[split.upperBound...])
                headerDone = true
            }
            var blocks = text.components(separatedBy: "\n\n")
            let rest = blocks.removeLast()
            pending = Array(rest.utf8)
            for block in blocks {
                for line in block.split(separator: "\n") where line.hasPrefix("data: ") {
                    let data = String(line.dropFirst(6))
                    messages.append(data)
                    if until(data) { return messages }
                }
            }
        }
    }
}
