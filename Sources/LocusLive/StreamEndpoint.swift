import LocusCore

/// Where `locus stream` reads ranges from or writes positions and events to, parsed from its
/// `--input`/`--output` URI.
///
/// | URI | input | output |
/// |---|---|---|
/// | `-` | standard input | standard output |
/// | `udp://HOST:PORT` | datagrams to an IPv4 address (port 0: any free port) | — (an error) |
/// | `mqtt://HOST:PORT/TOPIC` | subscribe to the topic filter `TOPIC` (may contain `/`, `+`, `#`) | publish under the prefix `TOPIC` |
///
/// The port is required (1…65535; `udp` also accepts 0). There is no user name, password, query or
/// fragment part, and no IPv6 literal; `mqtts`, `tcp`, `file` and other schemes are rejected.
package enum StreamEndpoint: Sendable, Equatable {
    /// `-`: standard input (for `--input`) or standard output (for `--output`).
    case standardStream
    /// `udp://HOST:PORT`: a UDP socket bound to `host` (IPv4 address or name) and `port` (input only).
    case udp(host: String, port: UInt16)
    /// `mqtt://HOST:PORT/TOPIC`: a broker and a topic — a filter for input, a prefix for output.
    case mqtt(host: String, port: UInt16, topic: String)

    /// Which side of the command an endpoint is for: the rules differ (UDP only in, wildcards only in).
    package enum Direction: Sendable, Equatable {
        /// `--input`: ranges come from here.
        case input
        /// `--output`: positions and events go here.
        case output
    }

    /// The URI as given back in messages.
    package var description: String {
        switch self {
        case .standardStream: return "-"
        case .udp(let host, let port): return "udp://\(host):\(port)"
        case .mqtt(let host, let port, let topic): return "mqtt://\(host):\(port)/\(topic)"
        }
    }

    /// Parses `text` as an endpoint for `direction`.
    ///
    /// - Throws: `LocusError` `E1001` (usage: `locus` exits 2) naming the URI and what is wrong:
    ///   an unknown scheme, a missing or invalid host or port, an empty topic, a malformed topic
    ///   filter (`+`/`#` not a whole level, `#` not last), a wildcard in an output prefix, a prefix
    ///   ending in `/`, or `udp://` as an output.
    package init(parsing text: String, as direction: Direction) throws(LocusError) {
        let side = direction == .input ? "input" : "output"
        func failure(_ why: String) -> LocusError {
            LocusError(.usage, "invalid \(side) URI '\(text)': \(why)")
        }
        if text == "-" {
            self = .standardStream
            return
        }
        guard let schemeEnd = text.firstRange(of: "://") else {
            throw failure("expected '-', udp://HOST:PORT or mqtt://HOST:PORT/TOPIC")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        let rest = text[schemeEnd.upperBound...]
        switch scheme {
        case "udp":
            guard direction == .input else {
                throw failure("udp:// is an input only; write to '-' or mqtt://HOST:PORT/PREFIX")
            }
            if let slash = rest.firstIndex(of: "/"), rest[slash...] != "/" {
                throw failure("a udp:// URI has no path")
            }
            let authority = rest.hasSuffix("/") ? rest.dropLast() : rest
            let (host, port) = try Self.hostAndPort(authority, allowsZero: true, failure: failure)
            self = .udp(host: host, port: port)
        case "mqtt":
            guard let slash = rest.firstIndex(of: "/") else {
                throw failure(direction == .input ? "no topic: expected mqtt://HOST:PORT/TOPIC"
                                                  : "no topic prefix: expected mqtt://HOST:PORT/PREFIX")
            }
            let (host, port) = try Self.hostAndPort(rest[..<slash], allowsZero: false, failure: failure)
            let topic = String(rest[rest.index(after: slash)...])
            guard !topic.isEmpty else {
                throw failure(direction == .input ? "the topic is empty" : "the topic prefix is empty")
            }
            if let problem = direction == .input ? Self.topicFilterProblem(topic) : Self.topicPrefixProblem(topic) {
                throw failure(problem)
            }
            self = .mqtt(host: host, port: port, topic: topic)
        default:
            throw failure("unknown scheme '\(scheme)' (expected '-', udp:// or mqtt://)")
        }
    }

    /// `HOST:PORT` split and checked: a host without `@`, `[`, `]` or spaces, a decimal port.
    private static func hostAndPort(_ authority: Substring, allowsZero: Bool,
                                    failure: (String) -> LocusError) throws(LocusError) -> (String, UInt16) {
        guard let colon = authority.lastIndex(of: ":") else { throw failure("missing port (HOST:PORT)") }
        let host = authority[..<colon]
        let portText = authority[authority.index(after: colon)...]
        guard !host.isEmpty else { throw failure("missing host") }
        if host.contains(where: { $0 == "@" || $0 == "[" || $0 == "]" || $0 == ":" || $0 == " " || $0 == "/" }) {
            throw failure("invalid host '\(host)' (no user name, password or IPv6 literal)")
        }
        guard !portText.isEmpty else { throw failure("missing port (HOST:PORT)") }
        let lowest = allowsZero ? 0 : 1
        guard portText.allSatisfy({ $0.isASCII && $0.isNumber }), portText.count <= 5,
              let value = Int(portText), value >= lowest, value <= 65_535, let port = UInt16(exactly: value) else {
            throw failure("invalid port '\(portText)' (expected \(lowest)…65535)")
        }
        return (String(host), port)
    }

    /// Why `filter` is not a valid MQTT topic filter, or nil: `+` and `#` must fill a whole level,
    /// `#` must be the last level; no NUL.
    private static func topicFilterProblem(_ filter: String) -> String? {
        if filter.contains("\u{0}") { return "the topic contains a NUL character" }
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("#") && (level != "#" || index != levels.count - 1) {
                return "'#' must be a whole topic level and the last one"
            }
            if level.contains("+") && level != "+" {
                return "'+' must be a whole topic level"
            }
        }
        return nil
    }

    /// Why `prefix` is not a valid output topic prefix, or nil: no wildcards, no trailing `/`, no NUL.
    private static func topicPrefixProblem(_ prefix: String) -> String? {
        if prefix.contains("\u{0}") { return "the topic prefix contains a NUL character" }
        if prefix.contains("+") || prefix.contains("#") { return "an output topic prefix must not contain '+' or '#'" }
        if prefix.hasSuffix("/") { return "the topic prefix must not end with '/'" }
        return nil
    }
}
