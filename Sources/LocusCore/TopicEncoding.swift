/// How a tag id becomes one MQTT topic level (issue #41 item 2: ids are data, never syntax).
///
/// Encoding: the id's UTF-8 bytes, each byte outside the unreserved set `A–Z a–z 0–9 . _ ~ -`
/// written as `%` and two upper-case hex digits (RFC 3986 percent-encoding applied to every other
/// byte, `%` itself included). So `/` (`%2F`), `+` (`%2B`), `#` (`%23`), `%` (`%25`), NUL, spaces
/// and every non-ASCII byte are escaped, and the level holds printable ASCII only: whatever a
/// sender names its tag, its messages go to exactly `PREFIX/tags/<level>/position|zone`, never
/// into another tag's subtree or a wildcard. Plain ids (`T1`, `tag-7`, `badge_12.a`) are unchanged.
///
/// Decoding (for subscribers): replace each `%XY` by the byte 0xXY, keep every other byte, read
/// the bytes as UTF-8 — `decode(_:)`. The encoding is reversible: decode(level(id)) == id.
///
/// Length: an id holds at most 128 bytes (`TagIDRule`), so a level at most 384 bytes.
///
/// `shown(_:)` is how every message shows an id (the stream's publish failure, the C ABI's errors):
/// the same escaping, cut to 40 characters — no message prints a whole id.
package enum TopicEncoding {
    /// The topic level for `id`.
    package static func level(_ id: String) -> String {
        var unchanged = true
        for b in id.utf8 where !isUnreserved(b) { unchanged = false; break }
        if unchanged { return id }  // the common case: no copy of the bytes
        var out: [UInt8] = []
        out.reserveCapacity(id.utf8.count * 3)
        for b in id.utf8 { append(b, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The id a level encodes; nil when it is not a valid encoding (a `%` without two hex digits, an
    /// unescaped byte outside the unreserved set, or bytes that are not UTF-8).
    static func decode(_ level: String) -> String? {
        var bytes: [UInt8] = []
        var it = Array(level.utf8)[...]
        while let b = it.popFirst() {
            if b == UInt8(ascii: "%") {
                guard let h = it.popFirst().flatMap(hexValue), let l = it.popFirst().flatMap(hexValue) else { return nil }
                bytes.append(h << 4 | l)
            } else {
                guard isUnreserved(b) else { return nil }
                bytes.append(b)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// An id as messages may show it: encoded the same way (so no control character, newline or
    /// escape sequence reaches a log) and cut to at most 40 characters, the cut marked with `…`.
    package static func shown(_ id: String) -> String {
        let limit = 40
        var out: [UInt8] = []
        for b in id.utf8 {
            let before = out.count
            append(b, to: &out)
            if out.count > limit - 1 {
                out.removeSubrange(before...)
                return String(decoding: out, as: UTF8.self) + "…"
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    @inline(__always)
    private static func isUnreserved(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39)
            || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "~") || b == UInt8(ascii: "-")
    }

    private static func append(_ b: UInt8, to out: inout [UInt8]) {
        if isUnreserved(b) { out.append(b); return }
        let hex = Array("0123456789ABCDEF".utf8)
        out.append(UInt8(ascii: "%"))
        out.append(hex[Int(b >> 4)])
        out.append(hex[Int(b & 0x0F)])
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        default: return nil  // upper case only: one spelling per id
        }
    }
}
