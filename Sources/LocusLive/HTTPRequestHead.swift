/// The head of one HTTP/1.x request as `HTTPServer` accepts it: `GET` or `HEAD`, an origin-form
/// target, no body. A pure, bounded parser (no I/O, no allocation beyond the result), so every
/// refusal is unit-tested without a socket.
///
/// Strict on purpose — a read-only server for one page needs nothing more, and every lenience is
/// surface: lines end with CRLF; the request line is `METHOD SP target SP HTTP/1.d`; header names
/// are tokens with no space before the colon; obsolete line folding, control characters, a second
/// `Host`, a `Transfer-Encoding` or a `Content-Length` other than 0 are refused.
struct HTTPRequestHead: Sendable, Equatable {
    /// The methods served.
    enum Method: String, Sendable, Equatable {
        case get = "GET"
        case head = "HEAD"
    }

    /// Why a head was refused, as the status the server answers with.
    enum Refusal: Error, Sendable, Equatable {
        /// 400: malformed, a body announced, or no `Host` under HTTP/1.1.
        case badRequest
        /// 405: a well-formed request with a method other than GET and HEAD.
        case methodNotAllowed
        /// 414: a target longer than `maximumTargetBytes`.
        case uriTooLong

        /// The status code.
        var status: Int {
            switch self {
            case .badRequest: 400
            case .methodNotAllowed: 405
            case .uriTooLong: 414
            }
        }
    }

    /// The longest request head accepted, request line and headers and the blank line: 8 KiB (more
    /// is 431, decided by the server while reading).
    static let maximumHeadBytes = 8 * 1024
    /// The longest target accepted: 1 KiB (the page's paths are a few dozen bytes).
    static let maximumTargetBytes = 1024

    var method: Method
    /// The request target as sent (origin form, starting with `/`, query included).
    var target: String
    /// The minor version of `HTTP/1.x` (0 or 1, any digit accepted).
    var minorVersion: Int
    /// The `Host` header's value (trimmed), if any.
    var host: String?
    /// The `Last-Event-ID` header's value (trimmed), if any.
    var lastEventID: String?

    /// The target without its query (`?…`), which is what resources are routed by.
    var path: Substring {
        if let question = target.firstIndex(of: "?") { return target[..<question] }
        return target[...]
    }

    /// The byte count of the head at the start of `bytes` — through the blank line (`\r\n\r\n`) —
    /// or nil while it is incomplete. `searchFrom` lets a caller that appends resume the search.
    static func headLength(in bytes: [UInt8], searchFrom: Int = 0) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = max(0, searchFrom - 3)
        while index + 3 < bytes.count {
            if bytes[index] == 0x0D && bytes[index + 1] == 0x0A && bytes[index + 2] == 0x0D && bytes[index + 3] == 0x0A {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    /// Parses a complete head (`headLength(in:)` bytes, ending with the blank line).
    ///
    /// - Throws: `Refusal`: `.uriTooLong` for a target over 1 KiB, `.methodNotAllowed` for a
    ///   well-formed request with another method, `.badRequest` for everything else that is wrong.
    init(parsing head: ArraySlice<UInt8>) throws(Refusal) {
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        var index = head.startIndex
        while index < head.endIndex {
            if head[index] == 0x0D {
                guard index + 1 < head.endIndex, head[index + 1] == 0x0A else { throw .badRequest }
                lines.append(head[start..<index])
                index += 2
                start = index
            } else if head[index] == 0x0A {
                throw .badRequest  // a bare LF
            } else {
                index += 1
            }
        }
        guard start == head.endIndex, lines.count >= 2, lines.last?.isEmpty == true else { throw .badRequest }
        lines.removeLast()

        // Request line: METHOD SP target SP HTTP/1.d
        let requestLine = lines[0]
        let parts = requestLine.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(Self.isTokenByte) else { throw .badRequest }
        let version = Array(parts[2])
        guard version.count == 8, version[0..<7].elementsEqual("HTTP/1.".utf8), (0x30...0x39).contains(version[7]) else {
            throw .badRequest
        }
        let targetBytes = parts[1]
        guard !targetBytes.isEmpty, targetBytes.allSatisfy({ (0x21...0x7E).contains($0) }) else { throw .badRequest }
        guard targetBytes.count <= Self.maximumTargetBytes else { throw .uriTooLong }
        guard let method = Method(rawValue: String(decoding: parts[0], as: UTF8.self)) else { throw .methodNotAllowed }
        guard targetBytes.first == 0x2F, !targetBytes.contains(0x23) else { throw .badRequest }  // '/', no '#'

        var host: String?
        var lastEventID: String?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex else { throw .badRequest }
            let name = line[line.startIndex..<colon]
            guard name.allSatisfy(Self.isTokenByte) else { throw .badRequest }  // also no folding, no space before ':'
            var value = line[(colon + 1)...]
            guard value.allSatisfy({ $0 == 0x09 || (0x20...0x7E).contains($0) || $0 >= 0x80 }) else { throw .badRequest }
            while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
            while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
            let text = String(decoding: value, as: UTF8.self)
            switch String(decoding: name, as: UTF8.self).lowercased() {
            case "host":
                guard host == nil else { throw .badRequest }
                host = text
            case "last-event-id":
                lastEventID = text
            case "content-length":
                guard !value.isEmpty, value.allSatisfy({ $0 == 0x30 }) else { throw .badRequest }  // a body, or not a number
            case "transfer-encoding":
                throw .badRequest
            default:
                break
            }
        }
        let minor = Int(version[7] - 0x30)
        if minor >= 1 && host == nil { throw .badRequest }
        self.method = method
        self.target = String(decoding: targetBytes, as: UTF8.self)
        self.minorVersion = minor
        self.host = host
        self.lastEventID = lastEventID
    }

    /// True when `host` (a `Host` header value) names this machine's loopback interface as a
    /// browser would write it — `127.0.0.1`, `localhost` (any case) or `[::1]`, each with an optional
    /// decimal port — or is `boundHost` itself (with an optional port). A page reached through
    /// another name (DNS rebinding: `evil.example` resolving to 127.0.0.1) sends that name and is
    /// refused. Any port is accepted, so an SSH tunnel to another local port still works.
    static func isLoopbackHost(_ host: String, boundHost: String) -> Bool {
        var name = Substring(host)
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            let rest = name[name.index(after: close)...]
            guard rest.isEmpty || Self.isPortSuffix(rest) else { return false }
            name = name[...close]
        } else if let colon = name.firstIndex(of: ":") {
            guard Self.isPortSuffix(name[colon...]) else { return false }
            name = name[..<colon]
        }
        let lowered = name.lowercased()
        return lowered == "127.0.0.1" || lowered == "localhost" || lowered == "[::1]" || lowered == boundHost.lowercased()
    }

    /// `:` followed by 1 to 5 decimal digits.
    private static func isPortSuffix(_ text: Substring) -> Bool {
        let digits = text.dropFirst()
        return text.first == ":" && (1...5).contains(digits.count) && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// A byte of an RFC 9110 token (`tchar`).
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: true
        default: false
        }
    }
}
