import Glibc
import LocusCore

/// IPv4 socket addresses for the UDP endpoints: a dotted literal taken as it is, a name resolved
/// with `getaddrinfo` (IPv4 only).
enum IPv4Address {
    /// `host:port` as a `sockaddr_in`.
    ///
    /// - Throws: `LocusError` `E5008` when the host is neither an IPv4 literal nor a name that resolves
    ///   to one.
    static func socketAddress(host: String, port: UInt16) throws(LocusError) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        if inet_pton(AF_INET, host, &address.sin_addr) == 1 { return address }
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &result)
        defer { if let result { freeaddrinfo(result) } }
        guard status == 0, let first = result, let socketAddress = first.pointee.ai_addr else {
            throw LocusError(.networkUnavailable, "cannot resolve '\(host)' to an IPv4 address: \(String(cString: gai_strerror(status)))")
        }
        socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address.sin_addr = $0.pointee.sin_addr }
        return address
    }

    /// The text of `errno` (`strerror`).
    static func errnoText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
