import LocusCore
import LocusIO

/// A block of trace rows split by shard for `ShardedEngine.ingest(_:)`: per shard, the rows of its
/// tags in file order, as the reader gave them (the group routes them by id, through its shards'
/// drivers, as one engine's driver would). Memory of its own, reused block after block
/// (`route` empties it first), so that placing a row is a store — not an `Array` append with its
/// uniqueness and capacity checks (what that cost: docs/benchmarks.md, "Figures behind the code").
///
/// A reference type: the reading stage fills it and hands it to the shards' threads, one stage at
/// a time (hence `@unchecked Sendable`).
package final class ShardRows: @unchecked Sendable {
    /// Per shard: its rows' memory, how many there are, and room for how many.
    private var bases: [UnsafeMutablePointer<TraceRow>] = []
    private var counts: [Int]
    private var capacities: [Int]

    /// Empty rows for `shards` shards (≥ 1).
    package init(shards: Int) {
        precondition(shards >= 1, "ShardRows: at least one shard")
        counts = Array(repeating: 0, count: shards)
        capacities = Array(repeating: 1024, count: shards)
        for _ in 0..<shards { bases.append(.allocate(capacity: 1024)) }
    }

    deinit { for base in bases { base.deallocate() } }

    /// The number of shards.
    var shardCount: Int { counts.count }

    /// Shard `s`'s rows (valid until the next `route`).
    func rows(ofShard s: Int) -> UnsafeBufferPointer<TraceRow> {
        UnsafeBufferPointer(start: bases[s], count: counts[s])
    }

    /// Every shard's rows, counted.
    var count: Int { counts.reduce(0, +) }

    /// Empties every shard and splits `rows` (kept rows, in file order) between them: shard = the
    /// reader's tag number mod shards (`ShardedEngine.ingest`). Returns false at the first row
    /// earlier than the one before it (`lastTime`, carried from block to block), the rows after it
    /// not split. The rows are read in place.
    package func route(_ rows: Span<TraceRow>, lastTime: inout Double) -> Bool {
        let n = UInt32(counts.count)
        for s in counts.indices { counts[s] = 0 }
        var last = lastTime
        defer { lastTime = last }
        return rows.withUnsafeBufferPointer { rows in bases.withUnsafeMutableBufferPointer { bases in
            counts.withUnsafeMutableBufferPointer { counts in
                capacities.withUnsafeMutableBufferPointer { capacities in
                    for r in rows {
                        if r.timeSeconds < last { return false }
                        last = r.timeSeconds
                        let s = Int(UInt32(bitPattern: r.tagIndex) % n)
                        let k = counts[s]
                        if k == capacities[s] { (bases[s], capacities[s]) = bases[s].doubled(count: k, capacity: k) }
                        (bases[s] + k).initialize(to: r)
                        counts[s] = k + 1
                    }
                    return true
                }
            }
        } }
    }
}

extension UnsafeMutablePointer {
    /// Memory for twice `capacity` elements with this memory's first `count` moved into it (this
    /// memory is freed): the growth step of a shard's rows.
    fileprivate func doubled(count: Int, capacity: Int) -> (base: UnsafeMutablePointer<Pointee>, capacity: Int) {
        let larger = UnsafeMutablePointer<Pointee>.allocate(capacity: 2 * capacity)
        larger.moveInitialize(from: self, count: count)
        deallocate()
        return (larger, 2 * capacity)
    }
}
