import Foundation
@testable import LocusCore
@testable import LocusLive
import LocusTestSupport
import Testing

/// A consumer that records the messages it is handed and, when `spinSeconds` > 0, works that long
/// on each (longer than the flush window, so every message ends its batch).
private struct RecordingConsumer: LiveRowConsumer {
    var spinSeconds = 0.0
    var messages: [[UInt8]] = []
    var receivedSeconds: [Double] = []

    mutating func ingestLines(_ lines: Span<UInt8>, receivedSeconds: Double) throws(LocusError) {
        Issue.record("a socket input hands on messages, not lines")
    }

    mutating func ingestMessage(_ bytes: Span<UInt8>, receivedSeconds: Double, allowsCSV: Bool) {
        var copy: [UInt8] = []
        for i in bytes.indices { copy.append(bytes[i]) }
        messages.append(copy)
        self.receivedSeconds.append(receivedSeconds)
        let start = LiveClock.monotonicSeconds()
        while LiveClock.monotonicSeconds() - start < spinSeconds {}
    }
}

private func payloads(_ count: Int) -> [[UInt8]] {
    (0..<count).map { Array("\(Double($0) * 0.25),T1,40407,3.25\n".utf8) }
}

@Suite("Live input: a batch holds its first fix back for at most the flush window")
struct LiveInputTests {
    @Test("UDP: a consumer slower than the window gets one datagram per wait; none is lost or reordered")
    func udpWindow() throws {
        var input = try LiveInput(.udp(host: "127.0.0.1", port: 0), clientID: "test", log: { _ in })
        defer { input.close() }
        let port = try #require(UInt16(input.description.split(separator: ":").last.map(String.init) ?? ""))
        let sender = try UDPSender(port: port)
        let sent = payloads(6)
        for p in sent { try sender.send(p) }  // all queued before the first wait (loopback)

        var slow = RecordingConsumer(spinSeconds: 3 * LiveInput.flushWindowSeconds)
        #expect(try input.wait(timeoutMilliseconds: 10_000, into: &slow))
        #expect(slow.messages.count == 1)  // it took longer than the window: back to the caller to flush
        #expect(input.taken == 1)
        var waits = 1
        while slow.messages.count < sent.count, waits < 100 {
            let before = slow.messages.count
            #expect(try input.wait(timeoutMilliseconds: 0, into: &slow))
            #expect(slow.messages.count == before + 1)
            waits += 1
        }
        #expect(slow.messages == sent)
        #expect(input.taken == sent.count)
        // Nothing more: a wait hands on nothing and `taken` stays (the stream's drain stops on that).
        #expect(try input.wait(timeoutMilliseconds: 0, into: &slow))
        #expect(input.taken == sent.count)

        // A consumer that does no work gets what is queued in few waits, in order.
        for p in sent { try sender.send(p) }
        var fast = RecordingConsumer()
        waits = 0
        while fast.messages.count < sent.count, waits < 100 {
            #expect(try input.wait(timeoutMilliseconds: 1_000, into: &fast))
            waits += 1
        }
        #expect(fast.messages == sent)
    }

    @Test("MQTT: messages taken from the client beyond the window wait for the next call, keep their receive time, and are counted when handed on",
          .enabled(if: MosquittoBroker.isAvailable, "\(MosquittoBroker.unavailableMessage)"))
    func mqttWindow() throws {
        let broker = try MosquittoBroker()
        var input = try LiveInput(.mqtt(host: broker.host, port: broker.port, topic: "locus/in"),
                                  clientID: clientID("input"), log: { _ in })
        defer { input.close() }
        let publisher = try client("pub", broker)
        defer { publisher.close() }
        let sent = (0..<6).map { Array(#"{"t":\#(Double($0) * 0.25),"tag":"T1","anchor":40407,"range_m":3.25}"#.utf8) }
        // The input subscribes as it opens, without waiting for the broker's grant: probes until one
        // gets through.
        var probe = RecordingConsumer()
        var probes = 0
        while probe.messages.isEmpty, probes < 300 {
            try publisher.publish(topic: "locus/in", payload: Array("probe".utf8), qos: 1)
            _ = try input.wait(timeoutMilliseconds: 100, into: &probe)
            probes += 1
        }
        try #require(!probe.messages.isEmpty)
        var idle = 0  // the later probes that did get through: until 3 waits of 100 ms hand on nothing
        while idle < 3 {
            let before = input.taken
            _ = try input.wait(timeoutMilliseconds: 100, into: &probe)
            idle = input.taken == before ? idle + 1 : 0
        }
        let takenBefore = input.taken
        var slow = RecordingConsumer(spinSeconds: 3 * LiveInput.flushWindowSeconds)
        for p in sent { try publisher.publish(topic: "locus/in", payload: p, qos: 1) }
        var waits = 0
        while slow.messages.count < sent.count, waits < 2_000 {
            let before = slow.messages.count
            #expect(try input.wait(timeoutMilliseconds: 100, into: &slow))
            #expect(slow.messages.count - before <= 1)  // every message ends its batch
            #expect(input.taken - takenBefore == slow.messages.count)
            waits += 1
        }
        #expect(slow.messages == sent)
        #expect(try input.wait(timeoutMilliseconds: 0, into: &slow))
        #expect(input.taken - takenBefore == sent.count)
        // Messages the client handed over together share their receive time, whenever they are handed on.
        #expect(slow.receivedSeconds == slow.receivedSeconds.sorted())
    }
}
