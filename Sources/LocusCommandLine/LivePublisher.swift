import LocusCore
import LocusLive

/// `locus stream --output mqtt://HOST:PORT/PREFIX`: the broker connection positions and events are
/// published through (QoS 1). `publish` blocks while too many messages await their PUBACK —
/// backpressure: the stream stops reading until the broker catches up, nothing is dropped.
final class LivePublisher {
    private let client: MQTTClient

    /// Connects for `endpoint` when it is a broker; nil for standard output.
    /// - Throws: E5008 (exit 1) when the broker cannot be reached.
    init?(_ endpoint: StreamEndpoint, clientID: String, console: Console) throws(LocusError) {
        guard case .mqtt(let host, let port, _) = endpoint else { return nil }
        client = try MQTTClient(configuration: .standard(clientID: clientID), log: { console.err("locus stream: MQTT output (client id \(clientID)): \($0)\n") })
        try client.connect(host: host, port: port)
    }

    /// Publishes one message (QoS 1).
    func publish(_ topic: String, _ payload: [UInt8]) throws(LocusError) {
        try client.publish(topic: topic, payload: payload, qos: 1)
    }

    /// Waits (up to 10 s) for every message to be acknowledged, then disconnects.
    func close() {
        _ = client.waitForAcknowledgements(timeoutMilliseconds: 10_000)
        client.close()
    }
}

extension StreamEndpoint {
    /// The endpoint's topic (an input's filter, an output's prefix); empty for the others.
    var topic: String {
        if case .mqtt(_, _, let topic) = self { return topic }
        return ""
    }

    /// The URI as given back in messages.
    var description: String {
        switch self {
        case .standardStream: return "-"
        case .udp(let host, let port): return "udp://\(host):\(port)"
        case .mqtt(let host, let port, let topic): return "mqtt://\(host):\(port)/\(topic)"
        }
    }
}
