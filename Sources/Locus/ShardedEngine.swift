import LocusCore
import LocusZones

/// `PositioningEngine` on several cores: the tags split into shards, each an engine of its own
/// driven by an `EngineDriver`, one shared data clock, and the shards' outputs merged into exactly
/// the bytes one engine gives — whatever the number of jobs.
///
/// **Why it is exact.** A tag's fixes and zone events depend on its own rows and on the clock at
/// each of them: epochs close when the tag's next range comes or the clock passes their due time
/// (either way with the same ranges in them), and a zone judge's clock at a tag's fix is that fix's
/// time. So each shard gives the single engine's output restricted to its tags, provided every shard
/// sees the same clock: before each block of rows (and at the end) every shard is advanced to the
/// largest time any shard admitted in the blocks before, and each shard's judges to the last fix
/// the merge lets out.
///
/// **The merge.** A shard releases fixes in (time, tag) order and events in SPEC §4.7 order, and
/// nothing earlier than its frontier is still to come (`PositioningEngine.fixFrontier`,
/// `eventFrontier`). The merge lets out, in the single engine's order, what every shard has passed:
/// fixes by (time, tag's first appearance), events by `ZoneJudge.releasePrecedes` (a total order,
/// so the interleaving is unique). What waits is bounded by a block's worth of output.
///
/// **The output.** Each shard's thread turns the fixes it releases into bytes itself (`encoder`, e.g.
/// a positions CSV row), so that formatting runs on every core; the merge then only compares
/// (time, tag) keys and copies each fix's bytes into place. The fixes themselves are kept for the
/// merged output only when asked (`keepFixes`: a comparison with truth needs them in order).
///
/// **The routing.** Each shard is an `EngineDriver`, and every shard's rows go in through the
/// driver's one ingest of a reader's row (`EngineDriver.ingest(_:routing:)`) with the group's one
/// `ReaderRouting`: the reader's tag numbers (order of first appearance, `TraceRow.tagIndex` of the
/// streamed reader) give each tag its index in its own shard (shard = number mod shards, registered
/// in that order, so that each shard's order of tags agrees with the single engine's), its floor
/// numbers the site's floors — a floor the site does not have is counted by the shard as the single
/// engine counts it. `ShardRows` only splits a block by shard. The work runs on a small pool
/// (`ShardWorkers`) and the caller's thread. A reference type: one owner drives it; its threads end
/// with it.
package final class ShardedEngine: @unchecked Sendable {
    /// Appends the bytes of one released fix (run on its shard's thread).
    package typealias FixEncoder = @Sendable (PositionFix, inout [UInt8]) -> Void

    /// The shards (each touched by one thread at a time: its worker during a job).
    private var shards: [EngineDriver]
    /// Per shard: what it released and the merge has not let out yet.
    private var lanes: [Lane]
    private let workers: ShardWorkers
    private let encoder: FixEncoder?
    private let keepFixes: Bool
    /// Per shard: the global index (the reader's number) of each of its tags, by local index (read
    /// by the shard's thread).
    private var globalOfLocal: [[Int32]]
    /// The reader's ids resolved: per global tag its index in its shard, per reader floor the site's.
    private var routing = ReaderRouting()
    private let site: Site
    /// Scratch of `takeMerged`: per lane, the time and tag of its next fix.
    private var headTimes: [Double] = []
    private var headTags: [Int32] = []
    /// The largest time any shard admitted by the end of the last block (`largestClock`), which
    /// every shard is moved to at the start of the next `ingest` or at `finish`.
    private var sharedClock: Double?

    /// The number of shards.
    package var shardCount: Int { shards.count }

    /// `shards` engines for `site` (1…1024; default: one per thread, eight per thread with several,
    /// so that a thread that is free takes the next shard and the threads end a block close
    /// together; with four, 400 tags on 2 threads left ~5 % of the threads' time idle at the
    /// joins, with eight ~2 %) run on `jobs` threads (1…256, the
    /// caller's included); `encoder` spells each fix (nil: none, only counted), `keepFixes` keeps
    /// the fixes for `takeMerged` too. The output does not depend on either number.
    /// - Throws: the engine's errors (`PositioningEngine.init`).
    package init(site: Site, configuration: EngineConfiguration, jobs: Int, shards: Int? = nil,
                 encoder: FixEncoder?, keepFixes: Bool) throws(LocusError) {
        let threads = min(max(1, jobs), 256)
        let n = min(max(1, shards ?? (threads == 1 ? 1 : 8 * threads)), 1024)
        var drivers: [EngineDriver] = []
        for _ in 0..<n { drivers.append(try EngineDriver(site: site, configuration: configuration)) }
        self.shards = drivers
        self.site = site
        lanes = Array(repeating: Lane(), count: n)
        workers = ShardWorkers(workers: threads - 1)
        self.encoder = encoder
        self.keepFixes = keepFixes
        globalOfLocal = Array(repeating: [], count: n)
    }

    deinit { workers.stop() }

    /// Resolves the ids the reader added since the last call (`newTagIDs`, `newFloorIDs`: its ids
    /// from number `tagCount` and the number of floors so far on, in its order): each new tag is
    /// registered in its shard (`ReaderRouting.add`). Call before `ingest`ing rows that name them.
    package func add(newTagIDs: [TagID], newFloorIDs: [FloorID]) {
        routing.add(newTagIDs: newTagIDs, newFloorIDs: newFloorIDs, site: site) { id in register(id) }
    }

    /// Registers the next global tag, `id`, in its shard; returns its index there.
    private func register(_ id: TagID) -> TagIndex {
        let global = tagCount
        tagCount += 1
        let s = global % shards.count
        let local = shards[s].tagIndex(for: id)
        while globalOfLocal[s].count <= local.rawValue { globalOfLocal[s].append(0) }
        globalOfLocal[s][local.rawValue] = Int32(global)
        return local
    }

    /// The number of tags registered.
    private(set) var tagCount = 0

    /// Ingests a block of rows in time order, split by shard (`ShardRows.route`: shard = the row's
    /// tag number mod `shardCount`), the shards in parallel, each row through its shard's driver and
    /// the group's routing, each shard spelling what it released. Afterwards `takeMerged` hands out
    /// what is final.
    ///
    /// Each shard is first moved to the shared clock of the blocks before (`sharedClock`), in the
    /// same task: one fork and join per block instead of two. A shard's rows and clock moves come
    /// in the same order as when it is moved at the end of each block; only the merge in between
    /// (and the judges' moves it makes, which only go forward) sees it a block earlier, so less is
    /// final then and the rest is let out after the next block — in the same order, the same bytes
    /// (the streamed-replay tests compare 1, 2, 3 and 8 jobs with the whole-file path).
    package func ingest(_ rows: ShardRows) {
        precondition(rows.shardCount == shards.count, "ShardedEngine.ingest: one row list per shard")
        let routing = self.routing
        let clock = sharedClock
        forEachShard { s, shard, _ in
            if let clock { shard.advance(toSeconds: clock) }
            for r in rows.rows(ofShard: s) { shard.ingest(r, routing: routing) }
        }
        sharedClock = Self.largestClock(of: shards)
    }

    /// Runs `work` on the shards' threads alongside `body` on this one (the next block's reading
    /// while `body` feeds this block to the shards); returns when both are done, this thread helping
    /// with queued shard work meanwhile. With one thread `work` runs at once, before `body`.
    package func withSideTask(_ work: @escaping @Sendable () -> Void, _ body: () -> Void) {
        let group = workers.spawn(work)
        body()
        workers.wait(group)
    }

    /// Runs `body` on every shard (driver and lane), each on its own thread, then has each shard's
    /// lane take what its engine released.
    private func forEachShard(_ body: @escaping (Int, inout EngineDriver, inout Lane) -> Void) {
        let encoder = self.encoder, keep = self.keepFixes
        let globalOfLocal = self.globalOfLocal
        shards.withUnsafeMutableBufferPointer { shards in
            lanes.withUnsafeMutableBufferPointer { lanes in
                let box = UnsafeSendable((shards, lanes, body))
                workers.run(shards.count) { s in
                    let (shards, lanes, body) = box.value
                    body(s, &shards[s], &lanes[s])
                    lanes[s].take(from: &shards[s], globalOfLocal: globalOfLocal[s], encoder: encoder, keepFixes: keep)
                }
            }
        }
    }

    /// The largest time any shard admitted (rows an engine skips do not move it): the clock the
    /// single engine would have — nil with one shard (nothing to share) or none admitted yet.
    private static func largestClock(of shards: [EngineDriver]) -> Double? {
        guard shards.count > 1 else { return nil }
        let clock = shards.map(\.engine.clockSeconds).max() ?? -.infinity
        return clock.isFinite ? clock : nil
    }

    /// Ends the stream: every shard at the shared clock, then finished; everything becomes final.
    package func finish() {
        let clock = sharedClock
        forEachShard { _, shard, _ in
            if let clock { shard.advance(toSeconds: clock) }
            do { try shard.finish() } catch { preconditionFailure("a shard has no smoother to fail: \(error)") }
        }
    }

    /// Counts of every shard (their skipped rows included), summed.
    package var diagnostics: EngineDiagnostics {
        var d = shards[0].diagnostics
        for s in shards.indices.dropFirst() { d.merge(shards[s].diagnostics) }
        return d
    }

    /// Appends to `bytes` (and `fixes`, with `keepFixes`) the fixes no shard can precede any more
    /// and to `events` the zone events likewise, in the single engine's order (everything after
    /// `finish()`); returns the number of fixes let out.
    @discardableResult
    package func takeMerged(bytes: inout [UInt8], fixes: inout [PositionFix], events: inout [ZoneEvent]) -> Int {
        let n = shards.count
        if n == 1 {
            // One engine's releases are final as they come.
            let count = lanes[0].takeAll(bytes: &bytes, fixes: &fixes, events: &events)
            return count
        }
        var fixFrontier = Double.infinity
        for s in 0..<n { fixFrontier = min(fixFrontier, shards[s].fixFrontier()) }
        var merged = 0
        var lastTime = -Double.infinity
        // Each lane's next key side by side (time +∞: nothing before the frontier), so that choosing
        // a fix reads two small arrays, not every lane's storage; the lane let out is read again.
        headTimes.removeAll(keepingCapacity: true)
        headTags.removeAll(keepingCapacity: true)
        for s in 0..<n {
            let (t, tag) = lanes[s].nextKey(before: fixFrontier)
            headTimes.append(t)
            headTags.append(tag)
        }
        lanes.withUnsafeMutableBufferPointer { lanes in
            headTimes.withUnsafeMutableBufferPointer { times in
                headTags.withUnsafeMutableBufferPointer { tags in
                    while true {
                        var best = -1, bestTime = Double.infinity, bestTag: Int32 = 0
                        for s in 0..<n where times[s] < bestTime || (times[s] == bestTime && best >= 0 && tags[s] < bestTag) {
                            best = s; bestTime = times[s]; bestTag = tags[s]
                        }
                        guard best >= 0 else { break }
                        lanes[best].letOut(bytes: &bytes, fixes: &fixes)
                        (times[best], tags[best]) = lanes[best].nextKey(before: fixFrontier)
                        lastTime = bestTime
                        merged += 1
                    }
                }
            }
        }
        if merged > 0 {
            // The single engine's judges have seen every fix let out: so must each shard's.
            for s in 0..<n {
                shards[s].advanceJudges(toSeconds: lastTime)
                lanes[s].takeEvents(from: &shards[s])
            }
        }
        var eventFrontier = fixFrontier
        for s in 0..<n { eventFrontier = min(eventFrontier, shards[s].eventFrontier()) }
        var streams: [[ZoneEvent]] = []
        for s in 0..<n { streams.append(lanes[s].events(before: eventFrontier)) }
        if streams.contains(where: { !$0.isEmpty }) { events.append(contentsOf: ZoneJudge.merge(streams)) }
        for s in 0..<n { lanes[s].compact() }
        return merged
    }
}

