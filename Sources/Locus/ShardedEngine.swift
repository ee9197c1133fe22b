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
/// Rows go in with their tag's index of first appearance (`TraceRow.tagIndex` of the streamed
/// reader); tags are registered in that order in their shard (shard = index mod jobs), so that each
/// shard's order of tags agrees with the single engine's. Shards 1…N−1 run on threads of their own
/// (`ShardWorkers`), shard 0 on the caller's. A reference type: one owner drives it; its threads end
/// with it.
package final class ShardedEngine: @unchecked Sendable {
    /// Appends the bytes of one released fix (run on its shard's thread).
    package typealias FixEncoder = @Sendable (PositionFix, inout [UInt8]) -> Void

    /// The shards' engines (each touched by one thread at a time: its worker during a job).
    private var shards: [PositioningEngine]
    /// Per shard: what it released and the merge has not let out yet.
    private var lanes: [Lane]
    private let workers: ShardWorkers
    private let encoder: FixEncoder?
    private let keepFixes: Bool
    /// Per shard: the global index of each of its tags, by local index (read by the shard's thread).
    private var globalOfLocal: [[Int32]]
    /// Per global tag: its local index in its shard.
    private var localOfGlobal: [Int] = []
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
        var engines: [PositioningEngine] = []
        for _ in 0..<n { engines.append(try PositioningEngine(site: site, configuration: configuration)) }
        self.shards = engines
        lanes = Array(repeating: Lane(), count: n)
        workers = ShardWorkers(workers: threads - 1)
        self.encoder = encoder
        self.keepFixes = keepFixes
        globalOfLocal = Array(repeating: [], count: n)
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
        while globalOfLocal[s].count <= local { globalOfLocal[s].append(0) }
        globalOfLocal[s][local] = Int32(global)
    }

    /// The number of tags registered.
    package var tagCount: Int { localOfGlobal.count }

    /// One admitted row for `ingest(_:)`: global tag index, resolved floor, and the row's fields.
    struct Row: Sendable {
        var tag: Int32
        var floor: Int32
        var locator: UInt16
        var line: Int32
        var rangeMeters: Double
        var timeSeconds: Double

        /// A row.
        init(tag: Int32, floor: Int32, locator: UInt16, line: Int32, rangeMeters: Double, timeSeconds: Double) {
            self.tag = tag
            self.floor = floor
            self.locator = locator
            self.line = line
            self.rangeMeters = rangeMeters
            self.timeSeconds = timeSeconds
        }
    }

    /// The shard of the tag of global index `tag`.
    func shard(ofTag tag: Int32) -> Int { Int(tag) % shards.count }

    /// Ingests a block of rows in time order, split by shard (`ShardRows.route`, `shard(ofTag:)`),
    /// the shards in parallel, each shard spelling what it released. Afterwards `takeMerged` hands
    /// out what is final.
    ///
    /// Each shard is first moved to the shared clock of the blocks before (`sharedClock`), in the
    /// same task: one fork and join per block instead of two. A shard's rows and clock moves come
    /// in the same order as when it is moved at the end of each block; only the merge in between
    /// (and the judges' moves it makes, which only go forward) sees it a block earlier, so less is
    /// final then and the rest is let out after the next block — in the same order, the same bytes
    /// (the streamed-replay tests compare 1, 2, 3 and 8 jobs with the whole-file path).
    package func ingest(_ rows: ShardRows) {
        precondition(rows.shardCount == shards.count, "ShardedEngine.ingest: one row list per shard")
        let localOfGlobal = self.localOfGlobal
        let clock = sharedClock
        forEachShard { s, engine, _ in
            if let clock { engine.advance(toSeconds: clock) }
            for r in rows.rows(ofShard: s) {
                engine.ingest(tag: TagIndex(localOfGlobal[Int(r.tag)]), floor: FloorIndex(Int(r.floor)), locator: r.locator,
                              rangeMeters: r.rangeMeters, timeSeconds: r.timeSeconds, line: Int(r.line))
            }
        }
        sharedClock = Self.largestClock(of: shards)
    }

    /// Queues `work` to run on the shards' threads alongside the next `ingest`s (the next block's
    /// reading); wait for it with `wait(_:)`. With one thread it runs at once.
    package func spawn(_ work: @escaping @Sendable () -> Void) -> ShardWorkers.Group { workers.spawn(work) }

    /// Returns when the work of `spawn` is done (this thread helps with queued shard work meanwhile).
    package func wait(_ group: ShardWorkers.Group) { workers.wait(group) }

    /// Runs `body` on every shard (engine and lane), each on its own thread, then has each shard's
    /// lane take what its engine released.
    private func forEachShard(_ body: @escaping (Int, inout PositioningEngine, inout Lane) -> Void) {
        let encoder = self.encoder, keep = self.keepFixes
        let globalOfLocal = self.globalOfLocal
        shards.withUnsafeMutableBufferPointer { engines in
            lanes.withUnsafeMutableBufferPointer { lanes in
                let box = UnsafeSendable((engines, lanes, body))
                workers.run(engines.count) { s in
                    let (engines, lanes, body) = box.value
                    body(s, &engines[s], &lanes[s])
                    lanes[s].take(from: &engines[s], globalOfLocal: globalOfLocal[s], encoder: encoder, keepFixes: keep)
                }
            }
        }
    }

    /// The largest time any shard admitted (rows an engine skips do not move it): the clock the
    /// single engine would have — nil with one shard (nothing to share) or none admitted yet.
    private static func largestClock(of shards: [PositioningEngine]) -> Double? {
        guard shards.count > 1 else { return nil }
        let clock = shards.map(\.clockSeconds).max() ?? -.infinity
        return clock.isFinite ? clock : nil
    }

    /// Ends the stream: every shard at the shared clock, then finished; everything becomes final.
    package func finish() {
        let clock = sharedClock
        forEachShard { _, engine, _ in
            if let clock { engine.advance(toSeconds: clock) }
            engine.finish()
        }
    }

    /// Counts of every shard, summed.
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

    /// Takes what `engine` released: fixes keyed and spelled, events as they are.
    mutating func take(from engine: inout PositioningEngine, globalOfLocal: [Int32], encoder: ShardedEngine.FixEncoder?, keepFixes: Bool) {
        if !engine.fixes.isEmpty {
            engine.takeFixes { released, localTags in
                for (f, local) in zip(released, localTags) {
                    times.append(f.timeSeconds)
                    tags.append(globalOfLocal[Int(local)])
                    encoder?(f, &bytes)
                    ends.append(bytes.count)
                }
                if keepFixes { fixes.append(contentsOf: released) }
            }
        }
        takeEvents(from: &engine)
    }

    /// Takes the zone events `engine` released.
    mutating func takeEvents(from engine: inout PositioningEngine) {
        if !engine.events.isEmpty { engine.takeEvents { events.append(contentsOf: $0) } }
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
