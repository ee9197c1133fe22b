import LocusCore

/// A live message's range rows read straight from its bytes — one JSON object
/// `{"t": 12.25, "tag": "T1", "anchor": 4097, "range_m": 3.52, "floor": "1F"}` (a range difference:
/// `"anchor_a": 4097, "anchor_b": 4098, "tdoa_m": -0.84` in place of anchor and range_m) or an array of them
/// (`locus stream`) — in one pass, without building a `JSONValue` tree: ~10× cheaper per row than
/// `JSONParser`, which at 10,000 tags × 4 Hz is the difference between keeping up and not.
///
/// Only the plain spelling is read here: keys in any order, each at most once; string values without
/// escapes and in ASCII; numbers in JSON's grammar; `true`, `false`, `null`; other keys' values
/// scalars. Anything else — nesting, escapes, non-ASCII, a duplicate key, invalid JSON — gives nil,
/// and the caller reads the message with `JSONParser` and `JSONRowFields.init(object:)`, which
/// classify every field the same way (tests compare the two).
package enum JSONRowScanner {
    /// Appends the rows of `bytes` (an object or an array of objects) to `rows`; false (nothing
    /// appended) when the message is not in the plain spelling. The span's bytes are read in place.
    static func scan(_ bytes: Span<UInt8>, into rows: inout [JSONRowFields]) -> Bool {
        bytes.withUnsafeBufferPointer { scan($0, into: &rows) }
    }

    /// `scan(_:into:)` over the bytes' buffer.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, into rows: inout [JSONRowFields]) -> Bool {
        let start = rows.count
        var i = 0
        let n = bytes.count
        func skipSpace() { while i < n, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D { i += 1 } }
        func fail() -> Bool { rows.removeSubrange(start...); return false }
        skipSpace()
        guard i < n else { return fail() }
        if bytes[i] == UInt8(ascii: "[") {
            i += 1
            skipSpace()
            if i < n, bytes[i] == UInt8(ascii: "]") { i += 1 } else {
                while true {
                    guard let row = object(bytes, &i) else { return fail() }
                    rows.append(row)
                    skipSpace()
                    guard i < n else { return fail() }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; skipSpace(); continue }
                    guard bytes[i] == UInt8(ascii: "]") else { return fail() }
                    i += 1
                    break
                }
            }
        } else {
            guard let row = object(bytes, &i) else { return fail() }
            rows.append(row)
        }
        skipSpace()
        return i == n ? true : fail()
    }

    /// One object at `i` (after optional space); nil when it is not plain.
    private static func object(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> JSONRowFields? {
        let n = b.count
        func skipSpace() { while i < n, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 } }
        skipSpace()
        guard i < n, b[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        var row = JSONRowFields()
        var seen: UInt8 = 0
        skipSpace()
        if i < n, b[i] == UInt8(ascii: "}") { i += 1; return row }
        while true {
            skipSpace()
            guard let key = string(b, &i) else { return nil }
            skipSpace()
            guard i < n, b[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            skipSpace()
            guard let value = scalar(b, &i) else { return nil }
            let which = keyIndex(b, key)
            if which >= 0 {
                let bit: UInt8 = 1 << UInt8(which)
                guard seen & bit == 0 else { return nil }  // a duplicate key: JSONParser's rules decide
                seen |= bit
                let field = value.field(b)
                switch which {
                case 0: row.t = field
                case 1: row.tag = field
                case 2: row.anchor = field
                case 3: row.range = field
                case 4: row.floor = field
                case 5: row.referenceAnchor = field
                case 6: row.otherAnchor = field
                default: row.difference = field
                }
            }
            skipSpace()
            guard i < n else { return nil }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            guard b[i] == UInt8(ascii: "}") else { return nil }
            i += 1
            return row
        }
    }

    /// The key's index among t, tag, anchor, range_m, floor, anchor_a, anchor_b, tdoa_m; −1 for another.
    private static func keyIndex(_ b: UnsafeBufferPointer<UInt8>, _ key: Range<Int>) -> Int {
        func equals(_ text: StaticString) -> Bool {
            guard text.utf8CodeUnitCount == key.count else { return false }
            let p = text.utf8Start
            for k in 0..<key.count where b[key.lowerBound + k] != p[k] { return false }
            return true
        }
        if equals("t") { return 0 }
        if equals("tag") { return 1 }
        if equals("anchor") { return 2 }
        if equals("range_m") { return 3 }
        if equals("floor") { return 4 }
        if equals("anchor_a") { return 5 }
        if equals("anchor_b") { return 6 }
        if equals("tdoa_m") { return 7 }
        return -1
    }

    /// A plain string at `i` (its content's byte range); nil with an escape, a control or non-ASCII byte.
    private static func string(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Range<Int>? {
        guard i < b.count, b[i] == UInt8(ascii: "\"") else { return nil }
        let start = i + 1
        var k = start
        while k < b.count {
            let c = b[k]
            if c == UInt8(ascii: "\"") { i = k + 1; return start..<k }
            if c == UInt8(ascii: "\\") || c < 0x20 || c >= 0x80 { return nil }
            k += 1
        }
        return nil
    }

    private enum Scalar {
        case string(Range<Int>), number(Range<Int>), null, other

        func field(_ b: UnsafeBufferPointer<UInt8>) -> JSONRowFields.Field {
            switch self {
            case .null: return .null
            case .other: return .other
            case .string(let r): return .string(String(decoding: UnsafeBufferPointer(rebasing: b[r]), as: UTF8.self))
            case .number(let r):
                let literal = UnsafeBufferPointer(rebasing: b[r])
                let isInteger = !literal.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
                return .number(CSVNumberParser.parseDouble(b, r.lowerBound, r.upperBound) ?? .nan,
                               literal: String(decoding: literal, as: UTF8.self), isInteger: isInteger)
            }
        }
    }

    /// A scalar value at `i`; nil for an object, an array or anything that is not JSON.
    private static func scalar(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Scalar? {
        let n = b.count
        guard i < n else { return nil }
        switch b[i] {
        case UInt8(ascii: "\""):
            return string(b, &i).map { .string($0) }
        case UInt8(ascii: "n"), UInt8(ascii: "t"), UInt8(ascii: "f"):
            for word: StaticString in ["null", "true", "false"] {
                let p = word.utf8Start, count = word.utf8CodeUnitCount
                guard i + count <= n else { continue }
                var same = true
                for k in 0..<count where b[i + k] != p[k] { same = false; break }
                if same { i += count; return word.utf8Start[0] == UInt8(ascii: "n") ? .null : .other }
            }
            return nil
        default:
            // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
            let start = i
            if b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < n, b[i] &- 0x30 < 10 else { return nil }
            if b[i] == UInt8(ascii: "0") { i += 1 } else { while i < n, b[i] &- 0x30 < 10 { i += 1 } }
            if i < n, b[i] == UInt8(ascii: ".") {
                i += 1
                guard i < n, b[i] &- 0x30 < 10 else { return nil }
                while i < n, b[i] &- 0x30 < 10 { i += 1 }
            }
            if i < n, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
                i += 1
                if i < n, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
                guard i < n, b[i] &- 0x30 < 10 else { return nil }
                while i < n, b[i] &- 0x30 < 10 { i += 1 }
            }
            return .number(start..<i)
        }
    }
}

/// The fields of a JSON row (a range's five, a difference's three more) as they were written — what decides whether the row is used
/// and how (`decide(receivedSeconds:)`), whichever reader (`JSONRowScanner`, `JSONParser`) read it.
package struct JSONRowFields: Sendable, Equatable {
    /// One field: absent, `null`, a number (value, literal text, whether it is an integer literal), a
    /// string, or another value (`true`, `false`, an object, an array).
    enum Field: Sendable, Equatable {
        case absent, null, number(Double, literal: String, isInteger: Bool), string(String), other
    }
    var t = Field.absent, tag = Field.absent, anchor = Field.absent, range = Field.absent, floor = Field.absent
    /// A difference row's `anchor_a` (A, the reference), `anchor_b` (B) and `tdoa_m`.
    var referenceAnchor = Field.absent, otherAnchor = Field.absent, difference = Field.absent

    init() {}

    /// The fields of a parsed object (`JSONParser`; for a duplicate key the member `object[key]` finds).
    init(object: JSONValue) {
        func field(_ key: String) -> Field {
            guard let v = object[key] else { return .absent }
            switch v.kind {
            case .null: return .null
            case .number(let n): return .number(n.value, literal: n.literal, isInteger: n.isIntegerLiteral)
            case .string(let s): return .string(s)
            default: return .other
            }
        }
        t = field("t"); tag = field("tag"); anchor = field("anchor"); range = field("range_m"); floor = field("floor")
        referenceAnchor = field("anchor_a"); otherAnchor = field("anchor_b"); difference = field("tdoa_m")
    }

    /// Whether the row names its time (`t` present, not `null`); otherwise `decide` stands the
    /// receive time in for it, which a live stream checks differently (`future_time`).
    var namesTime: Bool {
        switch t {
        case .absent, .null: return false
        default: return true
        }
    }

    /// What to do with the row: `.skip(reason)` or `.use(...)` with its time (`receivedSeconds` when
    /// it names none), tag and floor ids (nil: the single tag, the default floor), locator and range.
    /// The checks and reasons of the CSV reader: a time or range that is not a number →
    /// `unparseable_number`; no range or anchor → `missing_field`; an anchor that is not an integer
    /// 0…65535 (a number, or a string of decimal digits) → `invalid_anchor`; a tag id `TagIDRule`
    /// refuses (over 128 bytes, a control character such as `\u0000`) → `invalid_tag` (a JSON
    /// string is UTF-8 already: `JSONParser` refuses other bytes, and the message is malformed).
    func decide(receivedSeconds: Double) -> Decision {
        func number(_ f: Field) -> Double?? {
            switch f {
            case .absent, .null: return .some(nil)
            case .number(let v, _, _): return .some(v)
            default: return nil
            }
        }
        func text(_ f: Field) -> String? {
            switch f {
            case .string(let s): return s.isEmpty ? nil : s
            case .number(_, let literal, _): return literal
            default: return nil
            }
        }
        func address(_ f: Field) -> UInt64?? {
            switch f {
            case .absent, .null: return .some(nil)
            case .number(let v, let literal, let isInteger):
                if isInteger, let exact = Int(literal) { return exact >= 0 ? UInt64(exact) : nil }
                if v.isFinite, v.rounded(.towardZero) == v, let whole = Int(exactly: v), whole >= 0 { return UInt64(whole) }
                return nil
            case .string(let s): return UInt64(s).map { .some($0) } ?? nil
            case .other: return nil
            }
        }
        // A row without a range that holds a difference is a difference row.
        if case .some(.none) = number(range), !Self.isMissing(difference) {
            guard let time = number(t), let dValue = number(difference) else { return .skip(.unparseableNumber) }
            guard let d = dValue, let a = address(referenceAnchor), let b = address(otherAnchor) else {
                return number(difference) == nil ? .skip(.unparseableNumber) : .skip(.invalidAnchor)
            }
            guard let a, let b else { return .skip(.missingField) }
            guard a <= 0xFFFF, b <= 0xFFFF else { return .skip(.invalidAnchor) }
            guard a != b else { return .skip(.sameLocator) }
            let tagID = text(tag)
            if let tagID, !TagIDRule.isValid(tagID) { return .skip(.invalidTag) }
            return .useDifference(timeSeconds: time ?? receivedSeconds, tag: tagID, floor: text(floor), reference: UInt16(a),
                                  locator: UInt16(b), differenceMeters: d)
        }
        guard let time = number(t), let rangeValue = number(range) else { return .skip(.unparseableNumber) }
        guard let r = rangeValue else { return .skip(.missingField) }
        guard let addressValue = address(anchor) else { return .skip(.invalidAnchor) }
        guard let a = addressValue else { return .skip(.missingField) }
        guard a <= 0xFFFF else { return .skip(.invalidAnchor) }
        let tagID = text(tag)
        if let tagID, !TagIDRule.isValid(tagID) { return .skip(.invalidTag) }
        return .use(timeSeconds: time ?? receivedSeconds, tag: tagID, floor: text(floor), locator: UInt16(a), rangeMeters: r)
    }

    /// Whether a field is absent or `null`.
    private static func isMissing(_ f: Field) -> Bool {
        switch f {
        case .absent, .null: return true
        default: return false
        }
    }

    /// A row's fate.
    package enum Decision: Equatable {
        case skip(SkipReason)
        case use(timeSeconds: Double, tag: String?, floor: String?, locator: UInt16, rangeMeters: Double)
        /// A range difference: A = `reference`, B = `locator`, d(tag, B) − d(tag, A) metres.
        case useDifference(timeSeconds: Double, tag: String?, floor: String?, reference: UInt16, locator: UInt16,
                           differenceMeters: Double)
    }
}
