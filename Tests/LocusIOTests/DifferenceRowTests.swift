import Foundation
@testable import LocusCore
@testable import LocusIO
import Testing

/// Range-difference (TDoA) rows, SPEC §2: the columns `anchor_a`, `anchor_b`, `tdoa_m` in CSV and in
/// JSON, alone or beside range columns (a hybrid trace), with their skip reasons.
@Suite("Trace reader: range differences")
struct DifferenceRowTests {
    static func parse(_ text: String, fastRows: Bool = true) throws -> (rows: [TraceRow], parser: TraceRowParser) {
        try TraceRowParserTrustTests.parse(Array(text.utf8) + Array(repeating: 0x0A, count: 100), fastRows: fastRows)
    }

    @Test("a difference trace keeps A, B and tdoa_m (negative too); A = B is same_locator, and the other checks are a range row's")
    func differenceTrace() throws {
        let text = """
        t,tag,anchor_a,anchor_b,tdoa_m
        0.0,T1,1,2,-0.75
        0.0,T1,1,3,1.25
        0.1,T1,4,4,0.5
        0.2,T1,1,x,0.5
        0.3,T1,1,2,
        0.4,T1,1,2,abc
        0.5,T1,1,2,inf
        0.6,T1,70000,2,0.1
        0.7,,1,2,0.1

        """
        for fast in [true, false] {
            let (rows, parser) = try Self.parse(text, fastRows: fast)
            #expect(rows.count == 3)
            #expect(rows[0] == TraceRow(timeSeconds: 0, differenceMeters: -0.75, tagIndex: 0, floorIndex: -1, line: 2, reference: 1, locator: 2))
            #expect(rows[0].isDifference && rows[1].isDifference && rows[1].differenceMeters == 1.25)
            #expect(rows[2].tagIndex == 1 && parser.tags.map(\.rawValue) == ["T1", "tag"])
            let s = parser.skipped
            #expect(s.count(.sameLocator) == 1 && s.count(.invalidAnchor) == 2 && s.count(.missingField) == 1)
            #expect(s.count(.unparseableNumber) == 1 && s.count(.nonFinite) == 1)
        }
    }

    @Test("a hybrid trace: each row fills one kind; a range row is a range (reference = locator), a row with neither is missing_field")
    func hybridTrace() throws {
        let text = """
        t,tag,anchor,range_m,anchor_a,anchor_b,tdoa_m,floor
        0.0,T1,7,3.5,,,,1F
        0.0,T1,,,1,2,0.5,1F
        0.1,T1,,,,,,1F
        0.2,T1,7,-1,,,,
        0.3,T1,,,3,4,-2.0

        """
        let (rows, parser) = try Self.parse(text)
        #expect(rows.count == 3)
        #expect(!rows[0].isDifference && rows[0].locator == 7 && rows[0].reference == 7 && rows[0].rangeMeters == 3.5)
        #expect(rows[1].isDifference && rows[1].reference == 1 && rows[1].locator == 2 && rows[1].floorIndex == 0)
        #expect(rows[2].isDifference && rows[2].differenceMeters == -2.0 && rows[2].floorIndex == -1)
        #expect(parser.skipped.count(.missingField) == 1 && parser.skipped.count(.negativeRange) == 1)
    }

    @Test("the header must hold t and one whole set: the error names the set's missing columns")
    func headers() throws {
        func message(_ header: String) -> String {
            do { _ = try TraceRowParser(header: Array(header.utf8).span, file: "h.csv"); return "" } catch { return error.message }
        }
        let differences = message("t,anchor_a,tdoa_m\n")
        #expect(differences.contains("anchor_b") && !differences.contains("range_m"), "\(differences)")
        let ranges = message("t,anchor\n")
        #expect(ranges.contains("range_m") && !ranges.contains("tdoa_m"), "\(ranges)")
        #expect(message("t,anchor_a,anchor_b,tdoa_m\n").isEmpty)
        // A range trace with a stray difference column is a range trace, read by the fast paths.
        let (rows, _) = try Self.parse("t,anchor,range_m,anchor_a\n0.0,7,1.5,\n")
        #expect(rows.count == 1 && !rows[0].isDifference)
    }

