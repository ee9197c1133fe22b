import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

@Suite("Site decoder: valid sites")
struct SiteDecoderTests {
    @Test("hall.json decodes with its values, defaults applied and addresses in all three forms")
    func hall() throws {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        #expect(site.building == Site.Building(id: "hq", name: "Head office", floorCount: 1))
        #expect(site.floors.count == 1)
        let floor = try #require(site.floor("1F"))
        #expect(floor.name == "Open hall")
        #expect(floor.widthMeters == 40 && floor.heightMeters == 25)
        #expect(floor.tagHeightMeters == 1.1)
        #expect(floor.sessionID == 4660)
        #expect(floor.isPositioningReady)
        #expect(floor.locators.count == 8)
        // "0x9DD7", "0x9dd8" (lower case), 40409 (JSON integer), "40410" (decimal string).
        #expect(floor.locators.map(\.address.rawValue) == [0x9DD7, 0x9DD8, 0x9DD9, 0x9DDA, 0x9DDB, 0x9DDC, 0x9DDD, 0x9DDE])
        #expect(floor.locators[0].position == Point3(x: 0.3, y: 0.3, z: 2.6))
        #expect(floor.locators[5].biasMeters == 0.12)
        #expect(floor.locators[0].biasMeters == 0)
        #expect(floor.locators[7].position.z == 2.55)

        #expect(floor.zones.map(\.id) == ["entrance", "reception", "lounge", "meeting-a", "meeting-b", "storage", "kitchen"])
        let byID = Dictionary(uniqueKeysWithValues: floor.zones.map { ($0.id, $0) })
        let reception = try #require(byID["reception"])
        #expect(reception.polygon.count == 4) // closing vertex dropped
        #expect(reception.rules.inDistanceMeters == 1.0)
        #expect(reception.rules.inCount == 2)
        #expect(reception.rules.inCountIntervalSeconds == 1.5)
        #expect(reception.rules.outPeriodSeconds == 4)
        #expect(reception.rules.priority == 1)
        #expect(reception.rules.dwellSeconds == ZoneRules.standard.dwellSeconds)
        #expect(byID["lounge"]?.rules == ZoneRules.standard) // every rule from the defaults
        #expect(byID["lounge"]?.name == "Lounge")
        #expect(byID["meeting-a"]?.rules.dwellSeconds == 60)
        #expect(byID["meeting-b"]?.rules.dwellSeconds == ZoneRules.standard.dwellSeconds) // null means the default
        #expect(byID["meeting-b"]?.rules.priority == 5)
        #expect(byID["storage"]?.rules.callInout == false)
        #expect(byID["kitchen"]?.rules.dwellSeconds == 0)
        #expect(byID["kitchen"]?.rules.priority == -1)
        #expect(byID["kitchen"]?.polygon.count == 5)
    }

    @Test("corridor.json decodes: 13 locators on both walls, 6 zones along the corridor")
    func corridor() throws {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/corridor.json"))
        let floor = try #require(site.floors.first)
        #expect(floor.id == "2F")
        #expect(floor.widthMeters == 60 && floor.heightMeters == 3)
        #expect(floor.locators.count == 13)
        #expect(Set(floor.locators.map(\.position.y)) == [0.1, 2.9])
        #expect(floor.zones.count == 6)
        #expect(floor.zones.allSatisfy { $0.rules.inCount == 2 })
        #expect(floor.zones.first { $0.id == "lifts" }?.rules.priority == 2)
    }

    @Test("poor-geometry.json decodes: 5 locators within 0.1 m of one line")
    func poorGeometry() throws {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/poor-geometry.json"))
        let floor = try #require(site.floors.first)
        #expect(floor.locators.count == 5)
        let ys = floor.locators.map(\.position.y)
        #expect((ys.max() ?? 0) - (ys.min() ?? 0) <= 0.1 + 1e-12)
        #expect(floor.originX == 0 && floor.originY == 0) // defaults
    }

