/// A strict RFC 8259 parser from UTF-8 bytes to a `JSONValue` tree, with the line and column of
/// every value. Our own, so that errors can name line and column and numbers keep their literal text.
///
/// Accepts one value surrounded by optional whitespace, with an optional UTF-8 byte-order mark.
/// Strings are validated as UTF-8; `\uXXXX` escapes combine surrogate pairs, and a lone surrogate is
/// an error. Nesting deeper than `maximumDepth` is an error, so no input can exhaust the stack.
/// Numbers that overflow a Double (`1e999`) parse to ±infinity (the grammar allows them); the site
/// decoder rejects them. Complexity O(n) in the input length.
package struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    static let maximumDepth = 256

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var column = 1
    private var depth = 0

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses one JSON text.
    /// - Throws: `LocusError` `.malformedJSON` (E5002) with `context.line`/`column` of the offending
    ///   character and a message saying what was expected there.
    package static func parse(_ bytes: [UInt8]) throws(LocusError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        if parser.index < bytes.count {
            throw parser.error("unexpected \(parser.describeCurrent()) after the JSON value")
        }
        return value
    }

    // MARK: - Cursor

    private var position: JSONPosition { JSONPosition(line: line, column: column) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func advance() {
        let byte = bytes[index]
        index += 1
        if byte == UInt8(ascii: "\n") {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1
        }
    }

    private mutating func skipWhitespace() {
        while let byte = current,
              byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
            advance()
        }
    }

    private func error(_ message: String, at place: JSONPosition? = nil) -> LocusError {
        let where_ = place ?? position
        return LocusError(.malformedJSON, message, context: .init(line: where_.line, column: where_.column))
    }

    private func describeCurrent() -> String {
        guard let byte = current else { return "end of input" }
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x" + (hex.count < 2 ? "0" : "") + hex
    }

    // MARK: - Values

    private mutating func parseValue() throws(LocusError) -> JSONValue {
        let start = position
        guard let byte = current else { throw error("expected a value, found end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return JSONValue(.string(try parseString()), position: start)
        case UInt8(ascii: "t"): try expectWord("true"); return JSONValue(.bool(true), position: start)
        case UInt8(ascii: "f"): try expectWord("false"); return JSONValue(.bool(false), position: start)
        case UInt8(ascii: "n"): try expectWord("null"); return JSONValue(.null, position: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONValue(.number(try parseNumber()), position: start)
        default:
            throw error("expected a value, found \(describeCurrent())")
        }
    }

    private mutating func expectWord(_ word: StaticString) throws(LocusError) {
        let start = position
        let text = word.withUTF8Buffer { Array($0) }
        for expected in text {
            guard current == expected else {
                throw error("invalid literal, expected '\(word)'", at: start)
            }
            advance()
        }
    }

    private mutating func enterNesting() throws(LocusError) {
        depth += 1
        if depth > Self.maximumDepth {
            throw error("nesting deeper than \(Self.maximumDepth) levels")
        }
    }

    private mutating func parseObject() throws(LocusError) -> JSONValue {
        let start = position
        try enterNesting()
        advance() // {
        var members: [JSONValue.Member] = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            advance()
            depth -= 1
            return JSONValue(.object(members), position: start)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else {
                throw error("expected a member name in double quotes, found \(describeCurrent())")
            }
            let keyPosition = position
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else {
                throw error("expected ':' after member name, found \(describeCurrent())")
            }
            advance()
            skipWhitespace()
            let value = try parseValue()
            members.append(JSONValue.Member(key: key, value: value, keyPosition: keyPosition))
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                advance()
                continue
            }
            if current == UInt8(ascii: "}") {
                advance()
                depth -= 1
                return JSONValue(.object(members), position: start)
            }
            throw error("expected ',' or '}', found \(describeCurrent())")
        }
    }

    private mutating func parseArray() throws(LocusError) -> JSONValue {
        let start = position
        try enterNesting()
        advance() // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            advance()
            depth -= 1
            return JSONValue(.array(elements), position: start)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                advance()
                continue
            }
            if current == UInt8(ascii: "]") {
                advance()
                depth -= 1
                return JSONValue(.array(elements), position: start)
            }
            throw error("expected ',' or ']', found \(describeCurrent())")
        }
    }

    // MARK: - Strings

    private mutating func parseString() throws(LocusError) -> String {
        let start = position
        advance() // opening quote
        var utf8: [UInt8] = []
        while true {
            guard let byte = current else { throw error("unterminated string (it starts at line \(start.line), column \(start.column))") }
            switch byte {
            case UInt8(ascii: "\""):
                advance()
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    throw error("string is not valid UTF-8", at: start)
                }
                return text
            case UInt8(ascii: "\\"):
                advance()
                try parseEscape(into: &utf8)
            case UInt8(ascii: "\n"):
                throw error("string not terminated before the end of the line (it starts at column \(start.column))")
            case 0..<0x20:
                throw error("control character \(describeCurrent()) in a string must be escaped")
            default:
                utf8.append(byte)
                advance()
            }
        }
    }

    private mutating func parseEscape(into utf8: inout [UInt8]) throws(LocusError) {
        guard let byte = current else { throw error("unterminated escape sequence") }
        let simple: UInt8?
        switch byte {
        case UInt8(ascii: "\""): simple = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): simple = UInt8(ascii: "\\")
        case UInt8(ascii: "/"): simple = UInt8(ascii: "/")
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"): simple = nil
        default: throw error("invalid escape sequence '\\\(describeCurrent())'")
        }
        if let simple {
            utf8.append(simple)
            advance()
            return
        }
        let escapeStart = JSONPosition(line: line, column: column - 1)
        advance() // u
        let first = try parseHex4()
        var scalarValue = UInt32(first)
        if (0xD800...0xDBFF).contains(first) {
            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                throw error("high surrogate \\u\(hex4(first)) is not followed by a low surrogate", at: escapeStart)
            }
            advance(); advance()
            let second = try parseHex4()
            guard (0xDC00...0xDFFF).contains(second) else {
                throw error("high surrogate \\u\(hex4(first)) is followed by \\u\(hex4(second)), not a low surrogate", at: escapeStart)
            }
            scalarValue = 0x10000 + ((UInt32(first) - 0xD800) << 10) + (UInt32(second) - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(first) {
            throw error("lone low surrogate \\u\(hex4(first))", at: escapeStart)
        }
        guard let scalar = Unicode.Scalar(scalarValue) else {
            throw error("invalid Unicode escape", at: escapeStart)
        }
        utf8.append(contentsOf: String(Character(scalar)).utf8)
    }

    private mutating func parseHex4() throws(LocusError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw error("expected 4 hex digits after \\u, found end of input") }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("expected 4 hex digits after \\u, found \(describeCurrent())")
            }
            value = value << 4 | UInt16(digit)
            advance()
        }
        return value
    }

    private func hex4(_ value: UInt16) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    // MARK: - Numbers

    private mutating func parseNumber() throws(LocusError) -> JSONNumber {
        let startIndex = index
        let start = position
        if current == UInt8(ascii: "-") { advance() }
        guard let first = current, isDigit(first) else {
            throw error("expected a digit, found \(describeCurrent())")
        }
        advance()
        if first == UInt8(ascii: "0"), let next = current, isDigit(next) {
            throw error("a number must not have a leading zero", at: start)
        }
        skipDigits()
        if current == UInt8(ascii: ".") {
            advance()
            guard let next = current, isDigit(next) else {
                throw error("expected a digit after the decimal point, found \(describeCurrent())")
            }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            advance()
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { advance() }
            guard let next = current, isDigit(next) else {
                throw error("expected a digit in the exponent, found \(describeCurrent())")
            }
            skipDigits()
        }
        let literal = String(decoding: bytes[startIndex..<index], as: UTF8.self)
        // Double(_:) returns ±infinity on overflow; the grammar above guarantees it parses.
        let value = Double(literal) ?? (literal.hasPrefix("-") ? -Double.infinity : Double.infinity)
        return JSONNumber(literal: literal, value: value)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { advance() }
    }
}
