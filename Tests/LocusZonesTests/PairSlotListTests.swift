import Testing
import LocusCore
@testable import LocusZones

@Suite("A tag's pair slot list (four inline, the rest in an array)")
struct PairSlotListTests {
    @Test("appends and swap-removes give exactly what an array with swapAt + removeLast gives", arguments: [1, 2, 3])
    func againstArray(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        var list = PairSlotList()
        var reference: [Int32] = []
        for step in 0..<5_000 {
            if reference.isEmpty || (reference.count < 12 && rng.next() % 2 == 0) {
                let v = Int32(truncatingIfNeeded: rng.next() % 1000)
                list.append(v)
                reference.append(v)
            } else {
                let i = Int(rng.next() % UInt64(reference.count))
                list.swapRemove(at: i)
                reference.swapAt(i, reference.count - 1)
                reference.removeLast()
            }
            #expect(Array(list) == reference, "step \(step)")
            #expect(list.count == reference.count)
        }
    }

    @Test("the judge's events do not depend on how many pairs a tag holds at once (more than four spill over)")
    func manyPairsOfOneTag() throws {
        // Six overlapping zones around one point: a tag standing there is counting or inside in all
        // six at once (two past the inline four), then walks away and leaves every one of them.
        var zones: [Zone] = []
        for k in 0..<6 {
            let x = 10 + Double(k) * 0.3
            zones.append(Zone(id: ZoneID("z\(k)"), polygon: [Point2(x: x, y: 10), Point2(x: x + 2, y: 10), Point2(x: x + 2, y: 12), Point2(x: x, y: 12)],
                              rules: ZoneRules(inDistanceMeters: 0.5, inCount: 2, inCountIntervalSeconds: 1, outPeriodSeconds: 1,
                                               priority: 0, callInout: true, dwellSeconds: 0)))
        }
        let floor = Floor(id: "1F", originX: 0, originY: 0, widthMeters: 40, heightMeters: 25, tagHeightMeters: 1, sessionID: 1,
                          locators: [], zones: zones)
        var judge = try ZoneJudge(floor: floor)
        var events: [ZoneEvent] = []
        for i in 0..<8 {
            try judge.judge(ZoneFix(timeSeconds: Double(i) * 0.25, tag: TagID("t"), point: Point2(x: 11.9, y: 11)), tag: TagIndex(0), into: &events)
        }
        #expect(events.filter { $0.kind == .enter }.map(\.zone) == (0..<6).map { ZoneID("z\($0)") })
        for i in 8..<20 {
            try judge.judge(ZoneFix(timeSeconds: Double(i) * 0.25, tag: TagID("t"), point: Point2(x: 30, y: 20)), tag: TagIndex(0), into: &events)
        }
        #expect(Set(events.filter { $0.kind == .exit }.map(\.zone)) == Set((0..<6).map { ZoneID("z\($0)") }))
        #expect(judge.retainedCounts.pairs == 0)
    }
}
