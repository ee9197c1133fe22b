import Testing
import LocusCore
@testable import LocusZones

/// One hand-built case per rule of SPEC §4, with the expected events written out.
/// Zone `a` is [0, 4] × [0, 3]; default rules unless stated (inDist 3, inCount 1, interval 1,
/// outPeriod 3, priority 0, callInout true, dwell 5).
@Suite("Zone judgement rules (SPEC §4)")
struct ZoneJudgeRuleTests {
    let a = rectangle("a", 0, 0, 4, 3)

    @Test("the first detection enters with inCount 1")
    func enterOnFirstDetection() throws {
        #expect(try run([a], [fix(0.5, "T1", 2, 1)]) == ["0.5 T1 a enter"])
    }

    @Test("inCount 3 enters at the third detection within the interval")
    func inCountThree() throws {
        let zone = rectangle("a", 0, 0, 4, 3, rules(inCount: 3, interval: 1))
        #expect(try run([zone], still("T1", 2, 1, [0, 0.5, 1.0, 1.5])) == ["1.0 T1 a enter"])
    }

    @Test("a gap longer than inCountInterval restarts the count at 1")
    func countResetByGap() throws {
        let zone = rectangle("a", 0, 0, 4, 3, rules(inCount: 2, interval: 1))
        // 0 → count 1; 2 (gap 2 > 1) → count 1 again; 2.5 → count 2: enter.
        #expect(try run([zone], still("T1", 2, 1, [0, 2, 2.5])) == ["2.5 T1 a enter"])
    }

    @Test("non-detections neither count nor reset the entry count")
    func nonDetectionsNeutral() throws {
        let zone = rectangle("a", 0, 0, 4, 3, rules(inCount: 3, interval: 1))
        let fixes = [fix(0, "T1", 2, 1), fix(0.5, "T1", 50, 50), fix(1.0, "T1", 2, 1), fix(1.5, "T1", 2, 1)]
        // Counting the far fix would enter at 1.0; resetting would enter at 2.0 at the earliest.
        #expect(try run([zone], fixes) == ["1.5 T1 a enter"])
    }

