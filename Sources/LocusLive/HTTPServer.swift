import Glibc
import LocusCore

/// The small read-only HTTP/1.1 server of `locus serve` (issue #43): a few fixed or computed
/// resources (the page, its script and style, JSON documents) and one Server-Sent-Events feed that
/// every viewer reads from a shared `FeedLog` at its own pace.
///
/// **One thread, no thread per client.** `init` binds, listens and starts one thread of ours that
/// `poll`s the listening socket, a wake-up socket (written by `FeedLog.append` and `stop()`) and
/// every client socket; all sockets are non-blocking and written with `MSG_NOSIGNAL`, so a slow,
/// hostile or vanished browser costs a bounded buffer and a slot, never a blocked thread. The
/// engine thread only ever takes the `FeedLog`'s lock for a moment.
///
/// **Requests.** GET and HEAD only (405 otherwise, with `Allow`); the head must fit in 8 KiB (431)
/// and arrive within `requestTimeoutSeconds` (else the connection is closed); no body (400); an
/// origin-form target of at most 1 KiB (414), routed by its path without the query; unknown paths
/// 404. When bound to a loopback address the `Host` must name loopback (`127.0.0.1`, `localhost`,
/// `[::1]`, any port) or the request is 403 — a guard against DNS rebinding. Every response but the
/// feed has a `Content-Length` and closes the connection; every response carries
/// `HTTPResponse.commonHeaders` (no-store, nosniff, no-referrer, a strict Content-Security-Policy).
///
/// **The feed** (`feedPath`, GET): `retry: 2000`, then every retained message from the oldest (or
/// after `Last-Event-ID`), then new ones as they are appended. Each viewer has a cursor (the next
/// message id) and an output buffer of at most one chunk (256 KiB, or one larger message) copied out
/// of the log under its lock and written outside it, resuming mid-message after a partial write. A
/// viewer whose next message was evicted, or that is more than `viewerLagBytes` behind the newest,
/// skips ahead after a `gap` message; one whose socket takes nothing for `stallSeconds` is closed;
/// an idle one gets a `: ` comment every `heartbeatSeconds`.
package final class HTTPServer: Sendable {
    /// Limits and timeouts. The defaults suit a page on loopback watched by a few browsers.
    struct Configuration: Sendable {
        /// The IPv4 address (or name) to bind; `0.0.0.0` listens on every interface.
        var host = "127.0.0.1"
        /// The TCP port; 0 takes a free one (read `port`).
        var port: UInt16 = 0
        /// Concurrent feed connections at most; a further `GET` of the feed is 503.
        var maximumViewers = 64
        /// Open connections at most (viewers included); further ones are closed at once and counted
        /// in `connectionsRefused`.
        var maximumConnections = 128
        /// Framed bytes a viewer may lag behind the end of the newest message before it skips to the
        /// newest (after a `gap` message).
        var viewerLagBytes = 8 << 20
        /// Seconds a connection with bytes to send may go without its socket taking any before it is
        /// closed (`stalledClosed`).
        var stallSeconds = 30.0
        /// Seconds of silence after which a viewer gets a `: ` comment (keeps proxies and the
        /// browser from timing the stream out, and finds vanished peers).
        var heartbeatSeconds = 15.0
        /// Seconds from the connection's acceptance within which its whole request head must arrive
        /// (a slow-loris client is closed without an answer, `requestTimeouts`).
        var requestTimeoutSeconds = 10.0

        /// The defaults, but for the bounds `locus serve` takes from its options.
        init(host: String = "127.0.0.1", port: UInt16 = 0, maximumViewers: Int = 64, stallSeconds: Double = 30) {
            self.host = host
            self.port = port
            self.maximumViewers = maximumViewers
            self.stallSeconds = stallSeconds
        }
    }

    /// What a path serves.
    package enum Resource: Sendable {
        /// The same bytes every time (the page, its script and style).
        case fixed(contentType: String, body: [UInt8])
        /// Bytes computed per request on the server thread (keep it quick: it delays every other
        /// client; e.g. JSON the engine thread prepared behind a lock).
        case dynamic(contentType: String, body: @Sendable () -> [UInt8])
    }

    /// What the server has done so far. Read with `counters`.
    struct Counters: Sendable, Equatable {
        /// Connections accepted and served (refused ones not included).
        var connectionsAccepted = 0
        /// Connections open now (viewers, requests being read or answered, answers lingering).
        var connections = 0
        /// Connections closed at once because `maximumConnections` were open.
        var connectionsRefused = 0
        /// Feed connections open now.
        var viewers = 0
        /// Feed connections opened since the start.
        var viewersTotal = 0
        /// Complete request heads answered (with any status).
        var requests = 0
        /// Requests answered 400, 405, 414 or 431.
        var badRequests = 0
        /// Requests answered 404.
        var notFound = 0
        /// Requests answered 403 (a `Host` that does not name loopback).
        var forbidden = 0
        /// Feed requests answered 503 (`maximumViewers` open).
        var viewersRefused = 0
        /// Connections closed because their request head did not arrive within `requestTimeoutSeconds`.
        var requestTimeouts = 0
        /// Feed messages copied into viewers' output buffers (written or being written).
        var messagesSent = 0
        /// Feed messages skipped for viewers that fell behind (the sum of their gaps).
        var messagesDropped = 0
        /// Bytes the sockets took, every response included.
        var bytesSent = 0
        /// Connections closed because their socket took nothing for `stallSeconds`.
        var stalledClosed = 0
    }

    /// State shared by the server thread and its callers.
    struct Shared {
        var counters = Counters()
        var isStopping = false
        /// The server thread until `stop()` takes it to join.
        var thread: pthread_t?
    }

    /// The bound port (the chosen one when 0 was asked for).
    package let port: UInt16
    /// The host as configured.
    let host: String
    /// True when bound to 0.0.0.0: any host that can reach this machine can watch (the caller warns).
    package let listensOnEveryInterface: Bool
    /// True when bound to a loopback address (127.0.0.0/8): the `Host` header is checked.
    let listensOnLoopback: Bool
    let shared: ConditionLock<Shared>
    /// The wake-up socket pair: the thread polls `[0]`; `FeedLog.append` and `stop()` send to `[1]`.
    let wakeDescriptors: (receive: Int32, send: Int32)
    private let feed: FeedLog

    /// Binds `host:port` (0: a free port), listens, and starts the server thread serving `resources`
    /// and, at `/feed`, a feed of its own (`FeedLog`) that keeps the last `historyBytes` of
    /// messages (`publish`); at most `maximumViewers` viewers, one whose socket takes nothing for
    /// `stallSeconds` closed; the other bounds `Configuration`'s defaults.
    /// - Throws: as `init(configuration:resources:feedPath:feed:)`.
    package convenience init(host: String, port: UInt16, maximumViewers: Int, stallSeconds: Double,
                             historyBytes: Int, resources: [String: Resource]) throws(LocusError) {
        try self.init(configuration: Configuration(host: host, port: port, maximumViewers: maximumViewers, stallSeconds: stallSeconds),
                      resources: resources, feed: FeedLog(capacityBytes: historyBytes))
    }

    /// Appends one message (a line of JSON) to the feed every viewer reads (`FeedLog.append`);
    /// never waits for a viewer.
    package func publish(_ json: [UInt8]) { feed.append(json) }

    /// Binds `configuration.host:port`, listens, and starts the server thread serving `resources`
    /// (keyed by path, e.g. `/app.js`) and the feed of `feed` at `feedPath`.
    ///
    /// - Throws: `LocusError` `E1001` when the host is empty, holds a character no address or name
    ///   has, or is dotted numbers that are no IPv4 address (`999.1.1.1`); when the feed path or a
    ///   resource path does not start with `/`, a resource path holds `?` or is the feed's, or a
    ///   content type holds a control character; `E5008` when the host does not resolve or the socket cannot be created, bound (port
    ///   in use, address not local) or listened on, or the thread cannot start.
    init(configuration: Configuration, resources: [String: Resource], feedPath: String = "/feed",
         feed: FeedLog) throws(LocusError) {
        let uri = "http://\(configuration.host):\(configuration.port)"
        let hostBytes = Array(configuration.host.utf8)
        guard !hostBytes.isEmpty, hostBytes.count <= 253,
              hostBytes.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2E || $0 == 0x2D })
        else {
            throw LocusError(.usage, "'\(configuration.host)' is not an IPv4 address or a host name")
        }
        var literal = in_addr()
        if hostBytes.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2E }) && hostBytes.contains(0x2E)
            && inet_pton(AF_INET, configuration.host, &literal) != 1 {
            throw LocusError(.usage, "'\(configuration.host)' is not an IPv4 address (four numbers 0 to 255)")
        }
        guard feedPath.hasPrefix("/") else { throw LocusError(.usage, "the feed path '\(feedPath)' does not start with '/'") }
        for (path, resource) in resources {
            guard path.hasPrefix("/"), path != feedPath, !path.contains("?") else {
                throw LocusError(.usage, "the resource path '\(path)' must start with '/', hold no '?' and differ from the feed's")
            }
            let contentType: String
            switch resource {
            case .fixed(let type, _), .dynamic(let type, _): contentType = type
            }
            guard !contentType.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw LocusError(.usage, "the content type of '\(path)' holds a control character")
            }
        }
        let address = try IPv4Address.socketAddress(host: configuration.host, port: configuration.port)
        let hostOrder = UInt32(bigEndian: address.sin_addr.s_addr)
        listensOnEveryInterface = hostOrder == 0
        listensOnLoopback = hostOrder >> 24 == 127

        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else {
            throw LocusError(.networkUnavailable, "cannot create a TCP socket for \(uri): \(IPv4Address.errnoText())")
        }
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let boundPort = try IPv4Address.bind(listener, to: address, naming: uri)
        guard listen(listener, 128) == 0 else {
            let reason = IPv4Address.errnoText()
            _ = Glibc.close(listener)
            throw LocusError(.networkUnavailable, "cannot listen on \(uri): \(reason)")
        }
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            let reason = IPv4Address.errnoText()
            _ = Glibc.close(listener)
            throw LocusError(.networkUnavailable, "cannot create the wake-up socket of \(uri): \(reason)")
        }
        port = boundPort
        host = configuration.host
        wakeDescriptors = (pair[0], pair[1])
        shared = ConditionLock(Shared())
        self.feed = feed
        feed.attach(wakeDescriptor: pair[1])

        let loop = HTTPServerLoop(configuration: configuration, resources: resources, feedPath: feedPath, feed: feed,
                                  boundHost: configuration.host, checksHost: listensOnLoopback,
                                  listenDescriptor: listener, wakeDescriptors: wakeDescriptors, shared: shared)
        var thread = pthread_t()
        let context = Unmanaged.passRetained(loop).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            let loop = Unmanaged<HTTPServerLoop>.fromOpaque(context)
            loop.takeUnretainedValue().run()
            loop.release()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<HTTPServerLoop>.fromOpaque(context).release()  // its deinit closes the listener
            feed.detach(wakeDescriptor: pair[1])
            _ = Glibc.close(pair[0])
            _ = Glibc.close(pair[1])
            throw LocusError(.networkUnavailable, "cannot start the HTTP server thread for \(uri): \(String(cString: strerror(created)))")
        }
        shared.withLock { $0.thread = thread }
    }

    deinit { stop() }

    /// The counts so far (a consistent snapshot, published by the server thread once per turn of
    /// its loop).
    var counters: Counters { shared.withLock { $0.counters } }

    /// The viewers' figures of `counters` (one snapshot): feed connections open now and since the
    /// start, and feed messages skipped for viewers that fell behind.
    package var viewerCounts: (viewers: Int, viewersTotal: Int, messagesDropped: Int) {
        let c = counters
        return (c.viewers, c.viewersTotal, c.messagesDropped)
    }

    /// Closes every connection and the listening socket and ends the server thread (joined). Safe to
    /// call more than once and from any thread but the server thread (a resource's closure).
    package func stop() {
        let thread = shared.withLock { state -> pthread_t? in
            state.isStopping = true
            defer { state.thread = nil }
            return state.thread
        }
        guard let thread else { return }
        var byte: UInt8 = 1
        _ = send(wakeDescriptors.send, &byte, 1, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        if pthread_equal(thread, pthread_self()) != 0 { return }
        pthread_join(thread, nil)
        feed.detach(wakeDescriptor: wakeDescriptors.send)
        _ = Glibc.close(wakeDescriptors.receive)
        _ = Glibc.close(wakeDescriptors.send)
    }
}
