import Glibc
import LocusCore

/// A bound IPv4 UDP socket that `locus stream --input udp://HOST:PORT` reads datagrams from.
///
/// One consumer thread calls `receive(into:timeoutMilliseconds:)` in a loop with a buffer it owns
/// (64 KiB holds any UDP datagram); nothing is allocated per datagram. A datagram larger than the
/// buffer is cut and counted in `truncatedDatagramCount`. The kernel's receive buffer is asked for
/// `requestedReceiveBufferBytes` (8 MiB by default) so bursts wait in the kernel, not on the wire;
/// `receiveBufferBytes` says what was granted. The socket closes in `close()` or `deinit`.
///
/// Not `Sendable`: its counters are the consumer's, unsynchronised.
final class UDPReceiver {
    /// What one `receive` call got.
    enum Reception: Sendable, Equatable {
        /// A whole datagram of `byteCount` bytes is at the start of the buffer.
        case datagram(byteCount: Int)
        /// A datagram of `datagramByteCount` bytes was larger than the buffer: its first
        /// `receivedByteCount` bytes (the buffer's size) are in the buffer, the rest is lost.
        case truncated(receivedByteCount: Int, datagramByteCount: Int)
        /// Nothing arrived within the timeout (or a signal interrupted the wait: check your flags).
        case timeout
    }

    /// The receive buffer asked for by default: 8 MiB (≈ 0.5 s of 10,000 tags × 4 Hz of 4-range rows
    /// of ~40 bytes, with room to spare).
    static let standardReceiveBufferBytes = 8 * 1024 * 1024

    /// The port the socket is bound to (the chosen one when 0 was asked for).
    let port: UInt16
    /// The host the socket is bound to, as given.
    let host: String
    /// True when the host resolved to 0.0.0.0 (INADDR_ANY: `0.0.0.0`, `0`): the socket takes
    /// datagrams from every interface, so any host that can reach this machine can send rows
    /// (`locus stream` warns).
    let listensOnEveryInterface: Bool
    /// The kernel's receive buffer in bytes as `getsockopt(SO_RCVBUF)` reports it (Linux reports
    /// twice the usable payload space, for its bookkeeping; capped by `net.core.rmem_max` unless the
    /// process may use `SO_RCVBUFFORCE`).
    let receiveBufferBytes: Int
    /// Datagrams received, truncated ones included.
    private(set) var datagramCount = 0
    /// Datagrams larger than the caller's buffer (cut to the buffer's size).
    private(set) var truncatedDatagramCount = 0
    /// Payload bytes received (as delivered into the buffers).
    private(set) var byteCount = 0

    private var descriptor: Int32

    /// Binds a UDP socket to `host` (an IPv4 literal such as `127.0.0.1`, or a name) and `port`
    /// (0: any free port, then read `port`), asking for a receive buffer of
    /// `requestedReceiveBufferBytes`.
    ///
    /// - Throws: `LocusError` `E5008` when the host does not resolve or the socket cannot be created
    ///   or bound (port in use, address not local), naming `udp://host:port` and the reason.
    init(host: String = "127.0.0.1", port: UInt16,
                 requestedReceiveBufferBytes: Int = UDPReceiver.standardReceiveBufferBytes) throws(LocusError) {
        let uri = "udp://\(host):\(port)"
        let address = try IPv4Address.socketAddress(host: host, port: port)
        listensOnEveryInterface = address.sin_addr.s_addr == 0
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw LocusError(.networkUnavailable, "cannot create a UDP socket for \(uri): \(IPv4Address.errnoText())")
        }
        var requested = Int32(clamping: requestedReceiveBufferBytes)
        let size = socklen_t(MemoryLayout<Int32>.size)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &requested, size)
        var granted: Int32 = 0
        var grantedSize = size
        getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &grantedSize)
        if Int(granted) < 2 * Int(requested) {
            // Above net.core.rmem_max only with CAP_NET_ADMIN; without it this fails and the grant stays.
            if setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &requested, size) == 0 {
                getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &grantedSize)
            }
        }
        let port = try IPv4Address.bind(fd, to: address, naming: uri)
        self.descriptor = fd
        self.host = host
        self.port = port
        self.receiveBufferBytes = Int(granted)
    }

    deinit { close() }

    /// Closes the socket; later `receive` calls throw. Safe to call twice.
    func close() {
        if descriptor >= 0 {
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
    }

    /// Receives one datagram into `buffer`, waiting at most `timeoutMilliseconds` (0: do not wait;
    /// negative: no limit) for one to arrive.
    ///
    /// Tries `recv` first and only `poll`s when nothing is queued, so under load one system call
    /// per datagram. `MSG_TRUNC` makes a datagram larger than the buffer visible as `.truncated`.
    ///
    /// - Throws: `LocusError` `E5008` on a socket error, or when the receiver is closed.
    func receive(into buffer: inout [UInt8], timeoutMilliseconds: Int) throws(LocusError) -> Reception {
        try buffer.withUnsafeMutableBytes { raw in
            Result { () throws(LocusError) in try receive(into: raw, timeoutMilliseconds: timeoutMilliseconds) }
        }.get()
    }

    /// `receive(into:timeoutMilliseconds:)` into the bytes of `buffer`.
    /// - Throws: as `receive(into:timeoutMilliseconds:)`.
    func receive(into buffer: UnsafeMutableRawBufferPointer, timeoutMilliseconds: Int) throws(LocusError) -> Reception {
        guard descriptor >= 0 else { throw LocusError(.networkUnavailable, "udp://\(host):\(port) is closed") }
        var waited = false
        while true {
            let length = recv(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT | MSG_TRUNC))
            if length >= 0 {
                datagramCount += 1
                if length > buffer.count {
                    truncatedDatagramCount += 1
                    byteCount += buffer.count
                    return .truncated(receivedByteCount: buffer.count, datagramByteCount: length)
                }
                byteCount += length
                return .datagram(byteCount: length)
            }
            let code = errno
            if code == EINTR { continue }
            guard code == EAGAIN || code == EWOULDBLOCK else {
                throw LocusError(.networkUnavailable, "receiving on udp://\(host):\(port) failed: \(IPv4Address.errnoText(code))")
            }
            if waited || timeoutMilliseconds == 0 { return .timeout }
            var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&request, 1, Int32(clamping: timeoutMilliseconds))
            if ready == 0 || (ready < 0 && errno == EINTR) { return .timeout }
            guard ready > 0 else {
                throw LocusError(.networkUnavailable, "waiting on udp://\(host):\(port) failed: \(IPv4Address.errnoText())")
            }
            waited = true
        }
    }
}

@available(*, unavailable, message: "one consumer thread owns a UDPReceiver")
extension UDPReceiver: Sendable {}
