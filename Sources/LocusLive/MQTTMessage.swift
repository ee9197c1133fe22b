/// One message received from the broker: its topic and its payload bytes, copied out of
/// libmosquitto's buffer before the callback returns.
struct MQTTMessage: Sendable, Equatable {
    /// The topic the message was published to (not the filter it matched).
    var topic: String
    /// The payload, byte-exact (MQTT payloads are binary; ours are UTF-8 JSON).
    var payload: [UInt8]

    /// A message on `topic` with `payload`.
    init(topic: String, payload: [UInt8]) {
        self.topic = topic
        self.payload = payload
    }
}
