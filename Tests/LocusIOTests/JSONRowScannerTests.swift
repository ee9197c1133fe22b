@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// The live stream's JSON fast path reads the same fields as the full parser, and declines what it
/// does not read plainly (issue 16).
@Suite("JSON row scanner")
struct JSONRowScannerTests {
    /// The fields the full parser gives: nil when the message is not an object or an array of objects.
    static func reference(_ text: String) -> [JSONRowFields]? {
        guard let value = try? JSONParser.parse(Array(text.utf8)) else { return nil }
        switch value.kind {
        case .object: return [JSONRowFields(object: value)]
        case .array(let items):
            var rows: [JSONRowFields] = []
            for item in items {
                guard case .object = item.kind else { return nil }
                rows.append(JSONRowFields(object: item))
            }
            return rows
        default: return nil
        }
    }

    static func scanned(_ text: String) -> [JSONRowFields]? {
        var rows: [JSONRowFields] = [JSONRowFields()]  // appended after what is there; removed on failure
        let ok = Array(text.utf8).withUnsafeBufferPointer { JSONRowScanner.scan($0, into: &rows) }
        #expect(rows.count >= 1, "the scanner keeps what was in the array before")
        return ok ? Array(rows.dropFirst()) : nil
    }

    static let plain = [
        #"{"t": 12.25, "tag": "T1", "anchor": 4097, "range_m": 3.52, "floor": "1F"}"#,
        #"[{"t":0.1,"tag":"T1","anchor":256,"range_m":1},{"t":0.2,"tag":"T2","anchor":"257","range_m":2e0,"extra":true}]"#,
        #"{"anchor": 1, "range_m": 0.5}"#,
        #"{"t": null, "tag": 17, "anchor": 1.0, "range_m": -3, "floor": 2}"#,
        #"  {"t": 1e-3 , "anchor" : 65535 , "range_m" : 1E2 , "note": null }  "#,
        #"{"t": "1.0", "anchor": 1, "range_m": 1}"#,
        #"{"t": 1, "anchor": 70000, "range_m": 1}"#,
        #"{"t": 1, "anchor": -1, "range_m": 1}"#,
        #"{"t": 1, "anchor": 1.5, "range_m": 1}"#,
        #"{"t": 1, "anchor": true, "range_m": false}"#,
        #"{"t": 1, "anchor": "0x10", "range_m": 1}"#,
        #"{"t": 1, "tag": "", "anchor": 1, "range_m": 1}"#,
        #"{"t": 123456789012345678901234567890, "anchor": 1, "range_m": 0.1000000000000000055511151231257827}"#,
        #"[]"#,
        #"{}"#,
    ]

    static let declined = [
        #"{"t": 1, "tag": "T\u0031", "anchor": 1, "range_m": 1}"#,   // an escape
        #"{"t": 1, "tag": "Tä", "anchor": 1, "range_m": 1}"#,        // non-ASCII
        #"{"t": 1, "anchor": 1, "range_m": 1, "meta": {"a": 1}}"#,    // nesting
        #"{"t": 1, "t": 2, "anchor": 1, "range_m": 1}"#,              // a duplicate key
        #"[{"t": 1, "anchor": 1, "range_m": 1}, 3]"#,                 // an item that is not an object
        #"{"t": 01, "anchor": 1, "range_m": 1}"#,                     // not JSON
        #"{"t": 1, "anchor": 1, "range_m": 1,}"#,
        #"{"t": 1 "anchor": 1}"#,
        #"{"t": .5, "anchor": 1, "range_m": 1}"#,
        #"{"t": 1, "anchor": 1, "range_m": 1} x"#,
        #"not json"#,
        #"{"t": 1, "anchor": 1, "range_m": nul}"#,
    ]

