import Glibc
@testable import LocusCore
@testable import LocusLive
import Testing

/// A blocking TCP client of 127.0.0.1 for the server tests: sends raw bytes, reads with `poll`
/// deadlines (safety bounds, never asserted).
private final class RawClient {
    let descriptor: Int32
    private(set) var received: [UInt8] = []
    private(set) var isAtEnd = false

    /// Connects to 127.0.0.1:`port`; `receiveBufferBytes` shrinks the socket's receive buffer first
    /// (a viewer that reads slowly fills quickly).
    init(port: UInt16, receiveBufferBytes: Int32? = nil) {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        precondition(descriptor >= 0)
        if var size = receiveBufferBytes {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        precondition(result == 0, "connect to 127.0.0.1:\(port) failed: \(String(cString: strerror(errno)))")
    }

    deinit { Glibc.close(descriptor) }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Reads until `done(received)` holds, the peer closes, or `timeoutSeconds` pass; true when `done` held.
    @discardableResult
    func read(timeoutSeconds: Double = 10, until done: ([UInt8]) -> Bool) -> Bool {
        let deadline = HTTPServerLoop.now() + timeoutSeconds
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !done(received) {
            if isAtEnd { return false }
            let left = deadline - HTTPServerLoop.now()
            if left <= 0 { return false }
            var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&request, 1, Int32(left * 1000) + 1) <= 0 { continue }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { isAtEnd = true } else { received.append(contentsOf: buffer[0..<count]) }
        }
        return true
    }

    /// Reads until the peer closes (or 10 s pass); true when it closed.
    @discardableResult
    func readToEnd(timeoutSeconds: Double = 10) -> Bool {
        read(timeoutSeconds: timeoutSeconds) { _ in false }
        return isAtEnd
    }

    var text: String { String(decoding: received, as: UTF8.self) }
}

/// A response split into status, headers (names lowercased) and body.
private struct ParsedResponse {
    var status = 0
    var headers: [String: String] = [:]
    var body: [UInt8] = []

    init?(_ bytes: [UInt8]) {
        guard let end = HTTPRequestHead.headLength(in: bytes) else { return nil }
        let head = String(decoding: bytes[0..<end - 4], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, statusLine[0] == "HTTP/1.1", let status = Int(statusLine[1]) else { return nil }
        self.status = status
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...]).trimmingCharacters(in: " ")
        }
        body = Array(bytes[end...])
    }
}

/// `bytes` cut at every `separator` (linear time).
private func splitBytes(_ bytes: ArraySlice<UInt8>, separator: [UInt8]) -> [ArraySlice<UInt8>] {
    var parts: [ArraySlice<UInt8>] = []
    var start = bytes.startIndex
    var index = bytes.startIndex
    while index + separator.count <= bytes.endIndex {
        if bytes[index..<index + separator.count].elementsEqual(separator) {
            parts.append(bytes[start..<index])
            index += separator.count
            start = index
        } else {
            index += 1
        }
    }
    parts.append(bytes[start...])
    return parts
}

