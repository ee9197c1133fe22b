import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// `SiteDecoder.validate`: every problem of a site file, with `decode` throwing the first of them.
@Suite("Site decoder: every error of a file")
struct SiteValidateTests {
    /// One expected error: code, JSON path, line, column and a part of the message.
    struct Expected: Sendable {
        var code: LocusErrorCode
        var jsonPath: String
        var line: Int
        var column: Int
        var messagePart: String
    }

    /// The faults planted in `invalid/multiple-errors.json`, in the order the walk meets them (a
    /// floor's duplicate id after the floor's own contents).
    static let multiple: [Expected] = [
        .init(code: .siteNegativeValue, jsonPath: "floors[0].widthM", line: 7, column: 17, messagePart: "widthM must not be negative, found -40"),
        .init(code: .invalidLocatorAddress, jsonPath: "floors[0].locators[1].address", line: 12, column: 21, messagePart: "70000 is not a 16-bit integer"),
        .init(code: .siteWrongType, jsonPath: "floors[0].locators[2].x", line: 13, column: 36, messagePart: "expected a number, found a string"),
        .init(code: .siteDuplicateAddress, jsonPath: "floors[0].locators[3].address", line: 14, column: 21, messagePart: "duplicate address 0x9DD7 (also at floors[0].locators[0])"),
        .init(code: .siteValueOutOfRange, jsonPath: "floors[0].zones[0].inCount", line: 21, column: 22, messagePart: "whole number, found 1.5"),
        .init(code: .siteDuplicateID, jsonPath: "floors[0].zones[1].id", line: 24, column: 17, messagePart: "duplicate zone id \"a\" (also at floors[0].zones[0].id)"),
        .init(code: .siteMissingField, jsonPath: "floors[1].locators[0].y", line: 34, column: 9, messagePart: "required field 'y' is missing"),
        .init(code: .polygonTooFewVertices, jsonPath: "floors[1].zones[0].polygon", line: 37, column: 32, messagePart: "2 distinct vertices"),
        .init(code: .siteDuplicateID, jsonPath: "floors[1].id", line: 31, column: 13, messagePart: "duplicate floor id \"1F\" (also at floors[0].id)"),
    ]

    @Test("a file with nine faults in different places gives all nine, each with its code, path, line and column; decode throws the first")
    func multipleErrors() {
        let path = TestPaths.fixture("sites/invalid/multiple-errors.json")
        let (site, errors) = SiteDecoder.validate(path: path)
        #expect(site == nil)
        #expect(errors.count == Self.multiple.count, "\(errors.map(\.description))")
        for (error, expected) in zip(errors, Self.multiple) {
            #expect(error.code == expected.code, "\(error)")
            #expect(error.context.jsonPath == expected.jsonPath, "\(error)")
            #expect(error.context.file == path)
            #expect(error.context.line == expected.line, "\(error)")
            #expect(error.context.column == expected.column, "\(error)")
            #expect(error.message.contains(expected.messagePart), "\(error)")
        }
        do {
            _ = try SiteDecoder.load(path: path)
            Issue.record("expected an error")
        } catch {
            #expect(error == errors.first)
        }
    }

    @Test("each single-fault fixture gives exactly its one error, the one decode throws: one mistake, one error",
          arguments: SiteValidationTests.cases.map(\.file) + ["malformed-missing-comma.json", "malformed-trailing-comma.json",
                                                               "malformed-unterminated-string.json", "malformed-lone-surrogate.json",
                                                               "malformed-leading-zero.json"])
    func singleFault(file: String) {
        let path = TestPaths.fixture("sites/invalid/" + file)
        let (site, errors) = SiteDecoder.validate(path: path)
        #expect(site == nil)
        #expect(errors.count == 1, "\(errors.map(\.description))")
        do {
            _ = try SiteDecoder.load(path: path)
            Issue.record("expected an error")
        } catch {
            #expect(errors == [error])
        }
    }

    @Test("a valid file gives its site and no error", arguments: ["hall.json", "corridor.json", "poor-geometry.json"])
    func valid(name: String) throws {
        let path = TestPaths.fixture("sites/" + name)
        let (site, errors) = SiteDecoder.validate(path: path)
        #expect(errors.isEmpty)
        #expect(site == (try SiteDecoder.load(path: path)))
    }

    @Test("what depends on a failed part is not checked again; duplicates are all reported against the first")
    func noCascades() {
        let text = """
        {"floors": [
          {"id": "F", "locators": [{"address": "zz", "x": 0, "y": 0}, {"address": "zz", "x": 1, "y": 0},
                                   {"address": 7, "x": 0, "y": 1}, {"address": 7, "x": 2, "y": "1"}, {"address": "0x7", "x": 3, "y": 1}],
           "zones": [{"id": "z", "polygon": [{"x": 0, "y": 0}, {"x": "1", "y": 0}, {"x": 0, "y": 1}]},
                     {"polygon": [{"x": 0, "y": 0}, {"x": 1, "y": 0}, {"x": 0, "y": 1}]},
                     {"polygon": [{"x": 0, "y": 0}, {"x": 1, "y": 0}, {"x": 0, "y": 1}]}, 5]},
          {"id": "F"}, {"id": "F", "locators": {}}, {"name": "no id"}
        ]}
        """
        let (site, errors) = SiteDecoder.validate(Array(text.utf8), file: "s.json")
        #expect(site == nil)
        let found = errors.map { "\($0.code.rawValue) \($0.context.jsonPath ?? "")" }
        #expect(found == [
            "E3111 floors[0].locators[0].address", "E3111 floors[0].locators[1].address",
            "E3102 floors[0].locators[3].y", "E3104 floors[0].locators[3].address", "E3104 floors[0].locators[4].address",
            "E3102 floors[0].zones[0].polygon[1].x", "E3101 floors[0].zones[1].id", "E3101 floors[0].zones[2].id",
            "E3102 floors[0].zones[3]",
            "E3103 floors[1].id", "E3102 floors[2].locators", "E3103 floors[2].id", "E3101 floors[3].id",
        ], "\(errors.map(\.description))")
        #expect(errors.allSatisfy { $0.context.file == "s.json" && $0.context.line != nil && $0.context.column != nil })
        #expect(errors[9].message == "duplicate floor id \"F\" (also at floors[0].id)")
        #expect(errors[11].message == "duplicate floor id \"F\" (also at floors[0].id)")
    }

    @Test("an implausible biasSlope is reported with file, line and column, like every other error")
    func biasSlopePosition() {
        let text = #"{"floors": [{"id": "F", "locators": [{"address": 1, "x": 0, "y": 0, "biasSlope": 0.9}]}]}"#
        let (_, errors) = SiteDecoder.validate(Array(text.utf8), file: "s.json")
        #expect(errors.map(\.description) == ["s.json:1:82: floors[0].locators[0].biasSlope: biasSlope 0.9 is not a plausible range scale error (|s| < 0.5) [E3112]"])
    }

    @Test("JSON that does not parse gives its one parse error; an unreadable file its one E5001")
    func parseAndReadErrors() {
        let (site, errors) = SiteDecoder.validate(Array(#"{"floors": [1, 2,]}"#.utf8), file: "m.json")
        #expect(site == nil)
        #expect(errors.count == 1 && errors.first?.code == .malformedJSON && errors.first?.context.file == "m.json")
        let missing = SiteDecoder.validate(path: TestPaths.fixture("sites/does-not-exist.json"))
        #expect(missing.site == nil && missing.errors.map(\.code) == [.fileUnreadable])
    }
}
