internal import CMosquitto
import Glibc
import LocusCore

/// The `struct mosquitto *` of one client. `@unchecked Sendable`: libmosquitto 2 guards a client's
/// state with its own mutexes when `mosquitto_threaded_set(true)` is on, so `publish`, `subscribe`
/// and `disconnect` may be called from any thread while our network thread runs `mosquitto_loop`.
struct MosquittoHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// libmosquitto's process-wide set-up, done once (`mosquitto_lib_init`), and its texts.
enum MosquittoLibrary {
    /// True once `mosquitto_lib_init` has run; reading it runs it (Swift runs a global's initialiser once).
    static let isInitialized: Bool = mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue

    /// A libmosquitto status as text without a final full stop; `MOSQ_ERR_ERRNO` as the text of `errno`.
    static func text(_ status: Int32, errno code: Int32 = errno) -> String {
        let text = status == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(code)) : String(cString: mosquitto_strerror(status))
        return text.hasSuffix(".") ? String(text.dropLast()) : text
    }
}

/// The state the client, libmosquitto's callbacks and the network thread share, behind one lock.
struct MQTTSharedState {
    var counters = MQTTClient.Counters()
    /// Published and not yet acknowledged.
    var unacknowledged = 0
    var incoming = FIFOQueue<MQTTMessage>()
    var isConnected = false
    var hasConnectedOnce = false
    var connectRefusal: String?
    var isStopping = false
    /// `connect` was called (once only).
    var connectCalled = false
    /// The network thread, once started (joined by `close`).
    var thread: pthread_t?
    var reconnectDelayMilliseconds = 0
    var topicFilters: [(filter: String, qos: Int32)] = []
    /// SUBACKs of `subscribe` calls, by message id: the granted QoS (128: refused).
    var subscribeResults: [Int32: Int32] = [:]
    /// The re-subscriptions made in `onConnect` (message id → topic filter), whose SUBACKs nobody waits for: `onSubscribe` logs them.
    var resubscribeIDs: [Int32: String] = [:]

    var incomingCount: Int { incoming.count }

    mutating func popIncoming() -> MQTTMessage? { incoming.popFirst() }
}

/// The part of an `MQTTClient` that libmosquitto's callbacks and the network thread reach through
/// an unretained pointer (`mosquitto_new`'s `obj`). It owns the `struct mosquitto *` and destroys it
/// in `deinit`, which runs only after the network thread (which holds a reference) has ended.
final class MQTTConnection: Sendable {
    let handle: MosquittoHandle
    let state: ConditionLock<MQTTSharedState>
    let configuration: MQTTClient.Configuration
    let log: @Sendable (String) -> Void
    /// `mqtt://host:port` once `connect` is called, for messages.
    let address: ConditionLock<String>

