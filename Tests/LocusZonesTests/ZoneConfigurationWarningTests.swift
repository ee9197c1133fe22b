import Testing
import LocusCore
@testable import LocusZones

@Suite("Zone configuration warnings")
struct ZoneConfigurationWarningTests {
    /// A 40 × 25 m floor with three locators near the origin.
    func floor(_ zones: [Zone], locators: [Point2]? = nil) -> Floor {
        let at = locators ?? [Point2(x: 0, y: 0), Point2(x: 20, y: 0), Point2(x: 0, y: 20)]
        return Floor(id: "1F", originX: 0, originY: 0, widthMeters: 40, heightMeters: 25,
                     locators: at.enumerated().map { Locator(address: LocatorAddress(UInt16($0.offset + 1)),
                                                            position: Point3(x: $0.element.x, y: $0.element.y, z: 2.5)) },
                     zones: zones)
    }

    func keys(_ f: Floor) -> [String] {
        ZoneJudge.warnings(for: f).map { "\($0.zone) \($0.kind.rawValue)" }
    }

    @Test("a well-configured zone gives no warning")
    func clean() {
        #expect(keys(floor([rectangle("ok", 5, 5, 10, 10)])).isEmpty)
    }

    @Test("inCount 0 and an inCountInterval shorter than the position period are warned about")
    func inCountWarnings() {
        let f = floor([rectangle("never", 5, 5, 10, 10, rules(inCount: 0)),
                       rectangle("tooFast", 5, 5, 10, 10, rules(inCount: 3, interval: 0.1)),
                       rectangle("fine", 5, 5, 10, 10, rules(inCount: 3, interval: 0.25))])
        #expect(keys(f) == ["never zone.inCount.zero", "tooFast zone.inCountInterval.tooShort"])
        #expect(ZoneJudge.warnings(for: f)[1].message.contains("'tooFast'"))
    }

    @Test("zones fully or partly outside the floor rectangle are warned about, saying which")
    func outsideFloor() {
        let f = floor([rectangle("out", 50, 5, 55, 10), rectangle("part", 38, 5, 45, 10)],
                      locators: [Point2(x: 40, y: 0), Point2(x: 40, y: 25), Point2(x: 30, y: 10)])
        #expect(keys(f) == ["out zone.outsideFloor", "part zone.partlyOutsideFloor"])
    }

    @Test("a zone with fewer than 3 locators within 30 m is warned about")
    func coverage() {
        let f = floor([rectangle("far", 35, 20, 40, 25), rectangle("near", 0, 0, 5, 5)],
                      locators: [Point2(x: 30, y: 5), Point2(x: 10, y: 0), Point2(x: 0, y: 10)])
        // "far" is 15.8 m from (30, 5), 32.0 m from (10, 0), 36.4 m from (0, 10): 1 locator within 30 m.
        #expect(keys(f) == ["far zone.noLocatorCoverage"])
        #expect(ZoneJudge.warnings(for: f)[0].message.contains("1 locator"))
    }
}

@Suite("Zone judge configuration warnings")
struct ZoneJudgeConfigurationWarningTests {
    @Test("a judge reports the warnings of its current zones with its options, also after a reload")
    func judgeWarnings() throws {
        let locators = [Point2(x: 0, y: 0), Point2(x: 10, y: 0), Point2(x: 0, y: 10)].enumerated().map {
            Locator(address: LocatorAddress(UInt16($0.offset + 1)), position: Point3(x: $0.element.x, y: $0.element.y, z: 2))
        }
        let zone = rectangle("fast", 1, 1, 3, 3, rules(inCount: 2, interval: 0.3))
        let floor = Floor(id: "1F", widthMeters: 20, heightMeters: 20, locators: locators, zones: [zone])
        var judge = try ZoneJudge(floor: floor)
        #expect(judge.configurationWarnings.isEmpty)   // 0.3 s ≥ 0.25 s at 4 Hz
        let slow = ZoneJudgeOptions(positionPeriodSeconds: 0.5, coverageRangeMeters: 30, minimumCoveringLocators: 3)
        #expect(try ZoneJudge(floor: floor, options: slow).configurationWarnings.map(\.kind) == [.inCountIntervalTooShort])
        var events: [ZoneEvent] = []
        try judge.refreshZones([rectangle("never", 1, 1, 3, 3, rules(inCount: 0))], atSeconds: 0, into: &events)
        #expect(judge.configurationWarnings.map(\.description)
                == ["zone.inCount.zero: zone 'never' has inCount 0 and never enters"])
    }
}

@Suite("Zone outPeriod warning and multi-floor merge")
struct ZoneOutPeriodAndMergeTests {
    @Test("an outPeriod shorter than the position period is warned about")
    func outPeriodTooShort() {
        let f = Floor(id: "1F", zones: [rectangle("flicker", 0, 0, 1, 1, rules(outPeriod: 0.2))])
        #expect(ZoneJudge.warnings(for: f).map(\.kind) == [.outPeriodTooShort, .noLocatorCoverage])
    }

    @Test("merging two floors' streams keeps §4.7 order and each instant exit after its enter")
    func mergeFloors() throws {
        var first = try ZoneJudge(floor: Floor(id: "1F", zones: [rectangle("a", 0, 0, 4, 3, rules(outPeriod: 0))]))
        var second = try ZoneJudge(floor: Floor(id: "2F", zones: [rectangle("b", 0, 0, 4, 3)]))
        var e1: [ZoneEvent] = [], e2: [ZoneEvent] = []
        try first.judge(fix(0, "T2", 1, 1), into: &e1)
        try first.judge(fix(3, "T2", 50, 50), into: &e1)
        try second.judge(fix(0, "T1", 1, 1), into: &e2)
        try second.judge(fix(3, "T1", 50, 50), into: &e2)
        first.finish(into: &e1); second.finish(into: &e2)
        let merged = ZoneJudge.merge([e1, e2]).map { "\(render($0)) \($0.floor)" }
        #expect(merged == ["0.0 T1 b enter 2F", "0.0 T2 a enter 1F", "0.0 T2 a exit 1F"])
        // A plain sort by ZoneEvent.precedes would put the instant exit first:
        #expect((e1 + e2).sorted(by: ZoneEvent.precedes).first?.kind == .exit)
    }
}
