import Foundation
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

@Suite("Trace reader")
struct TraceReaderTests {
    func parse(_ text: String) throws(LocusError) -> RangeTrace {
        let bytes = Array(text.utf8)
        let result = bytes.withUnsafeBufferPointer { buffer -> Result<RangeTrace, LocusError> in
            Result { () throws(LocusError) -> RangeTrace in try TraceReader.parse(buffer, file: "t.csv") }
        }
        return try result.get()
    }

    @Test("columns are found by name in any order and extra columns are ignored")
    func columnsInAnyOrder() throws {
        let trace = try parse("range_m,extra,anchor,t\n1.5,x,0x9DD7,0.25\n2.25,y,40407,0.5\n")
        #expect(trace.rows.count == 2)
        #expect(trace.rows.map(\.rangeMeters) == [1.5, 2.25])
        #expect(trace.rows.map(\.locator) == [0x9DD7, 0x9DD7])
        #expect(trace.rows.map(\.timeSeconds) == [0.25, 0.5])
        #expect(trace.tags == [TagID.single])
        #expect(trace.rows.map(\.floorIndex) == [-1, -1])
    }

    @Test("blank lines, comments, CRLF endings and a byte-order mark are handled")
    func blankCommentsCRLF() throws {
        let trace = try parse("\u{FEFF}t,anchor,range_m\r\n# a comment\r\n\r\n0.1,1,2.0\r\n   \n0.2,2,3.0\r\n")
        #expect(trace.rows.count == 2)
        #expect(trace.rows.map(\.line) == [4, 6])
        #expect(trace.skipped.total == 0)
    }

    @Test("unusable rows are skipped and counted by reason with their first line")
    func skipsCountedByReason() throws {
        let text = """
        t,tag,anchor,range_m
        0.0,A,1,1.0
        0.1,A,1,abc
        0.2,A,70000,1.0
        0.3,A,2,-0.5
        0.4,A,3,nan
        0.4,A,3,1.0
        0.35,A,3,1.0
        0.5,A,,1.0
        0.6,A
        0.7,B,1,2.0
        """
        let trace = try parse(text)
        #expect(trace.rows.count == 3)
        #expect(trace.skipped.count(.unparseableNumber) == 1)
        #expect(trace.skipped.firstLine(.unparseableNumber) == 3)
        #expect(trace.skipped.count(.invalidAnchor) == 1)
        #expect(trace.skipped.count(.negativeRange) == 1)
        #expect(trace.skipped.count(.nonFinite) == 1)
        #expect(trace.skipped.count(.timeBackwards) == 1)
        #expect(trace.skipped.firstLine(.timeBackwards) == 8)
        #expect(trace.skipped.count(.missingField) == 2)
        #expect(trace.skipped.total == 7)
        #expect(trace.tags == ["A", "B"])
    }

    @Test("time going backwards is judged per tag, not across tags")
    func backwardsPerTag() throws {
        let trace = try parse("t,tag,anchor,range_m\n1.0,A,1,1\n0.5,B,1,1\n1.5,A,1,1\n0.7,B,1,1\n")
        #expect(trace.rows.count == 4)
        #expect(trace.skipped.total == 0)
        #expect(trace.timeOrder() == [1, 3, 0, 2])
    }

