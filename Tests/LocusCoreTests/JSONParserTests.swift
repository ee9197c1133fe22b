@testable import LocusCore
import Testing

@Suite("JSON parser")
struct JSONParserTests {
    private func parse(_ text: String) throws(LocusError) -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    private func parseError(_ text: String) -> LocusError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test("object members keep document order, and nested values remember line and column")
    func orderAndPositions() throws {
        let value = try parse("{\"b\": 1,\n  \"a\": [true, null],\n  \"c\": \"x\"}")
        guard case .object(let members) = value.kind else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["b", "a", "c"])
        #expect(value.position == JSONPosition(line: 1, column: 1))
        #expect(members[1].keyPosition == JSONPosition(line: 2, column: 3))
        #expect(members[1].value.position == JSONPosition(line: 2, column: 8))
        guard case .array(let elements) = members[1].value.kind else {
            Issue.record("not an array")
            return
        }
        #expect(elements[1].position == JSONPosition(line: 2, column: 15))
        #expect(elements == [.bool(true), .null])
        #expect(members[2].value == .string("x"))
    }

    @Test("numbers keep their literal text, so big integers round-trip exactly")
    func numberLiterals() throws {
        let value = try parse("[40407, -0, 9007199254740993, 2.50, 1E3, 1e999, -1e999]")
        guard case .array(let elements) = value.kind else {
            Issue.record("not an array")
            return
        }
        let numbers = elements.compactMap { element -> JSONNumber? in
            if case .number(let number) = element.kind { return number }
            return nil
        }
        #expect(numbers.map(\.literal) == ["40407", "-0", "9007199254740993", "2.50", "1E3", "1e999", "-1e999"])
        #expect(numbers[0].integerValue == 40407)
        #expect(numbers[0].isIntegerLiteral)
        #expect(numbers[2].integerValue == 9_007_199_254_740_993) // beyond 2^53: from the text, not the Double
        #expect(numbers[3].value == 2.5)
        #expect(numbers[3].integerValue == nil)
        #expect(numbers[4].integerValue == 1000)
        #expect(numbers[5].value == .infinity)
        #expect(numbers[6].value == -.infinity)
        #expect(numbers[5].integerValue == nil)
    }

    @Test("string escapes decode, including surrogate pairs and raw UTF-8")
    func stringEscapes() throws {
        let value = try parse(#""a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\uD83D\uDE00 Grüße""#)
        #expect(value == .string("a\"b\\c/d\u{8}\u{C}\n\r\tAé😀 Grüße"))
    }

    @Test("columns count Unicode scalars, not bytes")
    func columnsCountScalars() {
        let error = parseError("[\"Grüße\", x]")
        #expect(error?.context.line == 1)
        #expect(error?.context.column == 11)
    }

    @Test("a byte-order mark is skipped; surrounding whitespace is allowed")
    func byteOrderMark() throws {
        let value = try JSONParser.parse([0xEF, 0xBB, 0xBF] + Array(" \r\n\t{}\n ".utf8))
        #expect(value == .object([(String, JSONValue)]()))
    }

    @Test("malformed JSON names line and column and what was expected", arguments: [
        ("{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3, "expected ',' or '}'"),
        ("[1, 2,]", 1, 7, "expected a value"),
        ("{\"a\" 1}", 1, 6, "expected ':'"),
        ("{\"a\": tru}", 1, 7, "invalid literal"),
        ("[01]", 1, 2, "leading zero"),
        ("[1.]", 1, 4, "after the decimal point"),
        ("[1e+]", 1, 5, "exponent"),
        ("[-]", 1, 3, "expected a digit"),
        ("\"abc", 1, 5, "unterminated string"),
        ("[\"a\tb\"]", 1, 4, "control character"),
        ("[\"\\x\"]", 1, 4, "invalid escape"),
        ("[\"\\u12G4\"]", 1, 7, "hex digits"),
        ("[\"\\uDC00\"]", 1, 3, "lone low surrogate"),
        ("[\"\\uD800x\"]", 1, 3, "not followed by a low surrogate"),
        ("[\"\\uD800\\u0041\"]", 1, 3, "not a low surrogate"),
        ("{} {}", 1, 4, "after the JSON value"),
        ("", 1, 1, "end of input"),
        ("{'a': 1}", 1, 2, "double quotes"),
    ] as [(String, Int, Int, String)])
    func malformed(text: String, line: Int, column: Int, messagePart: String) {
        let error = parseError(text)
        #expect(error?.code == .malformedJSON)
        #expect(error?.context.line == line)
        #expect(error?.context.column == column)
        #expect(error?.message.contains(messagePart) == true, "message: \(error?.message ?? "none")")
    }

    @Test("invalid UTF-8 inside a string is an error at the string's start")
    func invalidUTF8() {
        do {
            _ = try JSONParser.parse([UInt8(ascii: "["), UInt8(ascii: "\""), 0xC3, 0x28, UInt8(ascii: "\""), UInt8(ascii: "]")])
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .malformedJSON)
            #expect(error.context.column == 2)
        }
    }

    @Test("nesting up to the depth limit parses; one level more is an error, not a crash")
    func depthLimit() throws {
        let limit = JSONParser.maximumDepth
        let ok = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        _ = try parse(ok)
        let deep = String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)
        #expect(parseError(deep)?.code == .malformedJSON)
        #expect(parseError(deep)?.context.column == limit + 1)
        let veryDeep = String(repeating: "{\"a\":", count: 100_000)
        #expect(parseError(veryDeep)?.code == .malformedJSON)
    }

    @Test("a repeated member: the subscript returns the last one")
    func repeatedMember() throws {
        let value = try parse("{\"a\": 1, \"a\": 2}")
        #expect(value["a"] == .integer(2))
        #expect(value["b"] == nil)
    }
}

@Suite("JSON value accessors")
struct JSONValueAccessorTests {
    @Test("accessors return the payload of the matching kind and nil otherwise")
    func accessors() throws {
        let value = try JSONParser.parse(Array(#"{"s": "x", "n": 2.0, "b": false, "a": [1], "o": {}}"#.utf8))
        #expect(value["s"]?.stringValue == "x")
        #expect(value["n"]?.doubleValue == 2)
        #expect(value["n"]?.intValue == 2)
        #expect(value["b"]?.boolValue == false)
        #expect(value["a"]?.arrayValue == [.integer(1)])
        #expect(value["o"]?.members?.isEmpty == true)
        #expect(value["s"]?.doubleValue == nil)
        #expect(value["n"]?.stringValue == nil)
        #expect(value.members?.map(\.key) == ["s", "n", "b", "a", "o"])
    }
}