    init(configuration: MQTTClient.Configuration, log: @escaping @Sendable (String) -> Void) throws(LocusError) {
        guard MosquittoLibrary.isInitialized else {
            throw LocusError(.networkUnavailable, "libmosquitto could not be initialised")
        }
        guard let pointer = mosquitto_new(configuration.clientID, !configuration.persistentSession, nil) else {
            throw LocusError(.networkUnavailable, "cannot create an MQTT client '\(configuration.clientID)': \(MosquittoLibrary.text(MOSQ_ERR_ERRNO.rawValue))")
        }
        self.handle = MosquittoHandle(pointer: pointer)
        self.configuration = configuration
        self.log = log
        self.state = ConditionLock(MQTTSharedState())
        self.address = ConditionLock("mqtt://?")
        mosquitto_threaded_set(pointer, true)
        _ = mosquitto_int_option(pointer, MOSQ_OPT_SEND_MAXIMUM, Int32(clamping: min(configuration.maximumUnacknowledgedMessages, 65_535)))
        mosquitto_user_data_set(pointer, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_callback_set(pointer) { _, context, code in
            MQTTConnection.from(context)?.onConnect(code)
        }
        mosquitto_disconnect_callback_set(pointer) { _, context, code in
            MQTTConnection.from(context)?.onDisconnect(code)
        }
        mosquitto_publish_callback_set(pointer) { _, context, _ in
            MQTTConnection.from(context)?.onPublish()
        }
        mosquitto_subscribe_callback_set(pointer) { _, context, messageID, count, granted in
            MQTTConnection.from(context)?.onSubscribe(messageID, granted: count > 0 ? granted?.pointee ?? 128 : 128)
        }
        mosquitto_message_callback_set(pointer) { _, context, message in
            guard let message else { return }
            MQTTConnection.from(context)?.onMessage(message.pointee)
        }
    }

    deinit {
        mosquitto_destroy(handle.pointer)
    }

    static func from(_ context: UnsafeMutableRawPointer?) -> MQTTConnection? {
        context.map { Unmanaged<MQTTConnection>.fromOpaque($0).takeUnretainedValue() }
    }

    // MARK: callbacks (on the network thread)

    func onConnect(_ code: Int32) {
        let uri = address.withLock { $0 }
        guard code == 0 else {
            let reason = String(cString: mosquitto_connack_string(code))
            state.withLock { $0.connectRefusal = reason }
            state.broadcast()
            log("MQTT broker \(uri) refused the connection: \(reason)")
            return
        }
        let (filters, isReconnect) = state.withLock { shared -> ([(filter: String, qos: Int32)], Bool) in
            let isReconnect = shared.hasConnectedOnce
            if isReconnect { shared.counters.reconnects += 1 }
            shared.hasConnectedOnce = true
            shared.isConnected = true
            shared.reconnectDelayMilliseconds = configuration.initialReconnectDelayMilliseconds
            return (shared.topicFilters, isReconnect)
        }
        state.broadcast()
        if isReconnect {
            let again = filters.isEmpty ? "" : "; subscribing again to " + filters.map { "'\($0.filter)'" }.joined(separator: ", ")
            log("reconnected to MQTT broker \(uri)\(again)")
        }
        for (filter, qos) in filters {
            var messageID: Int32 = 0
            let status = mosquitto_subscribe(handle.pointer, &messageID, filter, qos)
            if status == MOSQ_ERR_SUCCESS.rawValue {
                state.withLock { $0.resubscribeIDs[messageID] = filter }
            } else {
                log("re-subscribing to '\(filter)' on \(uri) failed: \(MosquittoLibrary.text(status))")
            }
        }
    }

    func onDisconnect(_ code: Int32) {
        let (stopping, delay) = state.withLock { shared -> (Bool, Int) in
            shared.isConnected = false
            if !shared.isStopping && code != 0 { shared.counters.connectionLosses += 1 }
            return (shared.isStopping, shared.reconnectDelayMilliseconds)
        }
        state.broadcast()
        guard !stopping && code != 0 else { return }
        let uri = address.withLock { $0 }
        log("lost the connection to MQTT broker \(uri): \(MosquittoLibrary.text(code)); reconnecting in \(Self.seconds(delay)) (back-off up to \(Self.seconds(configuration.maximumReconnectDelayMilliseconds)))")
    }

    func onPublish() {
        state.withLock { shared in
            if shared.unacknowledged > 0 { shared.unacknowledged -= 1 }
            shared.counters.messagesAcknowledged += 1
        }
        state.broadcast()
    }

    /// A SUBACK: a `subscribe` call's is handed to the waiting caller; a re-subscription's (made in
    /// `onConnect`, which nobody waits for) is logged, so that the operator — and a test — can see
    /// when rows published to the filter are delivered again.
    func onSubscribe(_ messageID: Int32, granted: Int32) {
        let resubscribed = state.withLock { shared -> String? in
            if granted < 128 { shared.counters.subscriptionsGranted += 1 }
            guard let filter = shared.resubscribeIDs.removeValue(forKey: messageID) else {
                shared.subscribeResults[messageID] = granted
                return nil
            }
            return filter
        }
        state.broadcast()
        if let filter = resubscribed {
            let uri = address.withLock { $0 }
            log(granted < 128 ? "subscribed again to '\(filter)' on \(uri) (QoS \(granted))"
                : "MQTT broker \(uri) refused the subscription to '\(filter)' again")
        }
    }

    /// Copies the message and queues it, waiting while the queue is full (the consumer is behind):
    /// the broker then holds further messages for us. Gives up only when the client is closing.
    func onMessage(_ message: mosquitto_message) {
        let topic = message.topic.map { String(cString: $0) } ?? ""
        let count = Int(message.payloadlen)
        let payload: [UInt8]
        if let bytes = message.payload, count > 0 {
            payload = Array(UnsafeRawBufferPointer(start: bytes, count: count))
        } else {
            payload = []
        }
        let capacity = max(1, configuration.maximumQueuedIncomingMessages)
        state.wait(until: { $0.incomingCount < capacity || $0.isStopping }, timeoutMilliseconds: -1) { shared, _ in
            guard !shared.isStopping else { return }
            shared.incoming.append(MQTTMessage(topic: topic, payload: payload))
            shared.counters.messagesReceived += 1
        }
        state.broadcast()
    }

    // MARK: the network thread

    /// Runs `mosquitto_loop` until the client closes; after a loss waits the back-off (woken early by
    /// `close`) and calls `mosquitto_reconnect`, doubling the wait after each failure.
    func runNetworkLoop() {
        while true {
            if state.withLock({ $0.isStopping }) { return }
            let status = mosquitto_loop(handle.pointer, 1_000, 1)
            if status == MOSQ_ERR_SUCCESS.rawValue { continue }
            let delay = state.withLock { $0.reconnectDelayMilliseconds }
            let stopping = state.wait(until: { $0.isStopping }, timeoutMilliseconds: delay) { shared, stopping in
                stopping
            }
            if stopping { return }
            let reconnect = mosquitto_reconnect(handle.pointer)
            if reconnect != MOSQ_ERR_SUCCESS.rawValue {
                let reason = MosquittoLibrary.text(reconnect)
                let next = state.withLock { shared -> Int in
                    shared.reconnectDelayMilliseconds = min(configuration.maximumReconnectDelayMilliseconds,
                                                            max(1, shared.reconnectDelayMilliseconds) * 2)
                    return shared.reconnectDelayMilliseconds
                }
                let uri = address.withLock { $0 }
                log("reconnecting to MQTT broker \(uri) failed: \(reason); next attempt in \(Self.seconds(next))")
            }
        }
    }

    /// `1.6 s`, `0.1 s`: a delay in milliseconds as seconds with one decimal.
    static func seconds(_ milliseconds: Int) -> String {
        "\(milliseconds / 1000).\((milliseconds % 1000) / 100) s"
    }
}
