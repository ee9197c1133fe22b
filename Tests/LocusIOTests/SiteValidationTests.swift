import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// One invalid fixture and the error it must produce.
struct InvalidSiteCase: Sendable, CustomTestStringConvertible {
    var file: String
    var code: LocusErrorCode
    var jsonPath: String
    var line: Int
    var column: Int
    var messagePart: String
    var testDescription: String { "\(file) → \(code.rawValue) at \(jsonPath)" }
}

@Suite("Site decoder: invalid sites")
struct SiteValidationTests {
    static let cases: [InvalidSiteCase] = [
        .init(file: "missing-required-field.json", code: .siteMissingField, jsonPath: "floors[0].locators[1].y", line: 12, column: 9, messagePart: "'y' is missing"),
        .init(file: "missing-zone-polygon.json", code: .siteMissingField, jsonPath: "floors[0].zones[0].polygon", line: 16, column: 9, messagePart: "'polygon' is missing"),
        .init(file: "missing-floor-id.json", code: .siteMissingField, jsonPath: "floors[0].id", line: 4, column: 5, messagePart: "'id' is missing"),
        .init(file: "wrong-type.json", code: .siteWrongType, jsonPath: "floors[0].zones[0].inDist", line: 20, column: 21, messagePart: "expected a number, found a string"),
        .init(file: "wrong-type-call-inout.json", code: .siteWrongType, jsonPath: "floors[0].zones[1].callInout", line: 26, column: 24, messagePart: "expected a boolean"),
        .init(file: "wrong-type-root.json", code: .siteWrongType, jsonPath: "$", line: 1, column: 1, messagePart: "expected an object, found an array"),
        .init(file: "duplicate-floor-id.json", code: .siteDuplicateID, jsonPath: "floors[1].id", line: 30, column: 13, messagePart: "duplicate floor id \"1F\" (also at floors[0].id)"),
        .init(file: "duplicate-zone-id.json", code: .siteDuplicateID, jsonPath: "floors[0].zones[1].id", line: 22, column: 17, messagePart: "duplicate zone id \"a\" (also at floors[0].zones[0].id)"),
        .init(file: "duplicate-address.json", code: .siteDuplicateAddress, jsonPath: "floors[0].locators[2].address", line: 13, column: 21, messagePart: "duplicate address 0x9DD7 (also at floors[0].locators[0])"),
        .init(file: "non-finite-number.json", code: .siteNonFiniteNumber, jsonPath: "floors[0].locators[0].x", line: 11, column: 36, messagePart: "1e999"),
        .init(file: "negative-in-dist.json", code: .siteNegativeValue, jsonPath: "floors[0].zones[1].inDist", line: 26, column: 21, messagePart: "inDist must not be negative"),
        .init(file: "negative-in-count.json", code: .siteNegativeValue, jsonPath: "floors[0].zones[1].inCount", line: 26, column: 22, messagePart: "inCount must not be negative"),
        .init(file: "negative-in-count-interval.json", code: .siteNegativeValue, jsonPath: "floors[0].zones[1].inCountInterval", line: 26, column: 30, messagePart: "inCountInterval must not be negative"),
        .init(file: "negative-out-period.json", code: .siteNegativeValue, jsonPath: "floors[0].zones[1].outPeriod", line: 26, column: 24, messagePart: "outPeriod must not be negative"),
        .init(file: "negative-dwell-seconds.json", code: .siteNegativeValue, jsonPath: "floors[0].zones[1].dwellSeconds", line: 26, column: 27, messagePart: "dwellSeconds must not be negative"),
        .init(file: "negative-width.json", code: .siteNegativeValue, jsonPath: "floors[0].widthM", line: 7, column: 17, messagePart: "widthM must not be negative"),
        .init(file: "no-floor.json", code: .siteNoFloor, jsonPath: "floors", line: 3, column: 13, messagePart: "'floors' is empty"),
        .init(file: "missing-floors.json", code: .siteNoFloor, jsonPath: "floors", line: 1, column: 1, messagePart: "'floors' is missing"),
        .init(file: "polygon-too-few-vertices.json", code: .polygonTooFewVertices, jsonPath: "floors[0].zones[0].polygon", line: 19, column: 22, messagePart: "2 distinct vertices"),
        .init(file: "polygon-self-intersecting.json", code: .polygonSelfIntersecting, jsonPath: "floors[0].zones[1].polygon", line: 24, column: 22, messagePart: "self-intersecting"),
        .init(file: "polygon-zero-area.json", code: .polygonZeroArea, jsonPath: "floors[0].zones[0].polygon", line: 19, column: 22, messagePart: "no area"),
        .init(file: "invalid-address.json", code: .invalidLocatorAddress, jsonPath: "floors[0].locators[2].address", line: 13, column: 21, messagePart: "\"0x1FFFF\""),
        .init(file: "invalid-address-text.json", code: .invalidLocatorAddress, jsonPath: "floors[0].locators[1].address", line: 12, column: 21, messagePart: "\"anchor-7\""),
        .init(file: "address-out-of-range.json", code: .invalidLocatorAddress, jsonPath: "floors[0].locators[0].address", line: 11, column: 21, messagePart: "70000 is not a 16-bit integer"),
        .init(file: "non-integer-in-count.json", code: .siteValueOutOfRange, jsonPath: "floors[0].zones[0].inCount", line: 20, column: 22, messagePart: "whole number, found 1.5"),
        .init(file: "non-integer-priority.json", code: .siteValueOutOfRange, jsonPath: "floors[0].zones[1].priority", line: 25, column: 23, messagePart: "whole number, found 2.5"),
        .init(file: "empty-id.json", code: .siteValueOutOfRange, jsonPath: "floors[0].zones[1].id", line: 22, column: 17, messagePart: "must not be empty"),
    ]

