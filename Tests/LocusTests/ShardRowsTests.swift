@testable import Locus
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

@Suite("Shard rows")
struct ShardRowsTests {
    /// What `route` does, written plainly: per shard an array, appended to.
    private func reference(_ rows: [TraceRow], shards: Int, lastTime: Double) -> (rows: [[TraceRow]], ordered: Bool, lastTime: Double) {
        var out = Array(repeating: [TraceRow](), count: shards)
        var last = lastTime
        for r in rows {
            if r.timeSeconds < last { return (out, false, last) }
            last = r.timeSeconds
            out[Int(r.tagIndex) % shards].append(r)
        }
        return (out, true, last)
    }

    @Test("rows go to shard tag mod shards in file order, as read (floors too: the group routes them); the memory grows and is reused")
    func routes() {
        var rng = SeededGenerator(seed: 15)
        for shards in [1, 3, 16] {
            let split = ShardRows(shards: shards)
            var lastTime = -Double.infinity, expectedLast = -Double.infinity
            var t = 0.0
            // Blocks of several sizes: 5,000 rows over 7 tags overflow the first 1,024 rows of room.
            for (b, size) in [5000, 10, 0, 3000].enumerated() {
                var rows: [TraceRow] = []
                for k in 0..<size {
                    t += Double(rng.next() % 3) * 0.001
                    rows.append(TraceRow(timeSeconds: t, rangeMeters: Double(k), tagIndex: Int32(rng.next() % 7),
                                         floorIndex: Int32(rng.next() % 4) - 1, line: Int32(b * 10_000 + k), locator: UInt16(k & 0xFFFF)))
                }
                let want = reference(rows, shards: shards, lastTime: expectedLast)
                expectedLast = want.lastTime
                let ordered = split.route(rows.span, lastTime: &lastTime)
                #expect(ordered)
                #expect(lastTime == expectedLast)
                #expect(split.count == want.rows.map(\.count).reduce(0, +))
                for s in 0..<shards {
                    #expect(Array(split.rows(ofShard: s)) == want.rows[s], "shards \(shards), block \(b), shard \(s)")
                }
            }
        }
    }

    @Test("a row earlier than the one before it, in the block or across blocks, stops the split with false")
    func outOfOrder() {
        let split = ShardRows(shards: 2)
        var lastTime = -Double.infinity
        func row(_ t: Double) -> TraceRow { TraceRow(timeSeconds: t, rangeMeters: 1, tagIndex: 0, floorIndex: -1, line: 1, locator: 1) }
        #expect(split.route([row(1), row(2), row(2)].span, lastTime: &lastTime))
        #expect(!split.route([row(3), row(2.5)].span, lastTime: &lastTime))
        var later = 5.0
        #expect(!split.route([row(4)].span, lastTime: &later))
    }
}