    @Test("a higher-priority zone shadows a lower one: its detections stop, so it exits")
    func priorityShadowing() throws {
        let low = rectangle("lo", 0, 0, 10, 10, rules(inDist: 0, priority: 0))
        let high = rectangle("hi", 4, 4, 6, 6, rules(inDist: 0, priority: 1))
        let fixes = [fix(0, "T1", 1, 1)] + still("T1", 5, 5, [1, 2, 3, 4, 5, 6])
        #expect(try run([low, high], fixes) == [
            "0.0 T1 lo enter", "1.0 T1 hi enter", "3.0 T1 lo exit", "6.0 T1 hi dwell 5.0",
        ])
    }

    @Test("shadowed fixes do not count towards entry of the lower-priority zone")
    func shadowedFixesDoNotCount() throws {
        let low = rectangle("lo", 0, 0, 10, 10, rules(inDist: 0, inCount: 2, interval: 1, priority: 0))
        let high = rectangle("hi", 4, 4, 6, 6, rules(inDist: 0, inCount: 5, priority: 1))
        // lo sees detections at 0 and 2.5 only (hi shadows 0.5…2): the gap 2.5 > 1 restarts the count.
        let fixes = [fix(0, "T1", 1, 1)] + still("T1", 5, 5, [0.5, 1, 1.5, 2]) + still("T1", 1, 1, [2.5, 3])
        #expect(try run([low, high], fixes) == ["3.0 T1 lo enter"])
    }

    @Test("overlapping zones of equal priority both detect and both enter")
    func equalPriorityOverlap() throws {
        let first = rectangle("a", 0, 0, 4, 3, rules(inDist: 0))
        let second = rectangle("b", 2, 0, 6, 3, rules(inDist: 0))
        #expect(try run([first, second], [fix(0, "T1", 3, 1)]) == ["0.0 T1 a enter", "0.0 T1 b enter"])
    }

    @Test("inDist reaches outside the polygon: 3.0 m away qualifies, 3.01 m does not")
    func inDistReach() throws {
        #expect(try run([a], [fix(0, "T1", 7.01, 1), fix(1, "T1", 7, 1)]) == ["1.0 T1 a enter"])
    }

    @Test("a point on the boundary is inside even with inDist 0")
    func boundaryInside() throws {
        let zone = rectangle("a", 0, 0, 4, 3, rules(inDist: 0))
        #expect(try run([zone], [fix(0, "T1", 4.000001, 1.5), fix(1, "T1", 4, 1.5)]) == ["1.0 T1 a enter"])
        #expect(try run([zone], [fix(0, "T2", 4, 3)]) == ["0.0 T2 a enter"])
    }

    @Test("exit happens at tLast + outPeriod once the clock has passed it")
    func exitTime() throws {
        let fixes = still("T1", 2, 1, [0, 1]) + still("T1", 50, 50, [2, 3, 4, 5])
        #expect(try run([a], fixes) == ["0.0 T1 a enter", "4.0 T1 a exit"])
    }

    @Test("a detection exactly at tLast + outPeriod keeps the tag inside")
    func detectionAtDeadlineKeepsInside() throws {
        let fixes = still("T1", 2, 1, [0, 3]) + [fix(6.5, "T1", 50, 50)]
        #expect(try run([a], fixes) == ["0.0 T1 a enter", "5.0 T1 a dwell 5.0", "6.0 T1 a exit"])
        // Contrast: 0.01 s later the zone has already been left, and is entered again.
        let late = still("T1", 2, 1, [0, 3.01]) + [fix(6.5, "T1", 50, 50)]
        #expect(try run([a], late) == ["0.0 T1 a enter", "3.0 T1 a exit", "3.01 T1 a enter", "6.01 T1 a exit"])
    }

    @Test("dwell fires every dwellSeconds while inside, never at or after the exit time")
    func dwellSchedule() throws {
        // Inside 0…12 → exit at 15, which is also the third dwell time: that dwell does not fire.
        let fixes = still("T1", 2, 1, (0...12).map(Double.init))
        #expect(try run([a], fixes, advanceTo: 20) == [
            "0.0 T1 a enter", "5.0 T1 a dwell 5.0", "10.0 T1 a dwell 10.0", "15.0 T1 a exit",
        ])
    }

    @Test("dwellSeconds 0 gives no dwell events")
    func dwellOff() throws {
        let zone = rectangle("a", 0, 0, 4, 3, rules(dwell: 0))
        #expect(try run([zone], still("T1", 2, 1, (0...12).map(Double.init)), advanceTo: 20)
                == ["0.0 T1 a enter", "15.0 T1 a exit"])
    }

    @Test("callInout false suppresses enter and exit but keeps dwell")
    func callInoutFalse() throws {
        let zone = rectangle("a", 0, 0, 4, 3, rules(callInout: false))
        #expect(try run([zone], still("T1", 2, 1, (0...12).map(Double.init)), advanceTo: 20)
                == ["5.0 T1 a dwell 5.0", "10.0 T1 a dwell 10.0"])
    }

    @Test("the clock is shared by all tags: a silent tag exits while another reports")
    func sharedClock() throws {
        var judge = try ZoneJudge(floor: Floor(id: "F", zones: [a]))
        var events: [ZoneEvent] = []
        try judge.judge(fix(0, "T1", 2, 1), into: &events)
        for t in [1.0, 2, 3] { try judge.judge(fix(t, "T2", 50, 50), into: &events) }
        #expect(events.map(render) == ["0.0 T1 a enter"])   // exit at 3.0 not yet passed
        try judge.judge(fix(3.25, "T2", 50, 50), into: &events)
        #expect(events.map(render) == ["0.0 T1 a enter", "3.0 T1 a exit"])  // no finish needed
    }

    @Test("the end of a stream gives no synthetic exit, not even for a deadline at the last time")
    func noSyntheticExit() throws {
        #expect(try run([a], still("T1", 2, 1, [0, 1, 2])) == ["0.0 T1 a enter"])
        #expect(try run([a], [fix(0, "T1", 2, 1), fix(3, "T1", 50, 50)]) == ["0.0 T1 a enter"])
    }

    @Test("events at equal times come out exit, enter, dwell, then by tag, then by zone")
    func orderAtEqualTimes() throws {
        let zoneA = rectangle("a", 0, 0, 2, 2, rules(inDist: 0))
        let zoneB = rectangle("b", 10, 0, 12, 2, rules(inDist: 0))
        let zoneC = rectangle("c", 20, 0, 22, 2, rules(inDist: 0))
        let zoneX = rectangle("x", 30, 0, 34, 2, rules(inDist: 0))
        let zoneY = rectangle("y", 32, 0, 36, 2, rules(inDist: 0))
        var fixes = still("T3", 21, 1, [-2, -1, 0, 1, 2, 3]) + [fix(0, "T1", 1, 1)]
        fixes.sort { $0.timeSeconds < $1.timeSeconds }
        fixes += [fix(3, "B", 33, 1), fix(3, "A", 11, 1)]  // B before A, y/x order by the index
        #expect(try run([zoneY, zoneX, zoneC, zoneB, zoneA], fixes, advanceTo: 3.5) == [
            "-2.0 T3 c enter", "0.0 T1 a enter",
            "3.0 T1 a exit", "3.0 A b enter", "3.0 B x enter", "3.0 B y enter", "3.0 T3 c dwell 5.0",
        ])
    }

    @Test("with outPeriod 0 a one-fix visit reads enter then exit at the same time, never exit then enter")
    func instantVisit() throws {
        let zone = rectangle("a", 0, 0, 4, 3, rules(outPeriod: 0))
        let other = rectangle("b", 10, 0, 14, 3, rules(outPeriod: 0))
        let fixes = [fix(0, "T1", 2, 1), fix(0, "T0", 12, 1), fix(1, "T1", 50, 50)]
        #expect(try run([zone, other], fixes) == [
            "0.0 T0 b enter", "0.0 T0 b exit", "0.0 T1 a enter", "0.0 T1 a exit",
        ])
    }

    @Test("inCount 0 never enters")
    func inCountZero() throws {
        let zone = rectangle("a", 0, 0, 4, 3, rules(inCount: 0))
        #expect(try run([zone], still("T1", 2, 1, (0...40).map { Double($0) * 0.25 }), advanceTo: 30).isEmpty)
    }

    @Test("a fix older than the clock is judged at the clock's time")
    func staleFixRaisedToClock() throws {
        let fixes = [fix(5, "T2", 50, 50), fix(4, "T1", 2, 1)]
        #expect(try run([a], fixes) == ["5.0 T1 a enter"])
    }

    @Test("events are held while their place is open and released as soon as the clock moves on")
    func releaseLatency() throws {
        var judge = try ZoneJudge(floor: Floor(id: "F", zones: [a]))
        var events: [ZoneEvent] = []
        try judge.judge(fix(0, "T1", 2, 1), into: &events)
        #expect(events.isEmpty && judge.heldEventCount == 1)  // an exit or enter at 0.0 could still come
        try judge.advance(toSeconds: 0.001, into: &events)
        #expect(events.map(render) == ["0.0 T1 a enter"])
    }
}

