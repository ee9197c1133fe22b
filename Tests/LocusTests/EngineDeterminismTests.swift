@testable import Locus
import LocusCore
import LocusIO
import LocusTestSupport
import Testing

@Suite("Engine order, zones and determinism")
struct EngineDeterminismTests {
    static func load() throws -> (Site, [RangeMeasurement]) {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        let trace = try TraceReader.read(path: TestPaths.fixture("traces/hall-walk.csv"))
        return (site, trace.timeOrder().map { trace.measurement($0) })
    }

    static func run(_ site: Site, _ rows: [RangeMeasurement], tracking: EngineConfiguration.Tracking,
                    ticks seed: UInt64?) throws -> ([PositionFix], [ZoneEvent]) {
        var engine = try PositioningEngine(site: site, configuration: EngineConfiguration(tracking: tracking))
        var fixes: [PositionFix] = [], events: [ZoneEvent] = []
        var rng = seed.map { SeededGenerator(seed: $0) }
        for (i, m) in rows.enumerated() {
            engine.ingest(m)
            if rng != nil, i + 1 < rows.count {
                // A timer tick somewhere between this row and the next (never beyond it), and a
                // drain now and then, as a live caller would.
                let next = rows[i + 1].timeSeconds
                if let u = rng?.nextUnit(), u < 0.3 {
                    engine.advance(toSeconds: m.timeSeconds + (next - m.timeSeconds) * (rng?.nextUnit() ?? 0))
                }
                if let u = rng?.nextUnit(), u < 0.1 {
                    fixes += engine.drainFixes()
                    events += engine.drainEvents()
                }
            }
        }
        engine.finish()
        return (fixes + engine.drainFixes(), events + engine.drainEvents())
    }

    @Test("takeFixes/takeEvents hand over what drainFixes/drainEvents would, with each fix's tag index, and leave nothing behind")
    func takeEqualsDrain() throws {
        let (site, rows) = try Self.load()
        let reference = try Self.run(site, rows, tracking: .kalman(.standard), ticks: nil)
        var engine = try PositioningEngine(site: site, configuration: EngineConfiguration(tracking: .kalman(.standard)))
        var fixes: [PositionFix] = [], events: [ZoneEvent] = []
        var indexOK = true
        for (i, m) in rows.enumerated() {
            engine.ingest(m)
            if i % 97 == 96 {
                var copy = engine  // (for its tag table; the engine itself is not touched)
                engine.takeFixes { taken, tags in
                    // Each fix's tag index is its tag's (`tagIndex(for:)` only looks a known id up).
                    #expect(taken.count == tags.count)
                    indexOK = indexOK && zip(taken, tags).allSatisfy { f, t in Int32(copy.tagIndex(for: f.tag).rawValue) == t }
                    fixes += taken
                }
                engine.takeEvents { events += $0 }
                #expect(engine.drainFixes().isEmpty && engine.drainEvents().isEmpty)
            }
        }
        engine.finish()
        engine.takeFixes { taken, tags in
            #expect(taken.count == tags.count)
            fixes += taken
        }
        engine.takeEvents { events += $0 }
        #expect(indexOK)
        #expect(fixes == reference.0)
        #expect(events == reference.1)
    }

    @Test("fixes come out in (time, tag) order and zone events in SPEC §4.7 order")
    func ordered() throws {
        let (site, rows) = try Self.load()
        for tracking in [EngineConfiguration.Tracking.none, .kalman(.standard)] {
            let (fixes, events) = try Self.run(site, rows, tracking: tracking, ticks: nil)
            #expect(fixes.count > 600)
            #expect(zip(fixes, fixes.dropFirst()).allSatisfy { a, b in
                a.timeSeconds < b.timeSeconds || (a.timeSeconds == b.timeSeconds && a.tag <= b.tag)
            })
            #expect(!events.isEmpty)
            #expect(zip(events, events.dropFirst()).allSatisfy { a, b in a.timeSeconds <= b.timeSeconds })
            #expect(fixes.allSatisfy { $0.position.isFinite && $0.covariance.isFinite })
        }
    }

    @Test("the same rows with timer ticks and drains in between give identical fixes and events",
          arguments: [UInt64(1), 2, 3])
    func tickInvariance(seed: UInt64) throws {
        let (site, rows) = try Self.load()
        for tracking in [EngineConfiguration.Tracking.none, .kalman(.standard)] {
            let reference = try Self.run(site, rows, tracking: tracking, ticks: nil)
            let ticked = try Self.run(site, rows, tracking: tracking, ticks: seed)
            #expect(ticked.0 == reference.0)
            #expect(ticked.1 == reference.1)
        }
    }

    @Test("a tag that stops reporting exits its zone once the clock passes tLast + outPeriod")
    func silentTagExits() throws {
        let locators = [Point3(x: 0, y: 0, z: 2.5), Point3(x: 20, y: 0, z: 2.5), Point3(x: 20, y: 20, z: 2.5), Point3(x: 0, y: 20, z: 2.5)]
        let zone = Zone(id: "z", polygon: [Point2(x: 4, y: 4), Point2(x: 8, y: 4), Point2(x: 8, y: 8), Point2(x: 4, y: 8)])
        let floor = Floor(id: "F", tagHeightMeters: 1, sessionID: 1,
                          locators: locators.enumerated().map { Locator(address: LocatorAddress(UInt16($0.offset)), position: $0.element) },
                          zones: [zone])
        var engine = try PositioningEngine(site: Site(building: .init(id: "b"), floors: [floor]),
                                           configuration: EngineConfiguration(tracking: .none))
        let a = Point3(x: 6, y: 6, z: 1), b = Point3(x: 15, y: 15, z: 1)
        for k in 0..<4 {  // tag A inside for 1 s, then silent
            for (i, l) in locators.enumerated() {
                engine.ingest(RangeMeasurement(timeSeconds: Double(k) * 0.25 + Double(i) * 0.002, tag: "A",
                                               locator: LocatorAddress(UInt16(i)), rangeMeters: l.distance(to: a)))
            }
        }
        for k in 4..<40 {  // tag B far away keeps the clock moving
            for (i, l) in locators.enumerated() {
                engine.ingest(RangeMeasurement(timeSeconds: Double(k) * 0.25 + Double(i) * 0.002, tag: "B",
                                               locator: LocatorAddress(UInt16(i)), rangeMeters: l.distance(to: b)))
            }
        }
        engine.finish()
        let events = engine.drainEvents().filter { $0.tag == "A" }
        #expect(events.map(\.kind) == [.enter, .exit])
        #expect(abs(events[0].timeSeconds - 0.006) < 1e-9)
        #expect(abs(events[1].timeSeconds - (0.756 + 3)) < 1e-9)
    }
}
