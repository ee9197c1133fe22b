import LocusCore
import LocusZones

/// `PositioningEngine` on several cores: the tags split into `jobs` shards, each an engine of its
/// own, one shared data clock, and the shards' outputs merged into exactly the bytes one engine
/// gives — whatever the number of jobs.
///
/// **Why it is exact.** A tag's fixes and zone events depend on its own rows and on the clock at
/// each of them: epochs close when the tag's next range comes or the clock passes their due time
/// (either way with the same ranges in them), and a zone judge's clock at a tag's fix is that fix's
/// time. So each shard gives the single engine's output restricted to its tags, provided every shard
/// sees the same clock: after each block of rows every shard is advanced to the largest time any
/// shard admitted, and each shard's judges to the last fix the merge lets out.
///
/// **The merge.** A shard releases fixes in (time, tag) order and events in SPEC §4.7 order, and
/// nothing earlier than its frontier is still to come (`PositioningEngine.fixFrontier`,
/// `eventFrontier`). The merge lets out, in the single engine's order, what every shard has passed:
/// fixes by (time, tag's first appearance), events by `ZoneJudge.releasePrecedes` (a total order,
/// so the interleaving is unique). What waits is bounded by a block's worth of output.
///
/// Rows go in with their tag's index of first appearance (`TraceRow.tagIndex` of the streamed
/// reader); tags are registered in that order in their shard (shard = index mod jobs), so that each
/// shard's order of tags agrees with the single engine's. With one job the engine is used directly;
/// with more, shards 1…N−1 run on threads of their own (`ShardWorkers`), shard 0 on the caller's.
/// A reference type: one owner drives it; its threads end with it.
package final class ShardedEngine: @unchecked Sendable {
    /// The shards' engines (each touched by one thread at a time: its worker during `ingest`).
    private var shards: [PositioningEngine]
    private let workers: ShardWorkers
    /// Per shard: the global index of each of its tags, by local index.
    private var globalOfLocal: [[Int]]
    /// Per shard: local index of global tag g (−1: not registered), dense over the global indices.
    private var localOfGlobal: [Int] = []
    /// The global index of each tag id registered (for merge ties between shards).
    private var globalOfID: [TagID: Int] = [:]
    /// Released, not yet merged: per shard, its fixes and events in its own order.
    private var pendingFixes: [[PositionFix]]
    private var pendingEvents: [[ZoneEvent]]
    private var fixHeads: [Int]
    private var eventHeads: [Int]
    /// The latest fix time let out.
    private var lastMergedFixSeconds = -Double.infinity

    /// The number of shards.
    package var jobs: Int { shards.count }

    /// `jobs` engines for `site` (1 ≤ jobs ≤ 256).
    /// - Throws: the engine's errors (`PositioningEngine.init`).
    package init(site: Site, configuration: EngineConfiguration, jobs: Int) throws(LocusError) {
        let n = min(max(1, jobs), 256)
        var shards: [PositioningEngine] = []
        for _ in 0..<n { shards.append(try PositioningEngine(site: site, configuration: configuration)) }
        self.shards = shards
        workers = ShardWorkers(workers: n - 1)
        globalOfLocal = Array(repeating: [], count: n)
        pendingFixes = Array(repeating: [], count: n)
        pendingEvents = Array(repeating: [], count: n)
        fixHeads = Array(repeating: 0, count: n)
        eventHeads = Array(repeating: 0, count: n)
    }

    deinit { workers.stop() }

    /// The floor of rows that name none (every shard's).
    package var defaultFloor: FloorIndex { shards[0].defaultFloor }

    /// Registers tag `id` as global index `global` (indices come in increasing order, from 0).
    package func register(_ id: TagID, global: Int) {
        precondition(global == localOfGlobal.count, "ShardedEngine.register: tags in order of first appearance")
        let s = global % shards.count
        let local = shards[s].tagIndex(for: id).rawValue
        localOfGlobal.append(local)
        globalOfLocal[s].append(global)
        globalOfID[id] = global
    }

    /// The number of tags registered.
    package var tagCount: Int { localOfGlobal.count }

    /// One admitted row for `ingest(_:)`: global tag index, resolved floor, and the row's fields.
    package struct Row: Sendable {
        package var tag: Int32
        package var floor: Int32
        package var locator: UInt16
        package var line: Int32
        package var rangeMeters: Double
        package var timeSeconds: Double

        /// A row.
        package init(tag: Int32, floor: Int32, locator: UInt16, line: Int32, rangeMeters: Double, timeSeconds: Double) {
            self.tag = tag
            self.floor = floor
            self.locator = locator
            self.line = line
            self.rangeMeters = rangeMeters
            self.timeSeconds = timeSeconds
        }
    }

    /// Ingests a block of rows in time order (each shard takes its tags' rows, in parallel), then
    /// moves every shard to the shared clock. Afterwards `takeMerged` hands out what is final.
    package func ingest(_ rows: UnsafeBufferPointer<Row>) {
        let n = shards.count
        let localOfGlobal = self.localOfGlobal
        shards.withUnsafeMutableBufferPointer { engines in
            let box = UnsafeSendable(engines), input = UnsafeSendable(rows)
            // With one job the caller runs the loop alone.
            workers.run { s in
                for r in input.value where Int(r.tag) % n == s {
                    box.value[s].ingest(tag: TagIndex(localOfGlobal[Int(r.tag)]), floor: FloorIndex(Int(r.floor)), locator: r.locator,
                                        rangeMeters: r.rangeMeters, timeSeconds: r.timeSeconds, line: Int(r.line))
                }
            }
        }
        moveToSharedClock()
        for s in 0..<n { collect(s) }
    }

    /// Advances every shard to the largest time any shard admitted (rows an engine skips do not move
    /// it): the clock the single engine would have.
    private func moveToSharedClock() {
        guard shards.count > 1 else { return }
        let clock = shards.map(\.clockSeconds).max() ?? -.infinity
        if clock.isFinite { for s in shards.indices { shards[s].advance(toSeconds: clock) } }
    }

    /// Ends the stream: every shard at the shared clock, then finished; everything becomes final.
    package func finish() {
        moveToSharedClock()
        for s in shards.indices {
            shards[s].finish()
            collect(s)
        }
    }

    /// Counts of every shard, summed.
    package var diagnostics: EngineDiagnostics {
        var d = shards[0].diagnostics
        for s in shards.indices.dropFirst() { d.merge(shards[s].diagnostics) }
        return d
    }

    /// Moves shard `s`'s released output into its pending queues.
    private func collect(_ s: Int) {
        if !shards[s].fixes.isEmpty {
            shards[s].takeFixes { pendingFixes[s].append(contentsOf: $0) }
        }
        if !shards[s].events.isEmpty {
            shards[s].takeEvents { pendingEvents[s].append(contentsOf: $0) }
        }
    }

    /// Hands `body` the fixes and events that no shard can precede any more, in the single engine's
    /// order (all of them after `finish()`), and forgets them.
    package func takeMerged(_ body: (_ fixes: [PositionFix], _ events: [ZoneEvent]) -> Void) {
        let n = shards.count
        if n == 1 {
            // One engine's releases are final as they come.
            body(pendingFixes[0], pendingEvents[0])
            pendingFixes[0].removeAll(keepingCapacity: true)
            pendingEvents[0].removeAll(keepingCapacity: true)
            return
        }
        var fixFrontier = Double.infinity
        for s in 0..<n { fixFrontier = min(fixFrontier, shards[s].fixFrontier()) }
        var fixes: [PositionFix] = []
        while true {
            var best = -1
            for s in 0..<n where fixHeads[s] < pendingFixes[s].count {
                let f = pendingFixes[s][fixHeads[s]]
                guard f.timeSeconds < fixFrontier else { continue }
                if best < 0 || precedes(f, pendingFixes[best][fixHeads[best]]) { best = s }
            }
            guard best >= 0 else { break }
            fixes.append(pendingFixes[best][fixHeads[best]])
            fixHeads[best] += 1
        }
        if let last = fixes.last {
            lastMergedFixSeconds = last.timeSeconds
            // The single engine's judges have seen every fix let out: so must each shard's.
            for s in 0..<n {
                shards[s].advanceJudges(toSeconds: lastMergedFixSeconds)
                collect(s)
            }
        }
        var eventFrontier = fixFrontier
        for s in 0..<n { eventFrontier = min(eventFrontier, shards[s].eventFrontier()) }
        var streams: [[ZoneEvent]] = []
        for s in 0..<n {
            var k = eventHeads[s]
            while k < pendingEvents[s].count, pendingEvents[s][k].timeSeconds < eventFrontier { k += 1 }
            streams.append(Array(pendingEvents[s][eventHeads[s]..<k]))
            eventHeads[s] = k
        }
        let events = streams.contains(where: { !$0.isEmpty }) ? ZoneJudge.merge(streams) : []
        body(fixes, events)
        compact()
    }

    /// (time, tag's first appearance): the single engine's release order across shards.
    private func precedes(_ a: PositionFix, _ b: PositionFix) -> Bool {
        if a.timeSeconds != b.timeSeconds { return a.timeSeconds < b.timeSeconds }
        return (globalOfID[a.tag] ?? 0) < (globalOfID[b.tag] ?? 0)
    }

    /// Drops what was merged.
    private func compact() {
        for s in shards.indices {
            if fixHeads[s] > 0 && fixHeads[s] * 2 >= pendingFixes[s].count {
                pendingFixes[s].removeFirst(fixHeads[s])
                fixHeads[s] = 0
            }
            if eventHeads[s] > 0 && eventHeads[s] * 2 >= pendingEvents[s].count {
                pendingEvents[s].removeFirst(eventHeads[s])
                eventHeads[s] = 0
            }
        }
    }
}

/// A value handed to the workers of `concurrentPerform`, each of which touches only its own part.
private struct UnsafeSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
