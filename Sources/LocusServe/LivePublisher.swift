import LocusCore
import LocusLive

/// `locus stream --output mqtt://HOST:PORT/PREFIX`: the broker connection positions and events are
/// published through (QoS 1), each to `PREFIX/tags/<tag>/<kind>`. `publish` blocks while too many
/// messages await their PUBACK — backpressure: the stream stops reading until the broker catches
/// up, nothing is dropped.
final class LivePublisher {
    private let client: MQTTClient
    /// The topic prefix (`PREFIX`; may be empty).
    private let topicPrefix: String

    /// Connects for `endpoint` when it is a broker; nil for standard output. `log` gets the
    /// client's lines.
    /// - Throws: E5008 (exit 1) when the broker cannot be reached.
    init?(_ endpoint: StreamEndpoint, clientID: String, log: @escaping @Sendable (String) -> Void) throws(LocusError) {
        guard case .mqtt(let host, let port, let topic) = endpoint else { return nil }
        client = try MQTTClient(configuration: .standard(clientID: clientID), log: { log("locus stream: MQTT output (client id \(clientID)): \($0)\n") })
        try client.connect(host: host, port: port)
        topicPrefix = topic
    }

    /// Publishes one message (QoS 1) to `PREFIX/tags/<level>/<kind>`, `<level>` the tag id encoded
    /// into one topic level (`TopicEncoding.level`): an id is data, never topic syntax.
    func publish(tag: TagID, kind: String, _ payload: [UInt8]) throws(LocusError) {
        let level = TopicEncoding.level(tag.rawValue)
        let topic = topicPrefix.isEmpty ? "tags/\(level)/\(kind)" : "\(topicPrefix)/tags/\(level)/\(kind)"
        try client.publish(topic: topic, payload: payload, qos: 1)
    }

    /// Waits (up to 10 s) for every message to be acknowledged, then disconnects.
    func close() {
        _ = client.waitForAcknowledgements(timeoutMilliseconds: 10_000)
        client.close()
    }
}