    @Test("a minimal site: building optional, floor needs only an id; null counts as absent")
    func minimal() throws {
        let site = try SiteDecoder.decode(Array(#"{"floors": [{"id": 3, "sessionId": null, "zones": null}], "extra": {"x": [1]}}"#.utf8), file: "min.json")
        #expect(site.building.id == "")
        #expect(site.floors == [Floor(id: "3")])
        #expect(site.floors[0].isPositioningReady == false)
    }

    @Test("whole numbers may be written 2, 2.0 or 2e0; fractions and huge values are E3112", arguments: [
        ("2", nil), ("2.0", nil), ("2e0", nil), ("-3", nil), ("1.5", "whole number, found 1.5"),
        ("1e300", "within ±9.2e18, found 1e300"), ("\"2\"", "expected a number, found a string"),
    ] as [(String, String?)])
    func integerSpellings(literal: String, errorPart: String?) {
        let text = #"{"floors": [{"id": "F", "zones": [{"id": "z", "priority": "# + literal
            + #", "polygon": [{"x": 0, "y": 0}, {"x": 1, "y": 0}, {"x": 0, "y": 1}]}]}]}"#
        do {
            let site = try SiteDecoder.decode(Array(text.utf8), file: "p.json")
            #expect(errorPart == nil)
            #expect(site.floors.first?.zones.first?.rules.priority == (literal == "-3" ? -3 : 2))
        } catch {
            #expect(error.context.jsonPath == "floors[0].zones[0].priority")
            #expect(errorPart.map { error.message.contains($0) } == true, "\(error)")
        }
    }

    @Test("an unreadable file is E5001 naming the file")
    func unreadable() {
        let path = TestPaths.fixture("sites/does-not-exist.json")
        do {
            _ = try SiteDecoder.load(path: path)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .fileUnreadable)
            #expect(error.context.file == path)
        }
    }

    @Test("encoding then decoding gives the same site, for every valid fixture", arguments: ["hall.json", "corridor.json", "poor-geometry.json"])
    func roundTrip(name: String) throws {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/" + name))
        let bytes = SiteEncoder.encode(site)
        let again = try SiteDecoder.decode(bytes, file: "encoded-" + name)
        #expect(again == site)
        #expect(SiteEncoder.encode(again) == bytes) // byte-stable
    }

    @Test("the encoder writes biasM, addresses as hex strings and defaults explicitly; awkward values round-trip")
    func encoderDetails() throws {
        var floor = Floor(id: "F \"quoted\"", name: "é\n", widthMeters: 0.1 + 0.2, tagHeightMeters: 1e-7, sessionID: 0)
        floor.locators = [
            Locator(address: LocatorAddress(7), position: Point3(x: 1.0 / 3.0, y: -2, z: 2.6), biasMeters: -0.0421),
            Locator(address: LocatorAddress(0xFFFF), position: Point3(x: 123456.789, y: Double.leastNonzeroMagnitude, z: 0)),
        ]
        floor.zones = [Zone(id: "z", polygon: [Point2(x: 0, y: 0), Point2(x: 1, y: 0), Point2(x: 0, y: 1)])]
        let site = Site(building: Site.Building(id: "b", name: "B", floorCount: 1), floors: [floor])
        let bytes = SiteEncoder.encode(site)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#"{"address": "0x0007", "x": 0.3333333333333333, "y": -2, "z": 2.6, "biasM": -0.0421}"#))
        #expect(text.contains(#""address": "0xFFFF""#))
        #expect(text.contains(#""dwellSeconds": 5"#))
        #expect(text.hasSuffix("}\n"))
        #expect(try SiteDecoder.decode(bytes, file: "x.json") == site)
    }

    @Test("written back with its address notation, a site keeps each address as the file had it: a number stays a number, a string stays the same string")
    func addressNotationRoundTrip() throws {
        // hall.json mixes "0x9DD7", "0x9dd8", 40409 and "40410".
        let (site, notation) = try SiteDecoder.loadNotated(path: TestPaths.fixture("sites/hall.json"))
        #expect(notation[site.floors[0].id, LocatorAddress(40409)] == .number)
        #expect(notation[site.floors[0].id, LocatorAddress(0x9DD8)] == .string("0x9dd8"))
        let bytes = SiteEncoder.encode(site, addressNotation: notation)
        let text = String(decoding: bytes, as: UTF8.self)
        for spelling in [#""address": "0x9DD7","#, #""address": "0x9dd8","#, #""address": 40409,"#, #""address": "40410","#] {
            #expect(text.contains(spelling), "\(spelling) missing")
        }
        let (again, notationAgain) = try SiteDecoder.decodeNotated(bytes, file: "written.json")
        #expect(again == site)
        #expect(notationAgain == notation)
        #expect(SiteEncoder.encode(again, addressNotation: notationAgain) == bytes) // byte-stable

        // A zero address written as a number, and odd but valid strings, survive as given.
        let source = #"{"floors": [{"id": "F", "locators": [{"address": 0, "x": 0, "y": 0}, {"address": "0X00aB", "x": 1, "y": 0}, {"address": "007", "x": 2, "y": 0}]}]}"#
        let (small, smallNotation) = try SiteDecoder.decodeNotated(Array(source.utf8), file: "s.json")
        let written = String(decoding: SiteEncoder.encode(small, addressNotation: smallNotation), as: UTF8.self)
        #expect(written.contains(#"{"address": 0, "x": 0,"#))
        #expect(written.contains(#"{"address": "0X00aB", "x": 1,"#))
        #expect(written.contains(#"{"address": "007", "x": 2,"#))
        // Without a notation (a site built in code) every address is written as "0x…", as before.
        #expect(String(decoding: SiteEncoder.encode(small), as: UTF8.self).contains(#"{"address": "0x0000", "x": 0,"#))
    }
}
