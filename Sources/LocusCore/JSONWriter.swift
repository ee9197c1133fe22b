/// Writes `JSONValue` trees as deterministic UTF-8 bytes: keys in the given order, strings escaped per
/// RFC 8259, numbers exactly as their literal (see `JSONNumberFormat`), no trailing newline.
///
/// Escaping: `"` → `\"`, `\` → `\\`, U+0008/0009/000A/000C/000D → `\b \t \n \f \r`, other
/// control characters below U+0020 → `\u00XX` (upper-case hex); everything else, `/` and non-ASCII
/// included, is written as its UTF-8 bytes. Complexity O(output size).
package struct JSONWriter: Sendable {
    /// Layout of the output.
    package enum Style: Sendable, Hashable {
        /// No whitespace at all: `{"a":1,"b":[1,2]}`.
        case compact
        /// One line with a space after `:` and `,` — the JSON Lines style of SPEC §3:
        /// `{"t": 12.250, "tag": "T1"}`.
        case line
        /// Indented by `indent` spaces per level, one member or element per line; a container holding
        /// only scalars whose `.line` form fits in `inlineWidth` bytes stays on one line
        /// (`{"x": 0, "y": 0}`). Empty containers are `{}` and `[]`.
        case pretty(indent: Int, inlineWidth: Int)

        /// Pretty with 2 spaces and containers of scalars inline up to 100 bytes.
        package static let pretty = Style.pretty(indent: 2, inlineWidth: 100)
    }

    /// The layout this writer produces.
    var style: Style

    /// A writer with the given layout.
    package init(style: Style) {
        self.style = style
    }

    /// The value's bytes in this writer's style.
    package func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        write(value, level: 0, into: &out)
        return out
    }

    /// Appends the value in this writer's style and then `\n` to `out` — one JSON Lines record
    /// (use `.line` or `.compact` style). Lets a sink fill one buffer with many records.
    package func appendLine(_ value: JSONValue, to out: inout [UInt8]) {
        write(value, level: 0, into: &out)
        out.append(UInt8(ascii: "\n"))
    }

    /// The value's text in this writer's style.
    package func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    private func write(_ value: JSONValue, level: Int, into out: inout [UInt8]) {
        switch value.kind {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): out.append(contentsOf: number.literal.utf8)
        case .string(let text): Self.appendEscaped(text, to: &out)
        case .array(let elements):
            writeContainer(open: UInt8(ascii: "["), close: UInt8(ascii: "]"), count: elements.count,
                           isFlat: elements.allSatisfy(\.isScalar), level: level, into: &out) { i, out in
                write(elements[i], level: level + 1, into: &out)
            }
        case .object(let members):
            writeContainer(open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), count: members.count,
                           isFlat: members.allSatisfy(\.value.isScalar), level: level, into: &out) { i, out in
                Self.appendEscaped(members[i].key, to: &out)
                out.append(UInt8(ascii: ":"))
                if style != .compact { out.append(UInt8(ascii: " ")) }
                write(members[i].value, level: level + 1, into: &out)
            }
        }
    }

    private func writeContainer(open: UInt8, close: UInt8, count: Int, isFlat: Bool, level: Int,
                                into out: inout [UInt8], element: (Int, inout [UInt8]) -> Void) {
        out.append(open)
        defer { out.append(close) }
        guard count > 0 else { return }
        switch style {
        case .compact, .line:
            for i in 0..<count {
                if i > 0 {
                    out.append(UInt8(ascii: ","))
                    if style == .line { out.append(UInt8(ascii: " ")) }
                }
                element(i, &out)
            }
        case .pretty(let indent, let inlineWidth):
            if isFlat {
                // Try the one-line form; keep it when it fits.
                let mark = out.count
                for i in 0..<count {
                    if i > 0 { out.append(contentsOf: ", ".utf8) }
                    element(i, &out)
                }
                if out.count - mark + 2 <= inlineWidth { return }
                out.removeSubrange(mark...)
            }
            for i in 0..<count {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "\n"))
                out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * (level + 1)))
                element(i, &out)
            }
            out.append(UInt8(ascii: "\n"))
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * level))
        }
    }

    /// Appends `text` as a JSON string literal with the escapes listed on the type.
    package static func appendEscaped(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
            case 0x08: out.append(contentsOf: "\\b".utf8)
            case 0x09: out.append(contentsOf: "\\t".utf8)
            case 0x0A: out.append(contentsOf: "\\n".utf8)
            case 0x0C: out.append(contentsOf: "\\f".utf8)
            case 0x0D: out.append(contentsOf: "\\r".utf8)
            case 0..<0x20:
                let hexDigits = Array("0123456789ABCDEF".utf8)
                out.append(contentsOf: "\\u00".utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue {
    /// True for null, booleans, numbers and strings.
    var isScalar: Bool {
        switch kind {
        case .null, .bool, .number, .string: true
        case .array, .object: false
        }
    }
}
