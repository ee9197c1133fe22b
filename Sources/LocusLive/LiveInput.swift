import LocusCore

/// Where a live stream waits for ranges (`locus stream`, `locus serve --input`): standard input, a
/// UDP socket or an MQTT subscription — one `wait` for all of them, bounded by the stream's tick,
/// that hands what came to a `LiveRowConsumer`. Arrival times are not kept here: the consumer
/// stamps every batch it is handed.
package struct LiveInput {
    private enum Source {
        case standardInput(StandardInputRows)
        case udp(UDPReceiver)
        case mqtt(MQTTClient)
    }
    private var source: Source
    private let endpoint: StreamEndpoint
    /// A datagram's bytes (64 KiB: the largest UDP payload).
    private var datagram = [UInt8](repeating: 0, count: 65_536)
    private var messages: [MQTTMessage] = []
    /// The first of `messages` not yet handed to a consumer, and when they were received.
    private var nextMessage = 0
    private var messagesReceivedSeconds = 0.0
    /// How long a batch of datagrams or messages may hold its first fix back from the outputs:
    /// `wait` hands on what is queued only until it has spent this long on the batch, then returns,
    /// and the caller flushes. Unbounded, a burst of n datagrams kept the first one's fix back for
    /// the whole burst's work; a flush per datagram costs a write and the reader's wake-up each
    /// time. The window is a few datagrams' work: the median latency halves at the same CPU
    /// (docs/benchmarks.md, "The live stream's flush window").
    static let flushWindowSeconds = 20e-6

    /// Reads, datagrams or messages handed on so far (a drain waits until a wait hands on nothing).
    package private(set) var taken = 0

    /// Opens `endpoint` (`--input`): binds the UDP port, or connects to the broker and subscribes.
    /// `log` gets the warnings (a UDP socket on every interface) and the MQTT client's lines.
    /// - Throws: E5008 (exit 1) when the port cannot be bound or the broker cannot be reached.
    package init(_ endpoint: StreamEndpoint, clientID: String, log: @escaping @Sendable (String) -> Void) throws(LocusError) {
        self.endpoint = endpoint
        switch endpoint {
        case .standardStream:
            source = .standardInput(StandardInputRows())
        case .udp(let host, let port):
            let receiver = try UDPReceiver(host: host, port: port)
            if receiver.listensOnEveryInterface {
                log("locus stream: warning: udp://\(host):\(receiver.port) listens on every interface: any host that can reach this machine can send rows (give 127.0.0.1 or one local address to limit it)\n")
            }
            source = .udp(receiver)
        case .mqtt(let host, let port, let topic):
            // Each client's log lines name it: with --output mqtt:// too, a broker restart is
            // reported by both clients, and the lines must say which is which.
            let client = try MQTTClient(configuration: .standard(clientID: clientID),
                                        log: { log("locus stream: MQTT input (client id \(clientID)): \($0)\n") })
            try client.connect(host: host, port: port)
            try client.subscribe(topic, qos: 1)
            source = .mqtt(client)
        }
    }

    /// Waits up to `timeoutMilliseconds` for input and hands what came (without waiting again, and a
    /// datagram's or message's batch for at most `flushWindowSeconds`) to `consumer`; false once the
    /// input has ended (standard input only).
    /// - Throws: E5001 for standard input that cannot be read, the consumer's (its header's) errors;
    ///   E5008 for a socket error.
    package mutating func wait<Consumer: LiveRowConsumer>(timeoutMilliseconds: Int32, into consumer: inout Consumer) throws(LocusError) -> Bool {
        switch source {
        case .standardInput(let rows):
            let before = rows.reads
            defer { taken += rows.reads - before }
            return try rows.wait(timeoutMilliseconds: timeoutMilliseconds, into: &consumer,
                                 receivedSeconds: LiveClock.realtimeSeconds)
        case .udp(let receiver):
            var timeout = Int(timeoutMilliseconds)
            var batchStarted = Double.nan
            // What is queued, until the batch has taken `flushWindowSeconds`; then back to the
            // caller, which flushes the outputs and ticks (the rest stays in the socket's queue).
            for _ in 0..<4096 {
                let t = timeout
                let reception = try receiver.receive(into: &datagram, timeoutMilliseconds: t)
                let count: Int
                switch reception {
                case .timeout: return true
                case .datagram(let n): count = n
                case .truncated(let n, _): count = n  // counted by the receiver
                }
                taken += 1
                timeout = 0
                if batchStarted.isNaN { batchStarted = LiveClock.monotonicSeconds() }
                let received = LiveClock.realtimeSeconds()
                consumer.ingestMessage(datagram.span.extracting(0..<count), receivedSeconds: received, allowsCSV: true)
                if LiveClock.monotonicSeconds() - batchStarted >= Self.flushWindowSeconds { return true }
            }
            return true
        case .mqtt(let client):
            // Messages already taken from the client and not yet handed on come first, unwaited.
            if nextMessage == messages.count {
                messages.removeAll(keepingCapacity: true)
                nextMessage = 0
                guard client.receive(into: &messages, maximumCount: 4096, timeoutMilliseconds: Int(timeoutMilliseconds)) > 0 else { return true }
                messagesReceivedSeconds = LiveClock.realtimeSeconds()
            }
            let batchStarted = LiveClock.monotonicSeconds()
            while nextMessage < messages.count {
                let payload = messages[nextMessage].payload
                consumer.ingestMessage(payload.span, receivedSeconds: messagesReceivedSeconds, allowsCSV: false)
                nextMessage += 1
                taken += 1
                if LiveClock.monotonicSeconds() - batchStarted >= Self.flushWindowSeconds { break }
            }
            return true
        }
    }

    /// The input as opened: a UDP port 0 names the port the system chose.
    package var description: String {
        switch source {
        case .standardInput: return "-"
        case .udp(let receiver): return "udp://\(receiver.host):\(receiver.port)"
        case .mqtt: return endpoint.description
        }
    }

    /// The input's own counts, for the summary.
    package var counts: [(String, Int)] {
        switch source {
        case .standardInput: return []
        case .udp(let receiver):
            return [("datagrams", receiver.datagramCount), ("truncated_datagrams", receiver.truncatedDatagramCount)]
        case .mqtt(let client):
            let c = client.counters
            return [("messages", c.messagesReceived), ("connection_losses", c.connectionLosses), ("reconnects", c.reconnects)]
        }
    }

    /// Closes the socket or the broker connection.
    package func close() {
        switch source {
        case .standardInput: break
        case .udp(let receiver): receiver.close()
        case .mqtt(let client): client.close()
        }
    }
}