/// What one shard released and the merge has not let out: per fix its time, global tag index and
/// the end of its bytes (and the fix itself, when kept), and the shard's zone events.
private struct Lane {
    var times: [Double] = []
    var tags: [Int32] = []
    var ends: [Int] = []
    var bytes: [UInt8] = []
    var fixes: [PositionFix] = []
    var events: [ZoneEvent] = []
    /// The first fix, byte and event not let out yet.
    var head = 0, byteHead = 0, eventHead = 0

    /// Takes what `shard`'s engine released: fixes keyed and spelled, events as they are.
    mutating func take(from shard: inout EngineDriver, globalOfLocal: [Int32], encoder: ShardedEngine.FixEncoder?, keepFixes: Bool) {
        if !shard.engine.fixes.isEmpty {
            shard.takeFixes { released, localTags in
                for (f, local) in zip(released, localTags) {
                    times.append(f.timeSeconds)
                    tags.append(globalOfLocal[Int(local)])
                    encoder?(f, &bytes)
                    ends.append(bytes.count)
                }
                if keepFixes { fixes.append(contentsOf: released) }
            }
        }
        takeEvents(from: &shard)
    }

    /// Takes the zone events `shard`'s engine released.
    mutating func takeEvents(from shard: inout EngineDriver) {
        if !shard.engine.events.isEmpty { shard.takeEvents { events.append(contentsOf: $0) } }
    }