@Suite("Zone judge state bookkeeping")
struct ZoneJudgeStateTests {
    @Test("after every tag has gone quiet and the clock has passed all exits, no pair is inside")
    func stateDrains() throws {
        let scene = RandomScene(seed: 5, tags: 5, zones: 10, durationSeconds: 60)
        var judge = try ZoneJudge(floor: Floor(id: "F", zones: scene.zones))
        var events: [ZoneEvent] = []
        for f in scene.fixes { try judge.judge(f, into: &events) }
        // A sixth tag stands in the first zone at the end, so something is inside before the advance.
        let corner = try #require(scene.zones.first?.polygon.first)
        let inZone = scene.zones[0].rules.inCount
        for k in 0..<max(1, inZone) { try judge.judge(fix(60 + 0.1 * Double(k), "X", corner.x, corner.y), into: &events) }
        #expect(inZone == 0 || !judge.zonesInside(for: "X").isEmpty)
        try judge.advance(toSeconds: 1_000, into: &events)
        for k in 0..<5 { #expect(judge.zonesInside(for: TagID("T\(k)")).isEmpty) }
        #expect(judge.zonesInside(for: "X").isEmpty)
        #expect(judge.heldEventCount == 0)
        // Only stale counting pairs may remain (freed lazily), at most one per (tag, zone).
        #expect(judge.activePairCount <= 6 * 10)
    }

    @Test("zonesInside reports the zones a tag is inside, by id")
    func zonesInside() throws {
        let zones = [rectangle("b", 0, 0, 4, 3, rules(inDist: 0)), rectangle("a", 2, 0, 6, 3, rules(inDist: 0)),
                     rectangle("c", 10, 0, 12, 3, rules(inDist: 0))]
        var judge = try ZoneJudge(floor: Floor(id: "F", zones: zones))
        var events: [ZoneEvent] = []
        try judge.judge(fix(0, "T1", 3, 1), into: &events)
        #expect(judge.zonesInside(for: "T1") == ["a", "b"])
        #expect(judge.zonesInside(for: "nobody").isEmpty)
    }
}