    @Test("the whole-file reader keeps the reference column and builds RangeDifference values")
    func wholeFile() throws {
        let text = Array("t,tag,anchor_a,anchor_b,tdoa_m,floor\n0.25,T9,4097,4098,-1.5,2F\n".utf8)
        let trace = try TraceReader.parse(text.span, file: "d.csv")
        #expect(trace.rows.count == 1 && trace.rows[0].isDifference)
        #expect(trace.difference(0) == RangeDifference(timeSeconds: 0.25, tag: TagID("T9"), reference: LocatorAddress(4097),
                                                       locator: LocatorAddress(4098), differenceMeters: -1.5, floor: FloorID("2F")))
    }

    @Test("JSON rows: anchor_a, anchor_b and tdoa_m make a difference row, by the scanner and the parser alike")
    func jsonRows() throws {
        let cases: [(String, JSONRowFields.Decision)] = [
            (#"{"t": 1.5, "tag": "T1", "anchor_a": 1, "anchor_b": "2", "tdoa_m": -0.25}"#,
             .useDifference(timeSeconds: 1.5, tag: "T1", floor: nil, reference: 1, locator: 2, differenceMeters: -0.25)),
            (#"{"t": 1.5, "anchor_a": 3, "anchor_b": 3, "tdoa_m": 0.1}"#, .skip(.sameLocator)),
            (#"{"t": 1.5, "anchor_a": 3, "tdoa_m": 0.1}"#, .skip(.missingField)),
            (#"{"t": 1.5, "anchor_a": 3.5, "anchor_b": 2, "tdoa_m": 0.1}"#, .skip(.invalidAnchor)),
            (#"{"t": 1.5, "anchor_a": 1, "anchor_b": 2, "tdoa_m": "x"}"#, .skip(.unparseableNumber)),
            (#"{"t": 1.5, "anchor": 7, "range_m": 2.5, "anchor_a": 1, "anchor_b": 2, "tdoa_m": 0.5}"#,
             .use(timeSeconds: 1.5, tag: nil, floor: nil, locator: 7, rangeMeters: 2.5)),
        ]
        for (text, expected) in cases {
            var scanned: [JSONRowFields] = []
            #expect(JSONRowScanner.scan(Array(text.utf8).span, into: &scanned), "\(text)")
            #expect(scanned.first?.decide(receivedSeconds: 0) == expected, "\(text)")
            let parsed = JSONRowFields(object: try JSONParser.parse(Array(text.utf8)))
            #expect(parsed == scanned.first, "\(text)")
        }
    }

    @Test("the difference fast path keeps exactly the scanner's rows and skips, over 5,000 seeded rows of every shape, pure and hybrid")
    func fastPathEquivalence() throws {
        var generator = SeededGenerator(seed: 11)
        let cells = ["1", "2", "40407", "0x9DD7", " 3", "65536", "", "7", "12"]
        let numbers = ["-0.75", "1.25", "+2.5", "3e1", "abc", "", " 1.0", "-0.000", "1.", "nan", "12345678901234567890"]
        for hybrid in [false, true] {
            var text = hybrid ? "t,tag,anchor,range_m,anchor_a,anchor_b,tdoa_m,floor\n" : "t,tag,anchor_a,anchor_b,tdoa_m,floor\n"
            var t = 0.0
            for k in 0..<5_000 {
                t += Double(Int.random(in: 0...3, using: &generator)) * 0.01
                let a = Int.random(in: 0...9, using: &generator) < 8 ? "\(Int.random(in: 1...6, using: &generator))" : cells.randomElement(using: &generator)!
                let b = Int.random(in: 0...9, using: &generator) < 8 ? "\(Int.random(in: 1...6, using: &generator))" : cells.randomElement(using: &generator)!
                let d = Int.random(in: 0...9, using: &generator) < 8 ? String(format: "%.4f", Double.random(in: -9...9, using: &generator))
                    : numbers.randomElement(using: &generator)!
                let tag = ["T1", "T2", "\"T 3\"", "", "T1"][k % 5]
                let floor = ["1F", "", "2F"][k % 3]
                let time = k % 97 == 0 ? "" : String(format: "%.3f", t)
                let end = k % 13 == 0 ? "\r\n" : "\n"
                if hybrid && k % 4 == 0 {
                    text += "\(time),\(tag),\(a),\(d),,,,\(floor)\(end)"
                } else if hybrid {
                    text += "\(time),\(tag),\(k % 11 == 0 ? " " : ""),,\(a),\(b),\(d),\(floor)\(end)"
                } else {
                    text += "\(time),\(tag),\(a),\(b),\(d),\(floor)\(end)"
                }
            }
            let fast = try Self.parse(text, fastRows: true), slow = try Self.parse(text, fastRows: false)
            #expect(fast.rows == slow.rows, "hybrid \(hybrid)")
            #expect(fast.parser.skipped == slow.parser.skipped, "hybrid \(hybrid)")
            #expect(fast.parser.tags == slow.parser.tags && fast.parser.floors == slow.parser.floors)
            #expect(fast.rows.count > 2_000, "hybrid \(hybrid): \(fast.rows.count)")
        }
    }
}