    @Test("a header without a required column is invalid input naming the columns and the line")
    func missingColumn() {
        #expect(throws: LocusError.self) { try parse("t,range_m\n1,2\n") }
        do {
            _ = try parse("# comment\ntime,anchor,range\n1,2,3\n")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .csvMissingColumn)
            #expect(error.context.line == 2)
            #expect(error.context.file == "t.csv")
            #expect(error.message.contains("t, range_m"))
        }
    }

    @Test("an empty file is invalid input")
    func emptyFile() {
        #expect(throws: LocusError(.malformedCSV, "empty file: expected a header line naming t, anchor, range_m",
                                   context: .init(file: "t.csv", line: 1))) { try parse("") }
    }

    @Test("quoted tag ids and floor ids are read and interned")
    func quotedFields() throws {
        let trace = try parse("t,tag,anchor,range_m,floor\n1,\"tag, one\",1,2,1F\n2,\"tag, one\",1,2,\"2F\"\n")
        #expect(trace.tags == ["tag, one"])
        #expect(trace.floors == ["1F", "2F"])
        #expect(trace.rows.map(\.floorIndex) == [0, 1])
    }

    @Test("a missing file names the file")
    func missingFile() {
        do {
            _ = try TraceReader.read(path: "/nonexistent/trace.csv")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .fileUnreadable)
            #expect(error.context.file == "/nonexistent/trace.csv")
        }
    }

    @Test("the real fast run reads completely", .enabled(if: TestPaths.dataset("cuhksz-planar-uwb") != nil,
                                                          "../shared/datasets/cuhksz-planar-uwb is not present"))
    func realTrace() throws {
        let dir = try #require(TestPaths.dataset("cuhksz-planar-uwb"))
        let trace = try TraceReader.read(path: dir + "/trace.csv")
        #expect(trace.rows.count == 107_838)
        #expect(trace.skipped.total == 0)
        #expect(Set(trace.rows.map(\.locator)) == Set(0...7))
    }
}

@Suite("Number parsing from bytes")
struct CSVNumberParserTests {
    func parse(_ text: String) -> Double? {
        Array(text.utf8).withUnsafeBufferPointer { CSVNumberParser.parseDouble($0, 0, $0.count) }
    }

    @Test("decimal numbers parse exactly as Swift's correctly rounded parser does",
          arguments: ["0", "1", "-1", "1.798", "3.98", " 12.5 ", "0.000001", "123456789.123456789", "1e-3", "2.5E+2",
                      "17976931348623157e292", "4.9e-324", "0.1", "-0.0", "9007199254740993", "1234567890123456789012"])
    func exact(_ text: String) {
        let expected = Double(text.trimmingCharacters(in: .whitespaces))
        #expect(parse(text) == expected)
    }

    @Test("random decimals agree with Swift's parser bit for bit")
    func randomAgreement() {
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<20_000 {
            let digits = Int(rng.next() % 9) + 1
            let value = rng.uniform(-1000, 1000)
            let text = DecimalText.string(value, decimals: digits)
            #expect(parse(text) == Double(text), "\(text)")
        }
    }

    @Test("garbage is not a number", arguments: ["", " ", "abc", "1.2.3", "1e", "--1", "1,5", "0x10"])
    func garbage(_ text: String) {
        #expect(parse(text) == nil)
    }

    @Test("nan and inf parse to non-finite values for the caller to reject")
    func nonFinite() {
        #expect(parse("nan")?.isNaN == true)
        #expect(parse("inf")?.isInfinite == true)
        #expect(parse("1e999")?.isInfinite == true)
    }

    @Test("addresses parse as decimal or 0x hex", arguments: [("40407", 40407), ("0x9DD7", 0x9DD7), ("0x9dd7", 0x9DD7), (" 7 ", 7)])
    func addresses(_ text: String, _ expected: Int) {
        let v = Array(text.utf8).withUnsafeBufferPointer { CSVNumberParser.parseUnsigned($0, 0, $0.count) }
        #expect(v == UInt64(expected))
    }
}

@Suite("Fixed-decimal text")
struct DecimalTextTests {
    @Test("numbers are written with exactly the asked decimals, no exponent and no negative zero",
          arguments: [(1.5, 3, "1.500"), (-0.00004, 4, "0.0000"), (-0.00005, 4, "-0.0001"), (12.25, 1, "12.3"),
                      (0, 0, "0"), (123456.789, 2, "123456.79"), (-2.5, 0, "-3"), (1e20, 2, "100000000000000000000.00")])
    func fixed(_ x: Double, _ decimals: Int, _ expected: String) {
        #expect(DecimalText.string(x, decimals: decimals) == expected)
    }
}