private extension String {
    func components(separatedBy separator: String) -> [String] {
        splitBytes(Array(utf8)[...], separator: Array(separator.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    func trimmingCharacters(in set: String) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return String(text)
    }
}

/// One SSE event as the test reads it.
private struct Event: Equatable {
    var id: Int?
    var data: String?
    var isComment = false
}

/// The complete events in a feed body; `retry:` blocks are skipped.
private func events(in body: ArraySlice<UInt8>) -> [Event] {
    var result: [Event] = []
    for block in splitBytes(body, separator: [0x0A, 0x0A]).dropLast() {
        var event = Event()
        var isRetry = false
        for lineBytes in splitBytes(block, separator: [0x0A]) {
            let line = String(decoding: lineBytes, as: UTF8.self)
            if line.hasPrefix("id: ") { event.id = Int(line.dropFirst(4)) }
            else if line.hasPrefix("data: ") { event.data = String(line.dropFirst(6)) }
            else if line.hasPrefix(":") { event.isComment = true }
            else if line.hasPrefix("retry: ") { isRetry = true }
        }
        if !isRetry { result.append(event) }
    }
    return result
}

/// The events a viewer has received so far.
private func events(of client: RawClient) -> [Event] {
    events(in: feedBody(client))
}

/// The body of a feed response read so far (after the head).
private func feedBody(_ client: RawClient) -> ArraySlice<UInt8> {
    guard let end = HTTPRequestHead.headLength(in: client.received) else { return [] }
    return client.received[end...]
}

/// True when the feed body read so far ends with `suffix`.
private func bodyEnds(_ client: RawClient, with suffix: [UInt8]) -> Bool {
    let body = feedBody(client)
    return body.count >= suffix.count && body.suffix(suffix.count).elementsEqual(suffix)
}

/// Polls `condition` every 5 ms for at most `timeoutSeconds`; true when it held.
private func waitUntil(timeoutSeconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = HTTPServerLoop.now() + timeoutSeconds
    while !condition() {
        if HTTPServerLoop.now() > deadline { return false }
        usleep(5_000)
    }
    return true
}

private func message(_ index: Int, padding: Int = 0) -> [UInt8] {
    Array("{\"type\":\"frame\",\"n\":\(index),\"p\":\"\(String(repeating: "x", count: padding))\"}".utf8)
}

private func get(_ path: String, host: String = "127.0.0.1", method: String = "GET", extra: String = "") -> String {
    "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n\(extra)\r\n"
}

/// Sends `request` on a new connection and reads the whole response (the server closes).
private func exchange(_ server: HTTPServer, _ request: String) -> ParsedResponse? {
    let client = RawClient(port: server.port)
    client.send(request)
    client.readToEnd()
    return ParsedResponse(client.received)
}

private let standardHeaders = [
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
]

private func hasStandardHeaders(_ response: ParsedResponse) -> Bool {
    standardHeaders.allSatisfy { response.headers[$0.key] == $0.value }
}

@Suite("HTTP server on 127.0.0.1")
struct HTTPServerTests {
    private func makeServer(feed: FeedLog = FeedLog(capacityBytes: 1 << 20),
                            _ adjust: (inout HTTPServer.Configuration) -> Void = { _ in }) throws -> HTTPServer {
        var configuration = HTTPServer.Configuration()
        adjust(&configuration)
        let calls = ConditionLock(0)
        return try HTTPServer(configuration: configuration, resources: [
            "/": .fixed(contentType: "text/html; charset=utf-8", body: Array("<!doctype html><p>hi</p>\n".utf8)),
            "/api/status": .dynamic(contentType: "application/json", body: {
                let count = calls.withLock { value -> Int in
                    value += 1
                    return value
                }
                return Array("{\"calls\":\(count)}".utf8)
            }),
        ], feed: feed)
    }

    @Test("fixed and dynamic resources: 200, type, length, body, the common headers, Connection: close; the query is ignored")
    func resources() throws {
        let server = try makeServer()
        defer { server.stop() }
        #expect(server.port != 0)
        #expect(!server.listensOnEveryInterface && server.listensOnLoopback)
        let page = try #require(exchange(server, get("/?v=3")))
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.headers["content-length"] == "25")
        #expect(page.headers["connection"] == "close")
        #expect(hasStandardHeaders(page))
        #expect(String(decoding: page.body, as: UTF8.self) == "<!doctype html><p>hi</p>\n")
        let first = try #require(exchange(server, get("/api/status", host: "localhost:\(server.port)")))
        let second = try #require(exchange(server, get("/api/status", host: "[::1]:\(server.port)")))
        #expect(first.status == 200 && hasStandardHeaders(first))
        #expect(first.headers["content-type"] == "application/json")
        #expect(String(decoding: first.body, as: UTF8.self) == "{\"calls\":1}")
        #expect(String(decoding: second.body, as: UTF8.self) == "{\"calls\":2}")
        #expect(waitUntil { server.counters.requests == 3 && server.counters.connectionsAccepted == 3 })
    }

    @Test("HEAD: the GET's headers and length, no body; HEAD of the feed: its headers only")
    func head() throws {
        let server = try makeServer()
        defer { server.stop() }
        let page = try #require(exchange(server, get("/", method: "HEAD")))
        #expect(page.status == 200)
        #expect(page.headers["content-length"] == "25")
        #expect(page.body.isEmpty)
        #expect(hasStandardHeaders(page))
        let feed = try #require(exchange(server, get("/feed", method: "HEAD")))
        #expect(feed.status == 200)
        #expect(feed.headers["content-type"] == "text/event-stream")
        #expect(feed.body.isEmpty)
        #expect(hasStandardHeaders(feed))
        #expect(server.counters.viewersTotal == 0)
    }

    @Test("errors: 404, 405 with Allow, 400, 414, 403 for a foreign Host, 431; fixed plain bodies, common headers")
    func errors() throws {
        let server = try makeServer()
        defer { server.stop() }
        let cases: [(request: String, status: Int)] = [
            (get("/nothing/<script>"), 404),
            (get("/", method: "POST"), 405),
            (get("/", method: "OPTIONS"), 405),
            ("garbage\r\n\r\n", 400),
            (get("/", extra: "Content-Length: 12\r\n"), 400),
            (get("/", extra: "Transfer-Encoding: chunked\r\n"), 400),
            ("GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", 400),
            (get("/" + String(repeating: "a", count: 2_000)), 414),
            (get("/", host: "evil.example"), 403),
            (get("/feed", host: "evil.example:\(server.port)"), 403),
            (get("/", extra: "X-Big: " + String(repeating: "b", count: 9_000) + "\r\n"), 431),
        ]
        for (request, status) in cases {
            let response = try #require(exchange(server, request), "\(request.prefix(40))")
            #expect(response.status == status, "\(request.prefix(40))")
            #expect(hasStandardHeaders(response))
            #expect(response.headers["content-type"] == "text/plain; charset=utf-8")
            let body = String(decoding: response.body, as: UTF8.self)
            #expect(body.hasPrefix("\(status) ") && !body.contains("script") && !body.contains("evil"))
            #expect(response.headers["content-length"] == "\(response.body.count)")
            if status == 405 { #expect(response.headers["allow"] == "GET, HEAD") }
        }
        #expect(waitUntil {
            let counters = server.counters
            return counters.notFound == 1 && counters.forbidden == 2 && counters.badRequests == 8 && counters.requests == cases.count
        })
        #expect(server.counters.viewersTotal == 0)
    }

