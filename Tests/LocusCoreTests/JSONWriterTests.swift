@testable import LocusCore
import Testing

@Suite("JSON writer and number formats")
struct JSONWriterTests {
    private let event = JSONValue.object([
        "t": .number(12.25, .fixed(3)),
        "tag": .string("T1"),
        "zone": .string("a \"q\" \\ / é\n\u{1}"),
        "event": .string("dwell"),
        "dwellSeconds": .integer(5),
        "ok": .bool(true),
        "x": .number(.nan, .fixed(3)),
        "list": .array([.integer(1), .null, .array([])]),
        "empty": .object([(String, JSONValue)]()),
    ])

    @Test("compact output is exactly the expected bytes, keys in the given order")
    func compactBytes() {
        let expected = #"{"t":12.250,"tag":"T1","zone":"a \"q\" \\ / é\n\u0001","event":"dwell","dwellSeconds":5,"ok":true,"x":null,"list":[1,null,[]],"empty":{}}"#
        #expect(JSONWriter(style: .compact).bytes(event) == Array(expected.utf8))
    }

    @Test("line style (JSON Lines) puts one space after ':' and ','")
    func lineBytes() {
        let value = JSONValue.object(["t": .number(20.1, .fixed(2)), "tag": .string("T1"), "event": .string("exit")])
        #expect(JSONWriter(style: .line).string(value) == #"{"t": 20.10, "tag": "T1", "event": "exit"}"#)
    }

    @Test("appendLine writes JSON Lines records, one per line, into one buffer")
    func jsonLines() {
        let writer = JSONWriter(style: .line)
        var out: [UInt8] = []
        writer.appendLine(.object(["t": .number(12.25, .fixed(2)), "event": .string("enter")]), to: &out)
        writer.appendLine(.object(["t": .number(17.25, .fixed(2)), "event": .string("dwell"), "dwellSeconds": .integer(5)]), to: &out)
        let expected = """
        {"t": 12.25, "event": "enter"}
        {"t": 17.25, "event": "dwell", "dwellSeconds": 5}

        """
        #expect(out == Array(expected.utf8))
    }

    @Test("pretty style indents by 2 and keeps small flat containers inline")
    func prettyBytes() {
        let value = JSONValue.object([
            "id": .string("a"),
            "polygon": .array([.object(["x": .integer(0), "y": .integer(0)]), .object(["x": .integer(4), "y": .integer(0)])]),
            "none": .array([]),
            "long": .array(Array(repeating: JSONValue.string("0123456789"), count: 10)),
        ])
        let expected = """
        {
          "id": "a",
          "polygon": [
            {"x": 0, "y": 0},
            {"x": 4, "y": 0}
          ],
          "none": [],
          "long": [
            "0123456789",
            "0123456789",
            "0123456789",
            "0123456789",
            "0123456789",
            "0123456789",
            "0123456789",
            "0123456789",
            "0123456789",
            "0123456789"
          ]
        }
        """
        #expect(JSONWriter(style: .pretty).string(value) == expected)
    }

    @Test("fixed format keeps trailing zeros, rounds half away from zero, never writes -0", arguments: [
        (12.25, 3, "12.250"), (2, 3, "2.000"), (0, 2, "0.00"), (-0.0, 2, "0.00"), (-0.0004, 3, "0.000"),
        (0.1235, 3, "0.124"), (-0.1235, 3, "-0.124"), (0.9995, 3, "1.000"), (9.9996, 3, "10.000"),
        (99.5, 0, "100"), (12.4, 0, "12"), (0.0006, 3, "0.001"), (1e-7, 3, "0.000"), (1.5e-5, 5, "0.00002"),
        (123456789.125, 2, "123456789.13"), (1e21, 1, "1000000000000000000000.0"), (-3.14159, 4, "-3.1416"),
        (0.1 + 0.2, 3, "0.300"), (1234.5, 1, "1234.5"),
    ] as [(Double, Int, String)])
    func fixedFormat(value: Double, decimals: Int, expected: String) {
        #expect(JSONNumberFormat.fixed(decimals).format(value) == expected)
    }

    @Test("the fast path of .fixed gives the same bytes as the exact path whenever it decides")
    func fixedFastMatchesExact() {
        var rng = SeededGenerator(seed: 2026)
        var decided = 0
        for i in 0..<60_000 {
            let magnitude = [1e-3, 1, 100, 1e5, 1e9][i % 5]
            // Mix uniform values with values near ties (k + 0.5)·10⁻ⁿ.
            let decimals = Int(rng.next() % 7)
            var x = rng.uniform(-magnitude, magnitude)
            if i % 3 == 0 {
                let step = 1 / [1.0, 10, 100, 1e3, 1e4, 1e5, 1e6][decimals]
                x = ((x / step).rounded(.down) + 0.5) * step
            }
            var fast: [UInt8] = []
            var exact: [UInt8] = []
            JSONNumberFormat.appendFixedExact(x, decimals: decimals, to: &exact)
            if JSONNumberFormat.appendFixedFast(x, decimals: decimals, to: &fast) {
                decided += 1
                #expect(fast == exact, "x = \(x), decimals = \(decimals)")
                if fast != exact { return }
            }
        }
        #expect(decided > 30_000)
    }

    @Test("shortest format round-trips and writes whole numbers without a fraction", arguments: [
        (40, "40"), (-3, "-3"), (-0.0, "0"), (0.1, "0.1"), (1e-5, "1e-05"), (1e16, "1e+16"), (2.6, "2.6"),
        (0.1 + 0.2, "0.30000000000000004"), (123456789012345, "123456789012345"),
    ] as [(Double, String)])
    func shortestFormat(value: Double, expected: String) throws {
        let text = try #require(JSONNumberFormat.shortest.format(value))
        #expect(text == expected)
        let reparsed = try JSONParser.parse(Array(text.utf8))
        guard case .number(let number) = reparsed.kind else {
            Issue.record("not a number")
            return
        }
        #expect(number.value == value)
    }

    @Test("NaN and infinities are written as null in every format")
    func nonFinite() {
        for format in [JSONNumberFormat.fixed(3), .shortest] {
            for value in [Double.nan, .infinity, -.infinity] {
                #expect(format.format(value) == nil)
                #expect(JSONValue.number(value, format) == .null)
            }
        }
    }

    @Test("written JSON parses back to an equal tree")
    func writeThenParse() throws {
        for style in [JSONWriter.Style.compact, .line, .pretty] {
            let parsed = try JSONParser.parse(JSONWriter(style: style).bytes(event))
            #expect(parsed == event)
        }
    }
}
