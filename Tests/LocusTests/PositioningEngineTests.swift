@testable import Locus
import LocusCore
import LocusSolvers
import Testing

@Suite("Positioning engine")
struct PositioningEngineTests {
    static let locators: [Point3] = [
        Point3(x: 0, y: 0, z: 2.5), Point3(x: 20, y: 0, z: 2.6), Point3(x: 20, y: 15, z: 2.5),
        Point3(x: 0, y: 15, z: 2.4), Point3(x: 10, y: -1, z: 2.5), Point3(x: 10, y: 16, z: 2.5),
    ]

    /// Raw least-squares fixes (no filter).
    static let raw = EngineConfiguration(tracking: .none)

    static func site(biases: [Double] = [0, 0, 0, 0, 0, 0]) -> Site {
        let locs = locators.enumerated().map { i, p in Locator(address: LocatorAddress(UInt16(100 + i)), position: p, biasMeters: biases[i]) }
        return Site(building: .init(id: "b"), floors: [
            Floor(id: "1F", tagHeightMeters: 1.2, sessionID: 1, locators: locs),
            Floor(id: "2F", tagHeightMeters: 1.2, sessionID: 2, locators: locs),
        ])
    }

    /// Ranging rounds at 4 Hz, locators 5 ms apart, exact ranges (plus biases) from a tag at `p`.
    static func rounds(_ p: Point3, count: Int, biases: [Double] = [0, 0, 0, 0, 0, 0], tag: TagID = "T1", floor: FloorID? = nil) -> [RangeMeasurement] {
        var out: [RangeMeasurement] = []
        for k in 0..<count {
            for (i, l) in locators.enumerated() {
                out.append(RangeMeasurement(timeSeconds: Double(k) * 0.25 + Double(i) * 0.005, tag: tag,
                                            locator: LocatorAddress(UInt16(100 + i)), rangeMeters: l.distance(to: p) + biases[i], floor: floor))
            }
        }
        return out
    }

    @Test("exact ranges give one fix per round at the true point")
    func exactRounds() throws {
        var engine = try PositioningEngine(site: Self.site(), configuration: Self.raw)
        let p = Point3(x: 7, y: 4, z: 1.2)
        for m in Self.rounds(p, count: 8) { engine.ingest(m) }
        engine.finish()
        let fixes = engine.drainFixes()
        #expect(fixes.count == 8)
        for f in fixes {
            #expect(f.position.distance(to: p) < 1e-6)
            #expect(f.quality.locatorsUsed == 6)
            #expect(f.floor == "1F")
        }
        #expect(abs(fixes[1].timeSeconds - 0.275) < 1e-12)
    }

    @Test("each locator's biasM is taken out of its ranges")
    func biasesRemoved() throws {
        let biases = [0.1, 0.2, 0.15, 0.3, 0.05, 0.25]
        var engine = try PositioningEngine(site: Self.site(biases: biases), configuration: Self.raw)
        let p = Point3(x: 12, y: 9, z: 1.2)
        for m in Self.rounds(p, count: 3, biases: biases) { engine.ingest(m) }
        engine.finish()
        for f in engine.drainFixes() { #expect(f.position.distance(to: p) < 1e-6) }
    }

    @Test("unknown anchors and floors are skipped and counted, never thrown")
    func unknownAnchorAndFloor() throws {
        var engine = try PositioningEngine(site: Self.site(), configuration: Self.raw)
        engine.ingest(RangeMeasurement(timeSeconds: 0, locator: LocatorAddress(999), rangeMeters: 3))
        engine.ingest(RangeMeasurement(timeSeconds: 0, locator: LocatorAddress(100), rangeMeters: 3, floor: "9F"))
        engine.ingest(RangeMeasurement(timeSeconds: 0, locator: LocatorAddress(100), rangeMeters: -1))
        #expect(engine.diagnostics.skipped.count(.unknownAnchor) == 1)
        #expect(engine.diagnostics.skipped.count(.unknownFloor) == 1)
        #expect(engine.diagnostics.skipped.count(.negativeRange) == 1)
    }

    @Test("an epoch with too few locators is counted by code and gives no fix")
    func tooFew() throws {
        var engine = try PositioningEngine(site: Self.site(), configuration: Self.raw)
        let all = Self.rounds(Point3(x: 5, y: 5, z: 1.2), count: 1)
        for m in all.prefix(2) { engine.ingest(m) }
        engine.finish()
        #expect(engine.drainFixes().isEmpty)
        #expect(engine.diagnostics.failedEpochs.map(\.code) == [.tooFewRanges])
    }

    @Test("tags are independent and rows may name their floor")
    func tagsAndFloors() throws {
        var engine = try PositioningEngine(site: Self.site(), configuration: Self.raw)
        let a = Self.rounds(Point3(x: 3, y: 3, z: 1.2), count: 2, tag: "A")
        let b = Self.rounds(Point3(x: 15, y: 10, z: 1.2), count: 2, tag: "B", floor: "2F")
        for m in zip(a, b).flatMap({ [$0.0, $0.1] }) { engine.ingest(m) }
        engine.finish()
        let fixes = engine.drainFixes()
        #expect(fixes.filter { $0.tag == "A" }.count == 2)
        #expect(fixes.filter { $0.tag == "B" }.allSatisfy { $0.floor == "2F" && $0.position.distance(to: Point3(x: 15, y: 10, z: 1.2)) < 1e-6 })
    }

    @Test("the engine learns the order in which tags' rounds open (the tag it prefetches next), and follows a change of it")
    func learnsRoundOrder() throws {
        var engine = try PositioningEngine(site: Self.site(), configuration: Self.raw)
        let p = Point3(x: 7, y: 4, z: 1.2)
        // One round (6 ranges over 25 ms) per tag, 0.2 s apart: every round opens an epoch of its own.
        var start = 0.0
        for order in [["A", "B", "C"], ["A", "B", "C"], ["C", "B", "A"]] as [[TagID]] {
            for tag in order {
                for m in Self.rounds(p, count: 1, tag: tag) {
                    engine.ingest(RangeMeasurement(timeSeconds: start + m.timeSeconds, tag: tag, locator: m.locator,
                                                   rangeMeters: m.rangeMeters, floor: nil))
                }
                start += 0.2
            }
        }
        let a = engine.tagIndex(for: "A").rawValue, b = engine.tagIndex(for: "B").rawValue, c = engine.tagIndex(for: "C").rawValue
        // Openings A B C A B C C B A: the latest successor of C is B, of B is A; A's is still B.
        #expect(engine.nextToOpen[c] == Int32(b))
        #expect(engine.nextToOpen[b] == Int32(a))
        #expect(engine.nextToOpen[a] == Int32(b))
        #expect(engine.lastOpened == a)
        engine.finish()
        #expect(engine.drainFixes().count == 9)
    }

    @Test("an unknown default floor is an error naming the floors")
    func unknownDefaultFloor() {
        #expect(throws: LocusError.self) {
            _ = try PositioningEngine(site: Self.site(), configuration: EngineConfiguration(defaultFloor: "XF"))
        }
    }
}