    @Test("the feed: retry, the retained messages from the oldest in order, then live ones as appended")
    func feedInOrder() throws {
        let feed = FeedLog(capacityBytes: 1 << 20)
        for index in 1...5 { feed.append(message(index)) }
        let server = try makeServer(feed: feed)
        defer { server.stop() }
        let viewer = RawClient(port: server.port)
        viewer.send(get("/feed"))
        #expect(viewer.read { _ in events(of: viewer).count >= 5 })
        let response = try #require(ParsedResponse(viewer.received))
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "text/event-stream")
        #expect(response.headers["content-length"] == nil)
        #expect(hasStandardHeaders(response))
        #expect(String(decoding: feedBody(viewer), as: UTF8.self).hasPrefix("retry: 2000\n\nid: 1\ndata: {"))
        for index in 6...40 { feed.append(message(index)) }
        #expect(viewer.read { _ in events(of: viewer).count >= 40 })
        let received = events(of: viewer)
        #expect(received == (1...40).map { Event(id: $0, data: String(decoding: message($0), as: UTF8.self)) })
        #expect(waitUntil { server.counters.viewers == 1 && server.counters.messagesSent == 40 })
        viewer.send("ignored bytes from a viewer\r\n")
        feed.append(message(41))
        #expect(viewer.read { _ in events(of: viewer).count >= 41 })
    }

    @Test("Last-Event-ID: resumes after it; after an evicted id, a gap message then the oldest")
    func lastEventID() throws {
        let feed = FeedLog(capacityBytes: 2_000)
        for index in 1...100 { feed.append(message(index)) }
        let oldest = 100 - feed.counters.retainedMessages + 1
        #expect(oldest > 10)
        let server = try makeServer(feed: feed)
        defer { server.stop() }
        let resumed = RawClient(port: server.port)
        resumed.send(get("/feed", extra: "Last-Event-ID: 97\r\n"))
        #expect(resumed.read { _ in events(of: resumed).count >= 3 })
        #expect(events(of: resumed).map(\.id) == [98, 99, 100])
        let gapped = RawClient(port: server.port)
        gapped.send(get("/feed", extra: "Last-Event-ID: 4\r\n"))
        #expect(gapped.read { _ in events(of: gapped).last?.id == 100 })
        let received = events(of: gapped)
        #expect(received.first == Event(id: nil, data: "{\"type\":\"gap\",\"dropped\":\(oldest - 5)}"))
        #expect(received.dropFirst().map(\.id) == Array(oldest...100))
        #expect(waitUntil { server.counters.messagesDropped == oldest - 5 })
    }

    @Test("a viewer that never reads does not hold up append; when it reads it gets a gap and the newest")
    func slowViewer() throws {
        let feed = FeedLog(capacityBytes: 1 << 20)
        let server = try makeServer(feed: feed) { $0.viewerLagBytes = 256 << 10; $0.stallSeconds = 600 }
        defer { server.stop() }
        let sleeper = RawClient(port: server.port, receiveBufferBytes: 4_096)
        sleeper.send(get("/feed"))
        #expect(waitUntil { server.counters.viewers == 1 })
        // 64 MiB through a 1 MiB log while the viewer sits: every append returns (counted, not timed).
        let count = 65_536
        var returned = 0
        for index in 1...count {
            if feed.append(message(index, padding: 1_000)) == index { returned += 1 }
        }
        #expect(returned == count)
        #expect(feed.counters.retainedBytes <= 1 << 20)
        #expect(feed.counters.evicted > 60_000)
        // Now it reads everything: a gap, then up to the newest.
        let last = Array("\"n\":\(count),\"p\":\"\(String(repeating: "x", count: 1_000))\"}\n\n".utf8)
        #expect(sleeper.read(timeoutSeconds: 30) { _ in bodyEnds(sleeper, with: last) })
        let received = events(of: sleeper)
        let gaps = received.filter { $0.data?.hasPrefix("{\"type\":\"gap\"") == true }
        #expect(!gaps.isEmpty)
        let ids = received.compactMap(\.id)
        #expect(ids == ids.sorted() && Set(ids).count == ids.count)
        #expect(ids.last == count)
        // Partial writes resumed mid-message: every message arrived whole.
        let whole = received.allSatisfy { event in
            event.id.map { event.data == String(decoding: message($0, padding: 1_000), as: UTF8.self) } ?? true
        }
        #expect(whole)
        #expect(waitUntil { server.counters.messagesDropped > 0 })
        #expect(server.counters.messagesDropped + server.counters.messagesSent == count)
        #expect(server.counters.stalledClosed == 0)
    }

    @Test("20 viewers at once all receive the same messages")
    func manyViewers() throws {
        let feed = FeedLog(capacityBytes: 4 << 20)
        for index in 1...10 { feed.append(message(index)) }
        let server = try makeServer(feed: feed)
        defer { server.stop() }
        let viewers = (0..<20).map { _ in RawClient(port: server.port) }
        for viewer in viewers { viewer.send(get("/feed")) }
        #expect(waitUntil { server.counters.viewers == 20 })
        for index in 11...500 { feed.append(message(index, padding: index % 97)) }
        let expected = (1...500).map { Event(id: $0, data: String(decoding: message($0, padding: $0 <= 10 ? 0 : $0 % 97), as: UTF8.self)) }
        let last = Array("\"n\":500,\"p\":\"\(String(repeating: "x", count: 500 % 97))\"}\n\n".utf8)
        for viewer in viewers {
            #expect(viewer.read { _ in bodyEnds(viewer, with: last) })
            #expect(events(of: viewer) == expected)
        }
        #expect(server.counters.viewersTotal == 20)
        #expect(waitUntil { server.counters.messagesSent == 20 * 500 })
    }

    @Test("more viewers than maximumViewers: 503; more connections than maximumConnections: closed and counted")
    func limits() throws {
        let server = try makeServer { $0.maximumViewers = 2; $0.maximumConnections = 4 }
        defer { server.stop() }
        // The clients' sockets stay open until the end: an optimised build may release an object
        // after its last use, which would close a viewer the test counts.
        let viewers = (0..<2).map { _ in RawClient(port: server.port) }
        try withExtendedLifetime(viewers) {
            for viewer in viewers { viewer.send(get("/feed")) }
            #expect(waitUntil { server.counters.viewers == 2 })
            let third = try #require(exchange(server, get("/feed")))
            #expect(third.status == 503)
            #expect(hasStandardHeaders(third))
            #expect(waitUntil { server.counters.viewersRefused == 1 && server.counters.connections == 2 })
            // 2 viewers + 2 idle connections fill the 4; a fifth is closed at once.
            let idle = (0..<2).map { _ in RawClient(port: server.port) }
            withExtendedLifetime(idle) {
                #expect(waitUntil { server.counters.connectionsAccepted == 5 })
                let refused = RawClient(port: server.port)
                #expect(refused.readToEnd())
                #expect(refused.received.isEmpty)
                #expect(waitUntil { server.counters.connectionsRefused == 1 })
            }
        }
    }

    @Test("half a request head is closed after requestTimeoutSeconds, without an answer")
    func slowloris() throws {
        let server = try makeServer { $0.requestTimeoutSeconds = 0.3 }
        defer { server.stop() }
        let client = RawClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        #expect(client.readToEnd())
        #expect(client.received.isEmpty)
        #expect(waitUntil { server.counters.requestTimeouts == 1 })
    }

    @Test("an idle viewer gets heartbeats; a viewer whose socket takes nothing for stallSeconds is closed")
    func heartbeatAndStall() throws {
        let feed = FeedLog(capacityBytes: 64 << 20)
        let server = try makeServer(feed: feed) { $0.stallSeconds = 0.5; $0.heartbeatSeconds = 0.2 }
        defer { server.stop() }
        do {
            let idle = RawClient(port: server.port)
            idle.send(get("/feed"))
            #expect(idle.read { _ in events(of: idle).filter(\.isComment).count >= 2 })
        }
        #expect(waitUntil { server.counters.viewers == 0 })
        let sleeper = RawClient(port: server.port, receiveBufferBytes: 4_096)
        sleeper.send(get("/feed"))
        #expect(waitUntil { server.counters.viewers == 1 })
        for index in 1...16_384 { feed.append(message(index, padding: 1_000)) }
        #expect(waitUntil { server.counters.stalledClosed == 1 })
        #expect(waitUntil { server.counters.viewers == 0 })
        #expect(sleeper.readToEnd(timeoutSeconds: 30))
    }

    @Test("stop() closes every socket it opened: listener, accepted connections, wake-up pair; idempotent")
    func noDescriptorsLeft() throws {
        let feed = FeedLog(capacityBytes: 1 << 20)
        let server = try makeServer(feed: feed)
        let viewer = RawClient(port: server.port)
        viewer.send(get("/feed"))
        let reader = RawClient(port: server.port)
        reader.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  // half a head
        #expect(waitUntil { server.counters.viewers == 1 && server.counters.connectionsAccepted == 2 })
        // The server's sockets: every TCP socket on its port (listener and accepted ones), the wake-up pair.
        let open = openSocketInodes()
        var ours = tcpInodes(localPort: server.port).intersection(open)
        ours.formUnion([server.wakeDescriptors.receive, server.wakeDescriptors.send].compactMap { socketInode(descriptor: $0) })
        #expect(ours.count == 5, "\(ours)")
        server.stop()
        server.stop()
        #expect(viewer.readToEnd())
        #expect(reader.readToEnd())
        let left = ours.intersection(openSocketInodes())
        #expect(left.isEmpty, "still open: \(left)")
        #expect(server.counters.viewers == 0)
        feed.append(message(1))  // the log no longer writes to the closed wake-up socket
    }

    @Test("bind errors: a port in use is E5008; a bad host E1001; a bad resource path E1001")
    func bindErrors() throws {
        let first = try makeServer()
        defer { first.stop() }
        #expect { try makeServer { $0.port = first.port } } throws: { ($0 as? LocusError)?.code == .networkUnavailable }
        #expect { try makeServer { $0.host = "127.0.0.1/evil" } } throws: { ($0 as? LocusError)?.code == .usage }
        #expect { try makeServer { $0.host = "" } } throws: { ($0 as? LocusError)?.code == .usage }
        #expect { try makeServer { $0.host = "127.0.0.256" } } throws: { ($0 as? LocusError)?.code == .usage }
        #expect {
            try HTTPServer(configuration: HTTPServer.Configuration(), resources: ["page": .fixed(contentType: "text/html", body: [])],
                           feed: FeedLog(capacityBytes: 10))
        } throws: { ($0 as? LocusError)?.code == .usage }
    }
}

