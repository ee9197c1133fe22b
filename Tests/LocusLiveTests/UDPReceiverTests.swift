@testable import LocusCore
@testable import LocusLive
import Testing

@Suite("UDP receiver")
struct UDPReceiverTests {
    @Test("datagrams sent to the bound port arrive byte-exact, several rows per datagram, in order")
    func roundTrip() throws {
        let receiver = try UDPReceiver(port: 0)
        #expect(receiver.port != 0)
        #expect(receiver.receiveBufferBytes > 0)
        let sender = try UDPSender(port: receiver.port)
        let datagrams: [[UInt8]] = [
            Array("0.000,T1,40407,3.250,F1\n0.000,T1,40408,4.125,F1\n0.000,T1,40409,2.500,F1\n".utf8),
            Array("0.250,T2,40407,1.000,F1".utf8),
            [],
            (0..<1_400).map { UInt8(truncatingIfNeeded: $0 &* 37) },
        ]
        for datagram in datagrams { try sender.send(datagram) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        for datagram in datagrams {
            let reception = try buffer.withUnsafeMutableBytes { try receiver.receive(into: $0, timeoutMilliseconds: 10_000) }
            #expect(reception == .datagram(byteCount: datagram.count))
            #expect(Array(buffer[0..<datagram.count]) == datagram)
        }
        #expect(receiver.datagramCount == datagrams.count)
        #expect(receiver.truncatedDatagramCount == 0)
        #expect(receiver.byteCount == datagrams.reduce(0) { $0 + $1.count })
    }

    @Test("nothing sent: receive returns .timeout (waiting and not waiting)")
    func timeout() throws {
        let receiver = try UDPReceiver(port: 0)
        var buffer = [UInt8](repeating: 0, count: 512)
        #expect(try buffer.withUnsafeMutableBytes { try receiver.receive(into: $0, timeoutMilliseconds: 0) } == .timeout)
        #expect(try buffer.withUnsafeMutableBytes { try receiver.receive(into: $0, timeoutMilliseconds: 20) } == .timeout)
        #expect(receiver.datagramCount == 0)
    }

    @Test("a datagram larger than the buffer is cut, reported as truncated and counted")
    func truncated() throws {
        let receiver = try UDPReceiver(port: 0)
        let sender = try UDPSender(port: receiver.port)
        let big = (0..<3_000).map { UInt8(truncatingIfNeeded: $0) }
        try sender.send(big)
        try sender.send([1, 2, 3])
        var buffer = [UInt8](repeating: 0, count: 1_024)
        let first = try buffer.withUnsafeMutableBytes { try receiver.receive(into: $0, timeoutMilliseconds: 10_000) }
        #expect(first == .truncated(receivedByteCount: 1_024, datagramByteCount: 3_000))
        #expect(Array(buffer) == Array(big[0..<1_024]))
        let second = try buffer.withUnsafeMutableBytes { try receiver.receive(into: $0, timeoutMilliseconds: 10_000) }
        #expect(second == .datagram(byteCount: 3))
        #expect(receiver.truncatedDatagramCount == 1)
        #expect(receiver.datagramCount == 2)
    }

    @Test("many datagrams in a burst all arrive (the large receive buffer holds them)")
    func burst() throws {
        let receiver = try UDPReceiver(port: 0)
        let sender = try UDPSender(port: receiver.port)
        let count = 2_000
        for index in 0..<count { try sender.send(Array("\(index),T\(index % 7),40407,1.000,F1\n".utf8)) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        for index in 0..<count {
            let reception = try buffer.withUnsafeMutableBytes { try receiver.receive(into: $0, timeoutMilliseconds: 10_000) }
            let expected = Array("\(index),T\(index % 7),40407,1.000,F1\n".utf8)
            #expect(reception == .datagram(byteCount: expected.count))
            if Array(buffer[0..<expected.count]) != expected { Issue.record("datagram \(index) differs"); break }
        }
    }

    @Test("a port already bound is E5008 naming the URI; closed receivers throw")
    func errors() throws {
        let first = try UDPReceiver(port: 0)
        do {
            _ = try UDPReceiver(port: first.port)
            Issue.record("a second bind to \(first.port) succeeded")
        } catch {
            #expect(error.code == .networkUnavailable)
            #expect(error.message.contains("udp://127.0.0.1:\(first.port)"))
        }
        first.close()
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(throws: LocusError.self) { try buffer.withUnsafeMutableBytes { try first.receive(into: $0, timeoutMilliseconds: 0) } }
    }
}
