/// A parsed or to-be-written JSON value: the tree of RFC 8259 with the place it was read from.
///
/// Object members keep their document order (duplicates included); numbers keep their literal text
/// so that integers such as `40407` round-trip exactly. Equality compares the values only, not the
/// positions (positions are metadata for error messages).
package struct JSONValue: Sendable, Equatable, CustomStringConvertible {
    /// The value itself.
    package enum Kind: Sendable, Equatable {
        case null
        case bool(Bool)
        case number(JSONNumber)
        case string(String)
        case array([JSONValue])
        case object([Member])
    }

    /// One `"key": value` member of an object, in document order.
    package struct Member: Sendable, Equatable {
        /// The member name, unescaped.
        package var key: String
        /// The member value.
        package var value: JSONValue
        /// Where the key's opening quote was read (line and column 1-based; 0 when built in code).
        var keyPosition: JSONPosition

        /// A member; `keyPosition` is `.none` for members built in code.
        init(key: String, value: JSONValue, keyPosition: JSONPosition = .none) {
            self.key = key
            self.value = value
            self.keyPosition = keyPosition
        }

        /// Members are equal when key and value are; positions are ignored.
        package static func == (lhs: Member, rhs: Member) -> Bool { lhs.key == rhs.key && lhs.value == rhs.value }
    }

    /// What the value is.
    package var kind: Kind
    /// Where the value's first character was read; `.none` for values built in code. Other modules
    /// place their messages with it through `LocusError.Context(file:jsonPath:at:)`.
    var position: JSONPosition

    /// A value of `kind` read at `position` (`.none` when built in code).
    init(_ kind: Kind, position: JSONPosition = .none) {
        self.kind = kind
        self.position = position
    }

    /// Values are equal when their kinds are equal, recursively; positions are ignored.
    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.kind == rhs.kind }

    /// The compact serialisation (see `JSONWriter`).
    package var description: String { JSONWriter(style: .compact).string(self) }
}

/// A line and column in a JSON text, both 1-based; the column counts Unicode scalars.
struct JSONPosition: Sendable, Hashable {
    /// 1-based line number (lines end at `\n`).
    var line: Int
    /// 1-based column, in Unicode scalars from the start of the line.
    var column: Int
    /// A position from its line and column.
    init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }
    /// The position of values built in code (line 0, column 0).
    static let none = JSONPosition(line: 0, column: 0)
}

/// A JSON number as its literal text and its value as a Double.
///
/// `value` is the nearest Double to the literal (±infinity when it overflows, e.g. `1e999`);
/// `literal` is the text as read, or the text the writer emits for numbers built in code.
package struct JSONNumber: Sendable, Hashable {
    /// The nearest Double to `literal` (±infinity on overflow).
    package var value: Double
    /// The number's text in the JSON document.
    package var literal: String

    /// A number from its literal text and value (the parser's constructor).
    init(literal: String, value: Double) {
        self.literal = literal
        self.value = value
    }

    /// An integer, written as its decimal digits.
    init(_ integer: Int) {
        self.literal = String(integer)
        self.value = Double(integer)
    }

    /// A finite Double written in `format`; nil when `value` is NaN or infinite (JSON has no such numbers).
    /// `value` becomes the Double of the written literal (`12.2504` with `.fixed(3)` → `12.25`), so a
    /// tree equals the tree read back from its output.
    init?(_ value: Double, format: JSONNumberFormat) {
        guard let text = format.format(value) else { return nil }
        self.literal = text
        self.value = Double(text) ?? value
    }

    /// True when the literal has no fraction and no exponent (`40407`, `-3`).
    package var isIntegerLiteral: Bool {
        !literal.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }

    /// The value as an Int when it is a whole number that fits one (`2`, `2.0`, `1e3`); nil otherwise.
    /// Integer literals are converted from their text, so no precision is lost beyond 2⁵³. Other
    /// modules read it as `JSONValue.intValue`.
    var integerValue: Int? {
        if isIntegerLiteral, let exact = Int(literal) { return exact }
        guard value.isFinite, value.rounded(.towardZero) == value else { return nil }
        return Int(exactly: value)
    }
}

extension JSONValue {
    /// `null`.
    package static let null = JSONValue(.null)

    /// `true` or `false`.
    package static func bool(_ value: Bool) -> JSONValue { JSONValue(.bool(value)) }

    /// A string.
    package static func string(_ value: String) -> JSONValue { JSONValue(.string(value)) }

    /// An integer, written as its decimal digits.
    package static func integer(_ value: Int) -> JSONValue { JSONValue(.number(JSONNumber(value))) }

    /// A Double written in `format`; `null` when the value is NaN or infinite.
    package static func number(_ value: Double, _ format: JSONNumberFormat) -> JSONValue {
        guard let number = JSONNumber(value, format: format) else { return .null }
        return JSONValue(.number(number))
    }

    /// An array.
    package static func array(_ elements: [JSONValue]) -> JSONValue { JSONValue(.array(elements)) }

    /// An object with members in the given order.
    static func object(_ members: KeyValuePairs<String, JSONValue>) -> JSONValue {
        JSONValue(.object(members.map { Member(key: $0.key, value: $0.value) }))
    }

    /// An object with members in the given order.
    package static func object(_ members: [(String, JSONValue)]) -> JSONValue {
        JSONValue(.object(members.map { Member(key: $0.0, value: $0.1) }))
    }

    /// The last member named `key` of an object (RFC 8259 leaves duplicates open; the last wins,
    /// as in JavaScript); nil when absent or when this is not an object. O(members).
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = kind else { return nil }
        return members.last { $0.key == key }?.value
    }

    /// The string, or nil when this is not a string.
    var stringValue: String? {
        if case .string(let text) = kind { return text }
        return nil
    }

    /// The number's Double, or nil when this is not a number.
    package var doubleValue: Double? {
        if case .number(let number) = kind { return number.value }
        return nil
    }

    /// The number as an Int when it is a whole number that fits (see `JSONNumber.integerValue`).
    package var intValue: Int? {
        if case .number(let number) = kind { return number.integerValue }
        return nil
    }

    /// The boolean, or nil when this is not `true`/`false`.
    var boolValue: Bool? {
        if case .bool(let flag) = kind { return flag }
        return nil
    }

    /// The elements, or nil when this is not an array.
    var arrayValue: [JSONValue]? {
        if case .array(let elements) = kind { return elements }
        return nil
    }

    /// The members in document order, or nil when this is not an object.
    package var members: [Member]? {
        if case .object(let members) = kind { return members }
        return nil
    }

    /// The JSON type name for messages: `null`, `a boolean`, `a number`, `a string`, `an array`, `an object`.
    package var typeDescription: String {
        switch kind {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension LocusError.Context {
    /// A context in `file` at `jsonPath` and at `value`'s line and column (none for a value built in
    /// code): where a reader of a JSON document (the site decoder) places its messages.
    package init(file: String?, jsonPath: String, at value: JSONValue) {
        self.init(file: file, jsonPath: jsonPath)
        if value.position != .none {
            line = value.position.line
            column = value.position.column
        }
    }
}