/// The inode of the socket open as `descriptor` (`socket:[N]` in /proc/self/fd), if it is one.
private func socketInode(descriptor: Int32) -> String? {
    var buffer = [CChar](repeating: 0, count: 256)
    let count = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard target.hasPrefix("socket:["), target.hasSuffix("]") else { return nil }
    return String(target.dropFirst(8).dropLast())
}

/// The socket inodes of this process's open descriptors (an inode is unique while its socket is
/// open, so one gone from here was closed — other tests running meanwhile cannot confuse this).
private func openSocketInodes() -> Set<String> {
    var result: Set<String> = []
    guard let directory = opendir("/proc/self/fd") else { return result }
    defer { closedir(directory) }
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        if let descriptor = Int32(name), let inode = socketInode(descriptor: descriptor) { result.insert(inode) }
    }
    return result
}

/// Inodes of the IPv4 TCP sockets whose local port is `localPort` (/proc/net/tcp).
private func tcpInodes(localPort: UInt16) -> Set<String> {
    var result: Set<String> = []
    guard let file = fopen("/proc/net/tcp", "r") else { return result }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 1_024)
    let portHex = String(localPort, radix: 16, uppercase: true)
    let suffix = ":" + String(repeating: "0", count: 4 - portHex.count) + portHex
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let fields = text.split(separator: " ")
        guard fields.count > 9, fields[1].hasSuffix(suffix), fields[9] != "0" else { continue }
        result.insert(String(fields[9]))
    }
    return result
}
