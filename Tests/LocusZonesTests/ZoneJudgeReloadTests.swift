import Testing
import LocusCore
@testable import LocusZones

@Suite("Zone hot reload")
struct ZoneJudgeReloadTests {
    let a = rectangle("a", 0, 0, 4, 3)

    /// Fixes, a reload at `reloadAt`, more fixes, finish.
    func run(_ zones: [Zone], _ before: [ZoneFix], reloadAt: Double, _ newZones: [Zone], _ after: [ZoneFix],
             advanceTo: Double? = nil) throws -> [String] {
        var judge = try ZoneJudge(floor: Floor(id: "F", zones: zones))
        var events: [ZoneEvent] = []
        for f in before { try judge.judge(f, into: &events) }
        try judge.refreshZones(newZones, atSeconds: reloadAt, into: &events)
        for f in after { try judge.judge(f, into: &events) }
        if let t = advanceTo { try judge.advance(toSeconds: t, into: &events) }
        judge.finish(into: &events)
        return events.map(render)
    }

    @Test("an unchanged zone keeps its state across a reload, even when renamed")
    func unchangedKeepsState() throws {
        var renamed = a
        renamed.name = "Renamed"
        let events = try run([a], still("T1", 2, 1, [0, 1, 2, 3, 4, 5, 6]), reloadAt: 6.5,
                             [rectangle("b", 20, 20, 21, 21), renamed], still("T1", 2, 1, [7, 8, 9, 10, 11]))
        #expect(events == ["0.0 T1 a enter", "5.0 T1 a dwell 5.0", "10.0 T1 a dwell 10.0"])
    }

    @Test("a removed zone that was inside exits at the reload time, and a dwell due then is dropped")
    func removedExits() throws {
        #expect(try run([a], still("T1", 2, 1, [0, 1, 2]), reloadAt: 2.5, [], [], advanceTo: 10)
                == ["0.0 T1 a enter", "2.5 T1 a exit"])
        #expect(try run([a], still("T1", 2, 1, [0, 1, 2, 3, 4, 5]), reloadAt: 5, [], [], advanceTo: 10)
                == ["0.0 T1 a enter", "5.0 T1 a exit"])
    }

    @Test("a changed zone exits at the reload time and starts outside, so the next detection enters")
    func changedRestarts() throws {
        let bigger = rectangle("a", 0, 0, 5, 3)
        #expect(try run([a], still("T1", 2, 1, [0, 1, 2]), reloadAt: 2.5, [bigger], still("T1", 2, 1, [3]))
                == ["0.0 T1 a enter", "2.5 T1 a exit", "3.0 T1 a enter"])
        let slower = rectangle("a", 0, 0, 4, 3, rules(outPeriod: 10))
        #expect(try run([a], still("T1", 2, 1, [0, 1, 2]), reloadAt: 2.5, [slower], still("T1", 2, 1, [3]))
                == ["0.0 T1 a enter", "2.5 T1 a exit", "3.0 T1 a enter"])
    }

    @Test("a new zone starts outside and is entered on the next detection")
    func newZoneStartsOutside() throws {
        let b = rectangle("b", 1, 0, 3, 2)
        #expect(try run([a], still("T1", 2, 1, [0, 1]), reloadAt: 1.5, [a, b], still("T1", 2, 1, [2]))
                == ["0.0 T1 a enter", "2.0 T1 b enter"])
    }

    @Test("a removed zone with callInout false stops without an exit event")
    func removedSilent() throws {
        let quiet = rectangle("a", 0, 0, 4, 3, rules(callInout: false))
        #expect(try run([quiet], still("T1", 2, 1, [0, 1, 2, 3, 4, 5, 6]), reloadAt: 6.5, [], [], advanceTo: 20)
                == ["5.0 T1 a dwell 5.0"])
    }

    @Test("an invalid reload throws and leaves the judge as it was")
    func invalidReload() throws {
        var judge = try ZoneJudge(floor: Floor(id: "F", zones: [a]))
        var events: [ZoneEvent] = []
        for f in still("T1", 2, 1, [0, 1]) { try judge.judge(f, into: &events) }
        let bowTie = Zone(id: "a", polygon: [Point2(x: 0, y: 0), Point2(x: 2, y: 2), Point2(x: 2, y: 0), Point2(x: 0, y: 2)])
        do { try judge.refreshZones([bowTie], atSeconds: 1.5, into: &events); Issue.record("accepted a bow tie") } catch {
            #expect(error.code == .polygonSelfIntersecting)
        }
        for f in still("T1", 2, 1, [2, 3, 4, 5]) { try judge.judge(f, into: &events) }
        judge.finish(into: &events)
        #expect(events.map(render) == ["0.0 T1 a enter", "5.0 T1 a dwell 5.0"])
    }
}

@Suite("Zone hot reload at the entry time")
struct ZoneJudgeReloadAtEntryTests {
    @Test("a visit entered at the reload time itself is dropped whole; a detection after the reload enters again")
    func reloadAtEntryTime() throws {
        let a = rectangle("a", 0, 0, 4, 3)
        var judge = try ZoneJudge(floor: Floor(id: "F", zones: [a]))
        var events: [ZoneEvent] = []
        try judge.judge(fix(1, "T1", 2, 1), into: &events)
        try judge.refreshZones([rectangle("a", 0, 0, 5, 3)], atSeconds: 1, into: &events)
        try judge.judge(fix(1, "T1", 2, 1), into: &events)
        try judge.advance(toSeconds: 10, into: &events)
        judge.finish(into: &events)
        #expect(events.map(render) == ["1.0 T1 a enter", "4.0 T1 a exit"])
    }
}
