extension MQTTClient {
    /// How an `MQTTClient` connects, buffers and reconnects. Start from `standard(clientID:)`.
    package struct Configuration: Sendable, Equatable {
        /// The MQTT client id. With `persistentSession` it names the session the broker keeps for us
        /// across reconnects, so it must be stable and unique per broker (e.g. `locus-stream-in-<site>`).
        var clientID: String
        /// The keep-alive interval in seconds: the broker drops us after 1.5× this without a packet.
        var keepAliveSeconds: Int
        /// Published QoS 1 messages not yet acknowledged (PUBACK) at most; `publish` blocks at the
        /// bound (backpressure). Also the bound of what is held while the broker is away.
        var maximumUnacknowledgedMessages: Int
        /// Received messages waiting in the queue for `receive` at most; at the bound the network
        /// thread waits for the consumer (and the broker queues for us meanwhile).
        var maximumQueuedIncomingMessages: Int
        /// `clean_session = false`: the broker keeps our subscriptions and queues QoS 1 messages for us
        /// while we reconnect (up to its `max_queued_messages`, 1000 by default in mosquitto).
        var persistentSession: Bool
        /// How long `connect` waits for the broker's CONNACK after the TCP connection, in milliseconds.
        var connectTimeoutMilliseconds: Int
        /// How long `subscribe` waits for the SUBACK, in milliseconds.
        var subscribeTimeoutMilliseconds: Int
        /// The first wait before reconnecting after a loss, in milliseconds; doubled after each
        /// failed attempt up to `maximumReconnectDelayMilliseconds`, reset once connected.
        var initialReconnectDelayMilliseconds: Int
        /// The longest wait between reconnection attempts, in milliseconds.
        var maximumReconnectDelayMilliseconds: Int

        /// The defaults: keep-alive 30 s, 1,000 unacknowledged messages, 10,000 queued incoming
        /// messages, a persistent session, 5 s to connect and to subscribe, reconnect back-off
        /// 0.1 s → 5 s doubling.
        package static func standard(clientID: String) -> Configuration {
            Configuration(clientID: clientID, keepAliveSeconds: 30, maximumUnacknowledgedMessages: 1_000,
                          maximumQueuedIncomingMessages: 10_000, persistentSession: true,
                          connectTimeoutMilliseconds: 5_000, subscribeTimeoutMilliseconds: 5_000,
                          initialReconnectDelayMilliseconds: 100, maximumReconnectDelayMilliseconds: 5_000)
        }
    }

    /// What the client has done so far. Read with `counters`.
    struct Counters: Sendable, Equatable {
        /// Messages taken from the broker (queued for `receive`).
        var messagesReceived = 0
        /// Messages handed to `publish` and accepted by libmosquitto.
        var messagesPublished = 0
        /// Published messages the broker acknowledged (PUBACK for QoS 1; sent for QoS 0).
        var messagesAcknowledged = 0
        /// Connections lost unexpectedly (each logged).
        var connectionLosses = 0
        /// Successful reconnections after a loss.
        var reconnects = 0
        /// SUBACKs received granting a subscription (the first and every re-subscription).
        var subscriptionsGranted = 0
    }
}
