import Glibc
import LocusCore

/// An unbound IPv4 UDP socket that sends datagrams to one address: the counterpart of
/// `UDPReceiver` for the tests and the stream load generator.
///
/// Not `Sendable`: one thread owns it. The socket closes in `deinit`.
package final class UDPSender {
    private let descriptor: Int32
    private var destination: sockaddr_in
    /// `udp://host:port`, for messages.
    private let uri: String

    /// A socket that sends to `host` (an IPv4 literal or a name) and `port`.
    ///
    /// - Throws: `LocusError` `E5008` when the host does not resolve or no socket can be made.
    package init(host: String = "127.0.0.1", port: UInt16) throws(LocusError) {
        uri = "udp://\(host):\(port)"
        destination = try IPv4Address.socketAddress(host: host, port: port)
        descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw LocusError(.networkUnavailable, "cannot create a UDP socket for \(uri): \(IPv4Address.errnoText())")
        }
    }

    deinit { _ = close(descriptor) }

    /// Sends `bytes` as one datagram (at most 65,507 bytes over IPv4).
    ///
    /// - Throws: `LocusError` `E5008` when the kernel refuses it (too large, no route, buffer full).
    func send(_ bytes: UnsafeRawBufferPointer) throws(LocusError) {
        let sent = withUnsafePointer(to: &destination) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(descriptor, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard sent == bytes.count else {
            throw LocusError(.networkUnavailable, "sending \(bytes.count) bytes to \(uri) failed: \(IPv4Address.errnoText())")
        }
    }

    /// Sends `bytes` as one datagram.
    ///
    /// - Throws: `LocusError` `E5008` as `send(_:)` with a raw buffer.
    package func send(_ bytes: [UInt8]) throws(LocusError) {
        let failure: LocusError? = bytes.withUnsafeBytes { raw in
            do throws(LocusError) { try send(raw) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }
}

@available(*, unavailable, message: "one thread owns a UDPSender")
extension UDPSender: Sendable {}
