internal import CMosquitto
import Glibc
import LocusCore

/// An MQTT 3.1.1 client over libmosquitto (Debian's `libmosquitto-dev`; never a hand-written
/// protocol): subscribe and receive through a bounded queue, publish QoS 1 with backpressure,
/// reconnect with back-off.
///
/// **Threads.** `connect` starts one network thread of ours that runs `mosquitto_loop` (reads,
/// writes, keep-alive, libmosquitto's callbacks) and reconnects after a loss; every method may be
/// called from any thread. `close()` (or `deinit`) disconnects, wakes every waiter and joins the
/// thread.
///
/// **Incoming.** Each message is copied (topic, payload bytes) into a queue of at most
/// `maximumQueuedIncomingMessages`; `receive(timeoutMilliseconds:)` takes them in arrival order and
/// returns nil when nothing arrives within the timeout, so a consumer can tick. When the queue is
/// full the network thread waits for the consumer: nothing is dropped here, the broker holds the
/// rest (its in-flight window, 20 by default, then its per-client queue). Use separate clients for
/// input and output, so a blocked publisher never stalls the thread that must read its own PUBACKs.
///
/// **Outgoing.** `publish` hands the message to libmosquitto, which keeps a copy until the broker
/// acknowledges it (PUBACK, seen in `on_publish`). At most `maximumUnacknowledgedMessages` are
/// unacknowledged; at the bound `publish` blocks until acknowledgements arrive — backpressure,
/// never a drop.
///
/// **While the broker is away** (logged through `log` with the reason, then reconnected with
/// back-off `initialReconnectDelayMilliseconds` → `maximumReconnectDelayMilliseconds`, doubling,
/// 0.1 s → 5 s by default; each failed attempt is logged too):
/// - outgoing: the unacknowledged messages — at most `maximumUnacknowledgedMessages` — stay in
///   libmosquitto's memory and are sent again after the reconnection; a further `publish` blocks.
/// - incoming: with `persistentSession` (clean_session = false and a stable client id) the broker
///   keeps our subscriptions and queues QoS 1 messages for us while we are away, up to its
///   `max_queued_messages` per client (mosquitto's default: 1000; beyond it the broker drops and
///   logs). On every (re)connection `on_connect` subscribes again to every topic filter, so a broker
///   that lost our session (restarted without persistence) delivers again from then on.
package final class MQTTClient: Sendable {
    private let connection: MQTTConnection

    /// A client with `configuration` (not yet connected). `log` receives one line per event worth an
    /// operator's attention — connection lost (with the reason), reconnect attempts, reconnected,
    /// refusals — on the network thread.
    ///
    /// - Throws: `LocusError` `E5008` when libmosquitto cannot be initialised or the client created.
    package init(configuration: Configuration, log: @escaping @Sendable (String) -> Void) throws(LocusError) {
        connection = try MQTTConnection(configuration: configuration, log: log)
    }

    deinit { close() }

    /// The counts so far (a consistent snapshot).
    var counters: Counters { connection.state.withLock { $0.counters } }

    /// True while a connection to the broker is established (CONNACK received, not lost since).
    var isConnected: Bool { connection.state.withLock { $0.isConnected } }

    /// Connects to the broker at `host:port` with the configured keep-alive and waits for its CONNACK
    /// (`connectTimeoutMilliseconds`), then starts the network thread. Call once.
    ///
    /// - Throws: `LocusError` `E5008` (exit 1) naming `mqtt://host:port` and the reason when the broker
    ///   cannot be reached (connection refused, no route, unknown host), refuses us, or does not
    ///   answer in time; `E1002` when called twice or after `close()`.
    package func connect(host: String, port: UInt16) throws(LocusError) {
        let uri = "mqtt://\(host):\(port)"
        let configuration = connection.configuration
        let canStart = connection.state.withLock { shared -> Bool in
            guard !shared.connectCalled && !shared.isStopping else { return false }
            shared.connectCalled = true
            return true
        }
        guard canStart else { throw LocusError(.callOrder, "MQTTClient.connect called twice or after close (\(uri))") }
        connection.address.withLock { $0 = uri }
        let status = mosquitto_connect(connection.handle.pointer, host, Int32(port), Int32(clamping: configuration.keepAliveSeconds))
        guard status == MOSQ_ERR_SUCCESS.rawValue else {
            let reason = MosquittoLibrary.text(status)
            close()
            throw LocusError(.networkUnavailable, "cannot connect to the MQTT broker at \(uri): \(reason)")
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(connection).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            let connection = Unmanaged<MQTTConnection>.fromOpaque(context)
            connection.takeUnretainedValue().runNetworkLoop()
            connection.release()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<MQTTConnection>.fromOpaque(context).release()
            close()
            throw LocusError(.networkUnavailable, "cannot start the MQTT network thread for \(uri): \(String(cString: strerror(created)))")
        }
        connection.state.withLock { $0.thread = thread }
        let outcome = connection.state.wait(until: { $0.hasConnectedOnce || $0.connectRefusal != nil },
                                            timeoutMilliseconds: configuration.connectTimeoutMilliseconds) { shared, _ in
            shared.hasConnectedOnce ? nil : (shared.connectRefusal ?? "no CONNACK within \(MQTTConnection.seconds(configuration.connectTimeoutMilliseconds))")
        }
        if let failure = outcome {
            close()
            throw LocusError(.networkUnavailable, "cannot connect to the MQTT broker at \(uri): \(failure)")
        }
    }

    /// Subscribes to `topicFilter` (`+` and `#` wildcards allowed) at `qos` (0 or 1) and, when
    /// connected, waits for the SUBACK (`subscribeTimeoutMilliseconds`). The filter is remembered and
    /// subscribed again on every reconnection. While disconnected it is only remembered.
    ///
    /// - Throws: `LocusError` `E5008` when the broker refuses the subscription, does not answer in
    ///   time, or libmosquitto rejects the filter; `E1002` after `close()`.
    func subscribe(_ topicFilter: String, qos: Int = 1) throws(LocusError) {
        precondition(qos == 0 || qos == 1, "MQTTClient.subscribe: qos must be 0 or 1")
        let uri = connection.address.withLock { $0 }
        let isOpen = connection.state.withLock { shared -> Bool in
            guard !shared.isStopping else { return false }
            shared.topicFilters.append((topicFilter, Int32(qos)))
            return true
        }
        guard isOpen else { throw LocusError(.callOrder, "MQTTClient.subscribe after close (\(uri))") }
        var messageID: Int32 = 0
        let status = mosquitto_subscribe(connection.handle.pointer, &messageID, topicFilter, Int32(qos))
        if status == MOSQ_ERR_NO_CONN.rawValue { return }  // subscribed on the next connection
        guard status == MOSQ_ERR_SUCCESS.rawValue else {
            throw LocusError(.networkUnavailable, "cannot subscribe to '\(topicFilter)' on \(uri): \(MosquittoLibrary.text(status))")
        }
        let timeout = connection.configuration.subscribeTimeoutMilliseconds
        let granted = connection.state.wait(until: { $0.subscribeResults[messageID] != nil || $0.isStopping },
                                            timeoutMilliseconds: timeout) { shared, _ in
            shared.subscribeResults.removeValue(forKey: messageID)
        }
        guard let granted else {
            throw LocusError(.networkUnavailable, "no SUBACK for '\(topicFilter)' from \(uri) within \(MQTTConnection.seconds(timeout))")
        }
        guard granted < 128 else {
            throw LocusError(.networkUnavailable, "the MQTT broker at \(uri) refused the subscription to '\(topicFilter)'")
        }
    }

    /// The next received message, waiting at most `timeoutMilliseconds` (0: do not wait; negative:
    /// no limit); nil when none arrived in time or the client is closed.
    func receive(timeoutMilliseconds: Int) -> MQTTMessage? {
        let message = connection.state.wait(until: { $0.incomingCount > 0 || $0.isStopping },
                                            timeoutMilliseconds: timeoutMilliseconds) { shared, _ in
            shared.popIncoming()
        }
        if message != nil { connection.state.broadcast() }
        return message
    }

    /// Moves up to `maximumCount` received messages to the end of `messages`, waiting at most
    /// `timeoutMilliseconds` for the first one; returns how many were moved (0 on timeout).
    /// Complexity: O(moved).
    func receive(into messages: inout [MQTTMessage], maximumCount: Int, timeoutMilliseconds: Int) -> Int {
        let moved = connection.state.wait(until: { $0.incomingCount > 0 || $0.isStopping },
                                          timeoutMilliseconds: timeoutMilliseconds) { shared, _ -> Int in
            var moved = 0
            while moved < maximumCount, let message = shared.popIncoming() {
                messages.append(message)
                moved += 1
            }
            return moved
        }
        if moved > 0 { connection.state.broadcast() }
        return moved
    }

    /// Publishes `payload` to `topic` at `qos` (0 or 1, not retained). Blocks while
    /// `maximumUnacknowledgedMessages` are unacknowledged — also while the broker is away — until
    /// acknowledgements arrive (backpressure; nothing is dropped). libmosquitto copies the payload.
    ///
    /// - Throws: `LocusError` `E5008` when libmosquitto rejects the message (invalid topic, payload
    ///   over 256 MiB, out of memory); `E1002` when the client is closed (also while blocked).
    func publish(topic: String, payload: UnsafeRawBufferPointer, qos: Int = 1) throws(LocusError) {
        precondition(qos == 0 || qos == 1, "MQTTClient.publish: qos must be 0 or 1")
        let bound = max(1, connection.configuration.maximumUnacknowledgedMessages)
        let isOpen = connection.state.wait(until: { $0.unacknowledged < bound || $0.isStopping },
                                           timeoutMilliseconds: -1) { shared, _ -> Bool in
            guard !shared.isStopping else { return false }
            shared.unacknowledged += 1
            shared.counters.messagesPublished += 1
            return true
        }
        guard isOpen else {
            throw LocusError(.callOrder, "MQTTClient.publish after close (\(connection.address.withLock { $0 }))")
        }
        let status = mosquitto_publish(connection.handle.pointer, nil, topic, Int32(clamping: payload.count),
                                       payload.baseAddress, Int32(qos), false)
        // MOSQ_ERR_NO_CONN: a QoS 1 message is queued all the same and sent after the reconnection.
        if status == MOSQ_ERR_SUCCESS.rawValue || (status == MOSQ_ERR_NO_CONN.rawValue && qos == 1) { return }
        connection.state.withLock { shared in
            shared.unacknowledged -= 1
            shared.counters.messagesPublished -= 1
        }
        connection.state.broadcast()
        throw LocusError(.networkUnavailable, "cannot publish \(payload.count) bytes to '\(topic)': \(MosquittoLibrary.text(status))")
    }

    /// Publishes `payload` to `topic`; see `publish(topic:payload:qos:)` with a raw buffer.
    ///
    /// - Throws: as `publish(topic:payload:qos:)` with a raw buffer.
    package func publish(topic: String, payload: [UInt8], qos: Int = 1) throws(LocusError) {
        let failure: LocusError? = payload.withUnsafeBytes { raw in
            do throws(LocusError) { try publish(topic: topic, payload: raw, qos: qos) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Waits until every published message is acknowledged, at most `timeoutMilliseconds`
    /// (negative: no limit); true when none is left unacknowledged. For a drain before exit.
    package func waitForAcknowledgements(timeoutMilliseconds: Int) -> Bool {
        connection.state.wait(until: { $0.unacknowledged == 0 || $0.isStopping },
                              timeoutMilliseconds: timeoutMilliseconds) { shared, _ in shared.unacknowledged == 0 }
    }

    /// Disconnects (a clean MQTT DISCONNECT when connected), wakes every waiting `receive`,
    /// `publish` and `subscribe`, and ends the network thread. Messages still queued for `receive`
    /// or unacknowledged are discarded (with a persistent session the broker keeps what it had not
    /// delivered). Safe to call more than once and from any thread but the network thread.
    package func close() {
        let thread = connection.state.withLock { shared -> pthread_t? in
            let first = !shared.isStopping
            shared.isStopping = true
            guard first else { return nil }
            return shared.thread
        }
        connection.state.broadcast()
        guard let thread else { return }
        mosquitto_disconnect(connection.handle.pointer)
        pthread_join(thread, nil)
    }
}