    /// The time and tag of the next fix when it is before `frontier`; (+∞, 0) otherwise.
    @inline(__always)
    func nextKey(before frontier: Double) -> (Double, Int32) {
        guard head < times.count, times[head] < frontier else { return (.infinity, 0) }
        return (times[head], tags[head])
    }

    /// Lets out the next fix: its bytes (and the fix, when kept).
    mutating func letOut(bytes out: inout [UInt8], fixes out2: inout [PositionFix]) {
        let end = ends[head]
        if end > byteHead {
            bytes.withUnsafeBufferPointer { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[byteHead..<end])) }
        }
        if !fixes.isEmpty { out2.append(fixes[head]) }
        byteHead = end
        head += 1
    }

    /// The events before `frontier` not let out yet, let out.
    mutating func events(before frontier: Double) -> [ZoneEvent] {
        var k = eventHead
        while k < events.count, events[k].timeSeconds < frontier { k += 1 }
        defer { eventHead = k }
        return Array(events[eventHead..<k])
    }

    /// Lets out everything (one shard: its order is the merged order); returns the fixes' count.
    mutating func takeAll(bytes out: inout [UInt8], fixes out2: inout [PositionFix], events out3: inout [ZoneEvent]) -> Int {
        let count = times.count - head
        if bytes.count > byteHead {
            bytes.withUnsafeBufferPointer { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[byteHead...])) }
        }
        if !fixes.isEmpty { out2.append(contentsOf: fixes[head...]) }
        if events.count > eventHead { out3.append(contentsOf: events[eventHead...]) }
        head = times.count; byteHead = bytes.count; eventHead = events.count
        compact()
        return count
    }

    /// Drops what was let out once it is at least half the storage (keeping the capacity).
    mutating func compact() {
        if head > 0 && head * 2 >= times.count {
            times.removeFirst(head)
            tags.removeFirst(head)
            if !fixes.isEmpty { fixes.removeFirst(head) }
            for k in ends.indices.dropFirst(head) { ends[k] -= byteHead }
            ends.removeFirst(head)
            bytes.removeFirst(byteHead)
            head = 0
            byteHead = 0
        }
        if eventHead > 0 && eventHead * 2 >= events.count {
            events.removeFirst(eventHead)
            eventHead = 0
        }
    }
}

/// A value handed to the shard workers, each of which touches only its own part.
private struct UnsafeSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
