@testable import Locus
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

@Suite("Shard rows")
struct ShardRowsTests {
    /// What `route` does, written plainly: per shard an array, appended to.
    private func reference(_ rows: [TraceRow], shards: Int, floorOf: [Int32?], defaultFloor: Int32, lastTime: Double)
        -> (rows: [[ShardedEngine.Row]], ordered: Bool, skips: SkipTally, lastTime: Double) {
        var out = Array(repeating: [ShardedEngine.Row](), count: shards)
        var skips = SkipTally()
        var last = lastTime
        for r in rows {
            if r.timeSeconds < last { return (out, false, skips, last) }
            last = r.timeSeconds
            var floor = defaultFloor
            if r.floorIndex >= 0 {
                guard let known = floorOf[Int(r.floorIndex)] else { skips.record(.unknownFloor, line: Int(r.line)); continue }
                floor = known
            }
            out[Int(r.tagIndex) % shards].append(ShardedEngine.Row(tag: r.tagIndex, floor: floor, locator: r.locator, line: r.line,
                                                                   rangeMeters: r.rangeMeters, timeSeconds: r.timeSeconds))
        }
        return (out, true, skips, last)
    }

    private func same(_ a: ShardedEngine.Row, _ b: ShardedEngine.Row) -> Bool {
        a.tag == b.tag && a.floor == b.floor && a.locator == b.locator && a.line == b.line
            && a.rangeMeters == b.rangeMeters && a.timeSeconds == b.timeSeconds
    }

    @Test("rows go to shard tag mod shards in file order, floors resolved, unknown floors counted; the memory grows and is reused")
    func routes() {
        var rng = SeededGenerator(seed: 15)
        let floorOf: [Int32?] = [2, nil, 0]
        for shards in [1, 3, 16] {
            let split = ShardRows(shards: shards)
            var lastTime = -Double.infinity, expectedLast = -Double.infinity
            var skips = SkipTally(), expectedSkips = SkipTally()
            var t = 0.0
            // Blocks of several sizes: 5,000 rows over 7 tags overflow the first 1,024 rows of room.
            for (b, size) in [5000, 10, 0, 3000].enumerated() {
                var rows: [TraceRow] = []
                for k in 0..<size {
                    t += Double(rng.next() % 3) * 0.001
                    rows.append(TraceRow(timeSeconds: t, rangeMeters: Double(k), tagIndex: Int32(rng.next() % 7),
                                         floorIndex: Int32(rng.next() % 4) - 1, line: Int32(b * 10_000 + k), locator: UInt16(k & 0xFFFF)))
                }
                let want = reference(rows, shards: shards, floorOf: floorOf, defaultFloor: 5, lastTime: expectedLast)
                expectedSkips.merge(want.skips)
                expectedLast = want.lastTime
                let ordered = split.route(rows.span, floorOf: floorOf, defaultFloor: 5, lastTime: &lastTime, skips: &skips)
                #expect(ordered)
                #expect(lastTime == expectedLast)
                #expect(skips == expectedSkips)
                #expect(split.count == want.rows.map(\.count).reduce(0, +))
                for s in 0..<shards {
                    let got = Array(split.rows(ofShard: s))
                    #expect(got.count == want.rows[s].count)
                    #expect(zip(got, want.rows[s]).allSatisfy(same), "shards \(shards), block \(b), shard \(s)")
                }
            }
        }
    }

    @Test("a row earlier than the one before it, in the block or across blocks, stops the split with false")
    func outOfOrder() {
        let split = ShardRows(shards: 2)
        var lastTime = -Double.infinity
        var skips = SkipTally()
        func row(_ t: Double) -> TraceRow { TraceRow(timeSeconds: t, rangeMeters: 1, tagIndex: 0, floorIndex: -1, line: 1, locator: 1) }
        #expect(split.route([row(1), row(2), row(2)].span, floorOf: [], defaultFloor: 0, lastTime: &lastTime, skips: &skips))
        #expect(!split.route([row(3), row(2.5)].span, floorOf: [], defaultFloor: 0, lastTime: &lastTime, skips: &skips))
        var later = 5.0
        #expect(!split.route([row(4)].span, floorOf: [], defaultFloor: 0, lastTime: &later, skips: &skips))
    }
}