    @Test("plain messages: the scanner reads exactly the full parser's fields, and the same decisions follow")
    func plainAgree() {
        for text in Self.plain {
            let fast = Self.scanned(text)
            #expect(fast != nil, "declined a plain message: \(text)")
            #expect(fast == Self.reference(text), "\(text)")
            if let fast, let slow = Self.reference(text) {
                #expect(fast.map { $0.decide(receivedSeconds: 99) } == slow.map { $0.decide(receivedSeconds: 99) })
            }
        }
    }

    @Test("escapes, non-ASCII, nesting, duplicate keys and invalid JSON are declined (the full parser decides them)")
    func otherDeclined() {
        for text in Self.declined { #expect(Self.scanned(text) == nil, "\(text)") }
    }

    @Test("decisions: the CSV reader's reasons, the receive time for a missing t")
    func decisions() {
        func decide(_ text: String) -> JSONRowFields.Decision? { Self.scanned(text)?.first?.decide(receivedSeconds: 99) }
        #expect(decide(#"{"anchor": 7, "range_m": 1.5}"#) == .use(timeSeconds: 99, tag: nil, floor: nil, locator: 7, rangeMeters: 1.5))
        #expect(decide(#"{"t": 2, "tag": 17, "anchor": "7", "range_m": 1, "floor": "1F"}"#)
                == .use(timeSeconds: 2, tag: "17", floor: "1F", locator: 7, rangeMeters: 1))
        #expect(decide(#"{"t": "x", "anchor": 7, "range_m": 1}"#) == .skip(.unparseableNumber))
        #expect(decide(#"{"t": 1, "anchor": 7}"#) == .skip(.missingField))
        #expect(decide(#"{"t": 1, "range_m": 7}"#) == .skip(.missingField))
        #expect(decide(#"{"t": 1, "anchor": 65536, "range_m": 1}"#) == .skip(.invalidAnchor))
        #expect(decide(#"{"t": 1, "anchor": 2.5, "range_m": 1}"#) == .skip(.invalidAnchor))
    }

    @Test("seeded random messages: whenever the scanner reads one, it reads what the full parser reads")
    func randomAgree() {
        var rng = SeededGenerator(seed: 16)
        let keys = ["t", "tag", "anchor", "range_m", "floor", "x"]
        let values = ["1", "-0.5", "1e3", "2.50", "\"T1\"", "\"12\"", "null", "true", "0", "65535", "70000", "\"\"", "1.0E-2"]
        var read = 0
        for _ in 0..<2000 {
            var items: [String] = []
            for _ in 0..<(1 + Int(rng.nextUnit() * 3)) {
                var members: [String] = []
                for _ in 0..<Int(rng.nextUnit() * 6) {
                    let k = keys[Int(rng.nextUnit() * Double(keys.count))]
                    let v = values[Int(rng.nextUnit() * Double(values.count))]
                    members.append("\"\(k)\": \(v)")
                }
                items.append("{" + members.joined(separator: ", ") + "}")
            }
            let text = items.count == 1 && rng.nextUnit() < 0.5 ? items[0] : "[" + items.joined(separator: ",") + "]"
            if let fast = Self.scanned(text) {
                read += 1
                #expect(fast == Self.reference(text), "\(text)")
            } else {
                #expect(Self.hasDuplicateKey(text), "declined without a reason: \(text)")
            }
        }
        #expect(read > 800)  // the others hold a duplicate key
    }

    /// True when an object of the message names one of the row's keys twice (the parser keeps both members).
    static func hasDuplicateKey(_ text: String) -> Bool {
        guard let value = try? JSONParser.parse(Array(text.utf8)) else { return false }
        var objects: [JSONValue] = []
        switch value.kind {
        case .object: objects = [value]
        case .array(let items): objects = items
        default: return false
        }
        for o in objects {
            guard case .object(let members) = o.kind else { continue }
            let keys = members.map(\.key).filter { ["t", "tag", "anchor", "range_m", "floor"].contains($0) }
            if Set(keys).count != keys.count { return true }
        }
        return false
    }
}
