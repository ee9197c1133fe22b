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

    /// Binds `descriptor` to `address` and returns the local port it got (the chosen one for port 0).
    /// On failure the descriptor is closed and `E5008` names `uri` and `errno`'s text.
    static func bind(_ descriptor: Int32, to address: sockaddr_in, naming uri: String) throws(LocusError) -> UInt16 {
        var address = address
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let reason = errnoText()
            _ = Glibc.close(descriptor)
            throw LocusError(.networkUnavailable, "cannot bind \(uri): \(reason)")
        }
        var local = sockaddr_in()
        var localSize = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &localSize) }
        }
        return UInt16(bigEndian: local.sin_port)
    }

    /// The text of `errno` (`strerror`).
    static func errnoText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
