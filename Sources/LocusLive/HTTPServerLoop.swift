import Glibc

/// The server thread of an `HTTPServer`: one `poll` loop over the listening socket, the wake-up
/// socket and every client. Owns the clients and the listening socket (closed when the loop ends or,
/// if the thread never started, in `deinit`); publishes its counters into the shared state once per
/// turn, so readers on other threads take one lock and never wait for the loop.
final class HTTPServerLoop {
    /// Bytes a viewer's output takes out of the log at once: whole messages up to 256 KiB (one larger
    /// message alone). Bounds a viewer's memory and the time the log's lock is held per copy.
    static let chunkBytes = 256 * 1024
    /// Bytes written to one client per turn of the loop at most, so one fast reader of a long
    /// backlog does not starve the others.
    static let writeBudgetBytes = 1 << 20
    /// Seconds a closed-for-writing connection is drained before it is closed (see `Client.Phase.lingering`).
    static let lingerSeconds = 2.0
    /// Connections taken from the listen queue per turn at most.
    static let acceptsPerTurn = 64

    private let configuration: HTTPServer.Configuration
    private let resources: [String: HTTPServer.Resource]
    private let feedPath: String
    private let feed: FeedLog
    private let boundHost: String
    private let checksHost: Bool
    private var listenDescriptor: Int32
    private let wakeDescriptors: (receive: Int32, send: Int32)
    private let shared: ConditionLock<HTTPServer.Shared>
    private var clients: [HTTPServer.Client] = []
    private var counters = HTTPServer.Counters()
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)
    /// After `accept` failed for want of descriptors (`EMFILE`), the listener is not polled until then.
    private var acceptPausedUntil = 0.0

    init(configuration: HTTPServer.Configuration, resources: [String: HTTPServer.Resource], feedPath: String,
         feed: FeedLog, boundHost: String, checksHost: Bool, listenDescriptor: Int32,
         wakeDescriptors: (receive: Int32, send: Int32), shared: ConditionLock<HTTPServer.Shared>) {
        self.configuration = configuration
        self.resources = resources
        self.feedPath = feedPath
        self.feed = feed
        self.boundHost = boundHost
        self.checksHost = checksHost
        self.listenDescriptor = listenDescriptor
        self.wakeDescriptors = wakeDescriptors
        self.shared = shared
    }

    deinit {
        if listenDescriptor >= 0 { _ = Glibc.close(listenDescriptor) }
    }

    /// Monotonic seconds (`CLOCK_MONOTONIC`: wall-clock changes do not move deadlines).
    static func now() -> Double { LiveClock.monotonicSeconds() }

    /// The loop: timers, writes, then one `poll` until something happens or the next deadline.
    func run() {
        var descriptors: [pollfd] = []
        while !shared.withLock({ $0.isStopping }) {
            var now = Self.now()
            serviceTimers(now: now)
            for client in clients where !client.isClosed && client.isWritable { flush(client, now: now) }
            clients.removeAll { $0.isClosed }
            counters.connections = clients.count
            shared.withLock { $0.counters = counters }

            // Sleep only when nothing can be written now; `arm` first, so an append after this
            // point wakes us.
            let newest = feed.arm(wakeDescriptor: wakeDescriptors.send)
            var timeout = 1.0
            descriptors.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: wakeDescriptors.receive, events: Int16(POLLIN), revents: 0))
            let pollsListener = now >= acceptPausedUntil
            descriptors.append(pollfd(fd: pollsListener ? listenDescriptor : -1, events: Int16(POLLIN), revents: 0))
            if !pollsListener { timeout = min(timeout, acceptPausedUntil - now) }
            for client in clients {
                var events: Int32 = 0
                switch client.phase {
                case .readingHead:
                    events = Int32(POLLIN)
                    timeout = min(timeout, client.headDeadline - now)
                case .responding:
                    events = Int32(POLLOUT)
                case .lingering:
                    events = Int32(POLLIN)
                    timeout = min(timeout, client.lingerDeadline - now)
                case .viewing:
                    events = Int32(POLLIN)
                    if client.pendingBytes > 0 {
                        events |= Int32(POLLOUT)
                    } else if client.nextID <= newest {
                        timeout = 0
                    } else {
                        timeout = min(timeout, client.lastSent + configuration.heartbeatSeconds - now)
                    }
                }
                if client.pendingBytes > 0 {
                    timeout = min(timeout, client.lastProgress + configuration.stallSeconds - now)
                }
                descriptors.append(pollfd(fd: client.descriptor, events: Int16(events), revents: 0))
            }
            let milliseconds = Int32(max(0, (timeout * 1000).rounded(.up)))
            let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            if ready < 0 && errno != EINTR { break }
            guard ready > 0 else { continue }
            now = Self.now()
            if descriptors[0].revents != 0 { drainWakeups() }
            // Clients first: `descriptors[2...]` match `clients` as it was before accepting.
            for (index, client) in clients.enumerated() {
                let events = Int32(descriptors[index + 2].revents)
                if events == 0 { continue }
                if events & Int32(POLLOUT) != 0 { client.isWritable = true }
                if events & Int32(POLLIN | POLLHUP | POLLERR) != 0 { receive(client, now: now) }
                if events & Int32(POLLERR | POLLNVAL) != 0 && !client.isClosed { close(client) }
                // Hung up both ways: nobody will read the answer (and POLLHUP would wake every turn).
                if events & Int32(POLLHUP) != 0 && client.phase == .responding && !client.isClosed { close(client) }
            }
            if descriptors[1].revents != 0 { acceptConnections(now: now) }
        }
        for client in clients where !client.isClosed { close(client) }
        clients.removeAll()
        counters.connections = 0
        feed.detach(wakeDescriptor: wakeDescriptors.send)
        if listenDescriptor >= 0 {
            _ = Glibc.close(listenDescriptor)
            listenDescriptor = -1
        }
        shared.withLock { $0.counters = counters }
    }

    private func drainWakeups() {
        while true {
            let result = scratch.withUnsafeMutableBytes { recv(wakeDescriptors.receive, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if result > 0 || (result < 0 && errno == EINTR) { continue }
            return
        }
    }

    private func acceptConnections(now: Double) {
        for _ in 0..<Self.acceptsPerTurn {
            let descriptor = accept(listenDescriptor, nil, nil)
            if descriptor < 0 {
                let code = errno
                if code == EINTR || code == ECONNABORTED { continue }
                if code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM { acceptPausedUntil = now + 0.1 }
                return
            }
            // accept4 is not in Swift's Glibc module: set the flags right away.
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            guard clients.count < configuration.maximumConnections else {
                _ = Glibc.close(descriptor)
                counters.connectionsRefused += 1
                continue
            }
            var one: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            counters.connectionsAccepted += 1
            clients.append(HTTPServer.Client(descriptor: descriptor, now: now, requestTimeoutSeconds: configuration.requestTimeoutSeconds))
        }
    }

    /// Reads what a client sent: the request head while reading it; discarded otherwise (a viewer
    /// has nothing more to say; the end of its stream closes it).
    private func receive(_ client: HTTPServer.Client, now: Double) {
        guard client.phase != .responding else { return }
        let limit = client.phase == .readingHead ? HTTPRequestHead.maximumHeadBytes + 1 - client.head.count : scratch.count
        guard let count = client.read(into: &scratch, limit: limit) else { return }
        guard count > 0 else {
            close(client)
            return
        }
        guard client.phase == .readingHead else { return }
        let searchFrom = client.head.count
        client.head.append(contentsOf: scratch[0..<count])
        if let length = HTTPRequestHead.headLength(in: client.head, searchFrom: searchFrom),
           length <= HTTPRequestHead.maximumHeadBytes {
            answer(client, head: client.head[0..<length], now: now)
        } else if client.head.count > HTTPRequestHead.maximumHeadBytes {
            counters.badRequests += 1
            respond(client, HTTPResponse.error(431), now: now)
        }
    }

    /// Answers a complete request head.
    private func answer(_ client: HTTPServer.Client, head bytes: ArraySlice<UInt8>, now: Double) {
        client.head = []
        let request: HTTPRequestHead
        do {
            request = try HTTPRequestHead(parsing: bytes)
        } catch {
            counters.badRequests += 1
            respond(client, HTTPResponse.error(error.status), now: now)
            return
        }
        let includeBody = request.method == .get
        if checksHost, let host = request.host, !HTTPRequestHead.isLoopbackHost(host, boundHost: boundHost) {
            counters.forbidden += 1
            respond(client, HTTPResponse.error(403, includeBody: includeBody), now: now)
            return
        }
        let path = String(request.path)
        if path == feedPath {
            guard includeBody else {
                respond(client, HTTPResponse.eventStream(includeBody: false), now: now)
                return
            }
            guard counters.viewers < configuration.maximumViewers else {
                counters.viewersRefused += 1
                respond(client, HTTPResponse.error(503), now: now)
                return
            }
            counters.requests += 1
            counters.viewers += 1
            counters.viewersTotal += 1
            client.phase = .viewing
            client.nextID = feed.startID(lastEventID: request.lastEventID.flatMap { Int($0) })
            client.setOutput(HTTPResponse.eventStream(includeBody: true), now: now)
            return
        }
        guard let resource = resources[path] else {
            counters.notFound += 1
            respond(client, HTTPResponse.error(404, includeBody: includeBody), now: now)
            return
        }
        let response: [UInt8]
        switch resource {
        case .fixed(let contentType, let body):
            response = HTTPResponse.complete(status: 200, contentType: contentType, body: body, includeBody: includeBody)
        case .dynamic(let contentType, let body):
            response = HTTPResponse.complete(status: 200, contentType: contentType, body: body(), includeBody: includeBody)
        }
        respond(client, response, now: now)
    }

    /// Queues one complete response; the connection closes once it is written.
    private func respond(_ client: HTTPServer.Client, _ response: [UInt8], now: Double) {
        counters.requests += 1
        client.phase = .responding
        client.head = []
        client.setOutput(response, now: now)
    }

    /// Writes what the client's socket takes; refills a viewer's output from the log when it ran dry.
    private func flush(_ client: HTTPServer.Client, now: Double) {
        var budget = Self.writeBudgetBytes
        while budget > 0 && !client.isClosed {
            if client.pendingBytes == 0 {
                switch client.phase {
                case .responding:
                    finishResponse(client, now: now)
                    return
                case .viewing:
                    let copied = feed.copy(from: client.nextID, into: &client.output, maximumBytes: Self.chunkBytes,
                                           lagBytes: configuration.viewerLagBytes)
                    guard client.pendingBytes > 0 else { return }
                    client.nextID = copied.nextID
                    client.lastProgress = now
                    counters.messagesSent += copied.messages
                    counters.messagesDropped += copied.dropped
                case .readingHead, .lingering:
                    return
                }
            }
            guard let written = client.write(budget: budget, now: now) else {
                close(client)
                return
            }
            counters.bytesSent += written
            budget -= written
            if !client.isWritable { return }
        }
    }

    /// A response is written: shut our side down and linger to read what the client still sends.
    private func finishResponse(_ client: HTTPServer.Client, now: Double) {
        _ = shutdown(client.descriptor, Int32(SHUT_WR))
        client.phase = .lingering
        client.lingerDeadline = now + Self.lingerSeconds
    }

    /// Request heads too slow, stalled writers, lingering ends, heartbeats.
    private func serviceTimers(now: Double) {
        for client in clients where !client.isClosed {
            switch client.phase {
            case .readingHead where now >= client.headDeadline:
                counters.requestTimeouts += 1
                close(client)
                continue
            case .lingering where now >= client.lingerDeadline:
                close(client)
                continue
            case .viewing where client.pendingBytes == 0 && now - client.lastSent >= configuration.heartbeatSeconds:
                client.setOutput(Array(": \n\n".utf8), now: now)
            default:
                break
            }
            if client.pendingBytes > 0 && now - client.lastProgress >= configuration.stallSeconds {
                counters.stalledClosed += 1
                // A viewer let go misses every message it had not been sent: counted as dropped.
                if client.phase == .viewing { counters.messagesDropped += max(0, feed.newestID - client.nextID + 1) }
                close(client)
            }
        }
    }

    private func close(_ client: HTTPServer.Client) {
        guard !client.isClosed else { return }
        client.isClosed = true
        if client.phase == .viewing { counters.viewers -= 1 }
        _ = Glibc.close(client.descriptor)
    }
}
