import Foundation
@testable import LocusCore
@testable import LocusLive
import LocusTestSupport
import Synchronization
import Testing

/// Log lines a client wrote, for the assertions.
final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    var sink: @Sendable (String) -> Void { { line in self.lines.withLock { $0.append(line) } } }
}

/// Polls `condition` every 10 ms until it holds or `seconds` pass (a safety bound, never a timing assertion).
func eventually(within seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// A fresh client id per client and test run (the broker keys persistent sessions by it).
func clientID(_ role: String) -> String { "locus-test-\(role)-\(getpid())-\(UUID().uuidString.prefix(8))" }

func client(_ role: String, _ broker: MosquittoBroker, log: LogRecorder = LogRecorder(),
            configure: (inout MQTTClient.Configuration) -> Void = { _ in }) throws -> MQTTClient {
    var configuration = MQTTClient.Configuration.standard(clientID: clientID(role))
    configure(&configuration)
    let client = try MQTTClient(configuration: configuration, log: log.sink)
    try client.connect(host: broker.host, port: broker.port)
    return client
}

@Suite("MQTT client against a real mosquitto on 127.0.0.1", .serialized,
       .enabled(if: MosquittoBroker.isAvailable, "\(MosquittoBroker.unavailableMessage)"))
struct MQTTClientTests {
    @Test("a subscriber receives what a publisher sends, QoS 1, topic and payload byte-exact")
    func roundTrip() throws {
        let broker = try MosquittoBroker()
        let subscriber = try client("sub", broker)
        try subscriber.subscribe("locus/test/+/ranges", qos: 1)
        let publisher = try client("pub", broker)
        let json = Array(#"[{"t":0.25,"tag":"T1","anchor":40407,"range_m":3.25,"floor":"F1"}]"#.utf8)
        let binary: [UInt8] = [0, 255, 10, 13, 0, 1, 2, 128]
        try publisher.publish(topic: "locus/test/a/ranges", payload: json, qos: 1)
        try publisher.publish(topic: "locus/test/b/ranges", payload: binary, qos: 1)
        try publisher.publish(topic: "locus/test/b/ranges", payload: [], qos: 1)
        try publisher.publish(topic: "locus/other", payload: [1], qos: 1)  // not matched
        #expect(subscriber.receive(timeoutMilliseconds: 10_000) == MQTTMessage(topic: "locus/test/a/ranges", payload: json))
        #expect(subscriber.receive(timeoutMilliseconds: 10_000) == MQTTMessage(topic: "locus/test/b/ranges", payload: binary))
        #expect(subscriber.receive(timeoutMilliseconds: 10_000) == MQTTMessage(topic: "locus/test/b/ranges", payload: []))
        #expect(publisher.waitForAcknowledgements(timeoutMilliseconds: 10_000))
        #expect(publisher.counters.messagesPublished == 4)
        #expect(publisher.counters.messagesAcknowledged == 4)
        #expect(subscriber.receive(timeoutMilliseconds: 50) == nil)
        #expect(subscriber.counters.messagesReceived == 3)
        #expect(subscriber.counters.subscriptionsGranted == 1)
        subscriber.close()
        publisher.close()
        #expect(subscriber.receive(timeoutMilliseconds: 10) == nil)
        #expect(throws: LocusError.self) { try publisher.publish(topic: "x", payload: [1]) }
    }

    @Test("20,000 messages through a bound of 8 unacknowledged: publish blocks, none is lost or repeated")
    func backpressure() throws {
        // The publisher's bound limits what waits for the broker's PUBACK; the broker acknowledges on
        // receipt, so a subscriber starved of CPU (a loaded test machine) can fall behind by more than
        // mosquitto's default per-client queue (max_queued_messages 1000), where the broker drops — the
        // documented bound, not this client's. Here the broker may queue them all.
        let broker = try MosquittoBroker(extraConfiguration: ["max_queued_messages 100000"])
        let subscriber = try client("sub", broker) { $0.maximumQueuedIncomingMessages = 256 }
        try subscriber.subscribe("bulk/#")
        let publisher = try client("pub", broker) { $0.maximumUnacknowledgedMessages = 8 }
        let count = 20_000
        let done = Mutex<LocusError?>(nil)
        let finished = Mutex(false)
        Thread.detachNewThread {
            do throws(LocusError) {
                for index in 0..<count {
                    try publisher.publish(topic: "bulk/\(index % 10)", payload: Array("\(index)".utf8))
                }
            } catch {
                done.withLock { $0 = error }
            }
            finished.withLock { $0 = true }
        }
        var seen = [Bool](repeating: false, count: count)
        var received = 0
        var batch: [MQTTMessage] = []
        while received < count {
            batch.removeAll(keepingCapacity: true)
            guard subscriber.receive(into: &batch, maximumCount: 500, timeoutMilliseconds: 30_000) > 0 else { break }
            for message in batch {
                guard let index = Int(String(decoding: message.payload, as: UTF8.self)), index >= 0, index < count,
                      !seen[index] else {
                    Issue.record("unexpected or repeated payload \(message.payload)")
                    continue
                }
                #expect(message.topic == "bulk/\(index % 10)")
                seen[index] = true
                received += 1
            }
        }
        #expect(eventually { finished.withLock { $0 } })
        #expect(done.withLock { $0 } == nil)
        #expect(received == count, "broker log: \(broker.log.suffix(800))")
        #expect(seen.allSatisfy { $0 })
        #expect(publisher.waitForAcknowledgements(timeoutMilliseconds: 30_000))
        #expect(publisher.counters.messagesPublished == count)
        #expect(publisher.counters.messagesAcknowledged == count)
        #expect(subscriber.counters.messagesReceived == count)
    }

    @Test("an unreachable broker at start-up is E5008 (exit 1) naming the URI and the reason")
    func unreachable() throws {
        let port = try MosquittoBroker.freeTCPPort()
        let client = try MQTTClient(configuration: .standard(clientID: clientID("nobody")), log: { _ in })
        do {
            try client.connect(host: "127.0.0.1", port: port)
            Issue.record("connected to a port nobody listens on")
        } catch {
            #expect(error.code == .networkUnavailable)
            #expect(error.code.isRunTimeFailure)
            #expect(error.message.contains("mqtt://127.0.0.1:\(port)"), "\(error.message)")
            #expect(error.message.contains("refused"), "\(error.message)")
        }
        #expect(!client.isConnected)
    }

    @Test("broker stopped and started again on the same port: the loss and the failed attempts are logged, both clients reconnect with back-off, the subscriber re-subscribes, later messages arrive and held ones are sent")
    func reconnect() throws {
        let broker = try MosquittoBroker()
        let subscriberLog = LogRecorder()
        let publisherLog = LogRecorder()
        let subscriber = try client("sub", broker, log: subscriberLog)
        try subscriber.subscribe("live/#")
        let publisher = try client("pub", broker, log: publisherLog)
        try publisher.publish(topic: "live/a", payload: Array("before".utf8))
        #expect(subscriber.receive(timeoutMilliseconds: 10_000)?.payload == Array("before".utf8))

        broker.stop()
        #expect(eventually { !subscriber.isConnected && !publisher.isConnected })
        // Away long enough for a failed attempt and a longer wait (the back-off), each logged.
        #expect(eventually { subscriberLog.all.contains { $0.contains("failed: Connection refused; next attempt in 0.4 s") } }, "\(subscriberLog.all)")
        // Published while the broker is away: held by the client (fewer than the bound, so no block).
        for index in 0..<5 { try publisher.publish(topic: "live/held", payload: Array("held \(index)".utf8)) }
        try broker.start()

        #expect(eventually { subscriber.counters.reconnects >= 1 && subscriber.counters.subscriptionsGranted >= 2 })
        #expect(eventually { publisher.counters.reconnects >= 1 })
        // The held messages reach the broker and are acknowledged after the reconnection.
        #expect(publisher.waitForAcknowledgements(timeoutMilliseconds: 30_000))
        #expect(publisher.counters.messagesAcknowledged == 6)

        for index in 0..<10 { try publisher.publish(topic: "live/b", payload: Array("after \(index)".utf8)) }
        var after: [String] = []
        while after.count < 10, let message = subscriber.receive(timeoutMilliseconds: 10_000) {
            let text = String(decoding: message.payload, as: UTF8.self)
            if text.hasPrefix("after") { after.append(text) }
        }
        #expect(after == (0..<10).map { "after \($0)" })
        for log in [subscriberLog, publisherLog] {
            #expect(log.all.contains { $0.contains("lost the connection to MQTT broker mqtt://127.0.0.1:\(broker.port)") }, "\(log.all)")
            #expect(log.all.contains { $0.contains("reconnected to MQTT broker mqtt://127.0.0.1:\(broker.port)") }, "\(log.all)")
        }
        #expect(subscriberLog.all.contains { $0.hasSuffix("subscribing again to 'live/#'") }, "\(subscriberLog.all)")
        #expect(subscriber.counters.connectionLosses == 1)
        #expect(subscriber.counters.reconnects == 1)
    }
}