    @Test("each invalid fixture yields its code, JSON path, file, line and column", arguments: cases)
    func invalidFixture(_ expected: InvalidSiteCase) {
        let path = TestPaths.fixture("sites/invalid/" + expected.file)
        do {
            let site = try SiteDecoder.load(path: path)
            Issue.record("decoded without error: \(site.floors.count) floors")
        } catch {
            #expect(error.code == expected.code)
            #expect(error.context.jsonPath == expected.jsonPath)
            #expect(error.context.file == path)
            #expect(error.context.line == expected.line, "\(error)")
            #expect(error.context.column == expected.column, "\(error)")
            #expect(error.message.contains(expected.messagePart), "message: \(error.message)")
        }
    }

    @Test("malformed JSON fixtures yield E5002 with line and column", arguments: [
        ("malformed-missing-comma.json", 3, 17, "expected ',' or '}'"),
        ("malformed-trailing-comma.json", 3, 35, "expected a member name"),
        ("malformed-unterminated-string.json", 2, 49, "not terminated"),
        ("malformed-lone-surrogate.json", 2, 46, "high surrogate"),
        ("malformed-leading-zero.json", 3, 28, "leading zero"),
    ] as [(String, Int, Int, String)])
    func malformedFixture(file: String, line: Int, column: Int, messagePart: String) {
        let path = TestPaths.fixture("sites/invalid/" + file)
        do {
            _ = try SiteDecoder.load(path: path)
            Issue.record("decoded without error")
        } catch {
            #expect(error.code == .malformedJSON)
            #expect(error.context.file == path)
            #expect(error.context.line == line)
            #expect(error.context.column == column)
            #expect(error.message.contains(messagePart), "message: \(error.message)")
            #expect(error.description.hasPrefix("\(path):\(line):\(column): "))
        }
    }

    @Test("every site rule code E3101…E3112 except E3001/E3002 has an invalid fixture")
    func everyRuleCovered() {
        let covered = Set(Self.cases.map(\.code))
        let siteCodes = LocusErrorCode.allCases.filter { $0.rawValue >= "E3101" && $0.rawValue <= "E3112" }
        #expect(Set(siteCodes) == covered)
    }
}
