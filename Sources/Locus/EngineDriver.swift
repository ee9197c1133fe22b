import LocusCore
import LocusIO
import LocusSolvers

/// One engine driven as every single-engine face drives it (`FloorSession`, the C ABI's handle,
/// `locus stream`, the whole-recording replay): rows in (by id, or routed through a
/// `ReaderRouting`), the clock moved, what the engine releases drained in release order, skips
/// counted, and the optional offline smoother fed as the rows go in — the "ingest, record for the
/// smoother, smooth at finish" that each face once spelled itself. The tag-sharded group of
/// engines with one clock (`ShardedEngine`, `locus replay --jobs`) drives each of its shards through
/// one of these, every shard's rows routed by the group's one `ReaderRouting`: routing by id, the
/// skipped rows and the counters are this code for one engine and for a group alike; what the group
/// adds is its own — the shared clock and the merge of the shards' outputs.
package struct EngineDriver: Sendable {
    /// What the offline smoother does with the run.
    package enum Smoothing: Sendable, Equatable {
        /// No smoother.
        case none
        /// Positions are held until `finish()` and released smoothed (`locus replay --smooth`, the C
        /// ABI's `LOCUS_OPTION_SMOOTH`); events stay causal.
        case replacing
        /// Causal positions are released as they come; `smoothedFixes()` gives the run smoothed
        /// afterwards (`FloorSession.smoothedPositions()`).
        case alongside
    }

    package private(set) var engine: PositioningEngine
    package let smoothing: Smoothing
    private var smoother: OfflineSmoothing?
    /// The run's causal fixes, kept for the smoother (`replacing`: until `finish()`).
    private var runFixes: [PositionFix] = []

    init(engine: PositioningEngine, smoothing: Smoothing = .none) {
        self.engine = engine
        self.smoothing = smoothing
        smoother = smoothing == .none ? nil : OfflineSmoothing(configuration: engine.configuration)
    }

    package init(site: Site, configuration: EngineConfiguration, smoothing: Smoothing = .none) throws(LocusError) {
        self.init(engine: try PositioningEngine(site: site, configuration: configuration), smoothing: smoothing)
    }

    // MARK: input

    /// One measurement by id (`PositioningEngine.ingest(_:line:)` routes it), recorded for the smoother.
    package mutating func ingest(_ m: RangeMeasurement, line: Int = 0) {
        engine.ingest(m, line: line)
        record(m)
    }

    /// One reader row — a range or a range difference (`TraceRow.isDifference`) — routed by
    /// `routing` (an unknown floor is counted and the row dropped); not recorded for a smoother.
    /// Returns whether the row reached the engine.
    @inline(__always) @discardableResult
    mutating func ingest(_ row: TraceRow, routing: ReaderRouting) -> Bool {
        guard let floor = routing.floor(row.floorIndex, default: engine.defaultFloor) else {
            engine.diagnostics.skipped.record(.unknownFloor, line: Int(row.line))
            return false
        }
        if row.isDifference {
            engine.ingest(tag: routing.tags[Int(row.tagIndex)], floor: floor, reference: row.reference, locator: row.locator,
                          differenceMeters: row.differenceMeters, timeSeconds: row.timeSeconds, line: Int(row.line))
        } else {
            engine.ingest(tag: routing.tags[Int(row.tagIndex)], floor: floor, locator: row.locator, rangeMeters: row.rangeMeters,
                          timeSeconds: row.timeSeconds, line: Int(row.line))
        }
        return true
    }

    /// `ingest(_:routing:)`, and the row recorded for the smoother.
    /// - Parameter ids: the row's tag and floor ids, asked for only when a smoother records it
    ///   (non-escaping: no allocation per row).
    @inline(__always)
    mutating func ingest(_ row: TraceRow, routing: ReaderRouting, ids: () -> (tag: TagID, floor: FloorID?)) {
        guard ingest(row, routing: routing), smoother?.recordsRanges == true else { return }
        let (tag, floor) = ids()
        if row.isDifference {
            smoother?.record(RangeDifference(timeSeconds: row.timeSeconds, tag: tag, reference: LocatorAddress(row.reference),
                                             locator: LocatorAddress(row.locator), differenceMeters: row.differenceMeters, floor: floor))
        } else {
            record(RangeMeasurement(timeSeconds: row.timeSeconds, tag: tag, locator: LocatorAddress(row.locator),
                                    rangeMeters: row.rangeMeters, floor: floor))
        }
    }

    /// One range difference by id (`PositioningEngine.ingest(_:line:)` routes it), recorded for the smoother.
    package mutating func ingest(_ d: RangeDifference, line: Int = 0) {
        engine.ingest(d, line: line)
        if smoother?.recordsRanges == true { smoother?.record(d) }
    }

    /// Records an ingested row for the smoother, less the tag's range offset the engine took out.
    /// (The offset is read first and passed by value: the smoother never borrows the whole engine.)
    @inline(__always)
    private mutating func record(_ m: RangeMeasurement) {
        guard smoother?.recordsRanges == true else { return }
        let offset = engine.lastRangeCorrectionMeters
        smoother?.record(m, lessTagOffset: offset)
    }

    /// A row already routed (engine tag and floor), not recorded for a smoother.
    @inline(__always)
    mutating func ingest(tag: TagIndex, floor: FloorIndex, locator: UInt16, rangeMeters: Double, timeSeconds: Double,
                                 line: Int = 0) {
        engine.ingest(tag: tag, floor: floor, locator: locator, rangeMeters: rangeMeters, timeSeconds: timeSeconds, line: line)
    }

    /// A difference already routed (engine tag and floor), not recorded for a smoother.
    @inline(__always)
    mutating func ingest(tag: TagIndex, floor: FloorIndex, reference: UInt16, locator: UInt16, differenceMeters: Double,
                         timeSeconds: Double, line: Int = 0) {
        engine.ingest(tag: tag, floor: floor, reference: reference, locator: locator, differenceMeters: differenceMeters,
                      timeSeconds: timeSeconds, line: line)
    }

    /// A row skipped before it reached the driver (decoding), counted with the engine's skips.
    mutating func recordSkipped(_ reason: SkipReason, line: Int) { engine.diagnostics.skipped.record(reason, line: line) }

    /// Rows skipped elsewhere (a reader's), counted with the engine's skips.
    package mutating func recordSkipped(_ tally: SkipTally) { engine.recordSkipped(tally) }

    /// The engine's tag index for `id` (registered on first sight, outside any tag limit; the last
    /// one looked up is kept in front, until the engine evicts a tag: its index may then name
    /// another). A bounded engine is fed by id instead (`ingest(_:line:)`).
    mutating func tagIndex(for id: TagID) -> TagIndex {
        if let last = lastTag, last.id == id, last.evictions == engine.diagnostics.tagsEvicted { return last.index }
        let index = engine.tagIndex(for: id)
        lastTag = (id, index, engine.diagnostics.tagsEvicted)
        return index
    }

    /// The site's floor `id` (the last one looked up is kept in front); nil when it has none.
    mutating func floorIndex(of id: FloorID) -> FloorIndex? {
        if let last = lastFloor, last.id == id { return last.index }
        guard let index = engine.site.floorIndex(of: id) else { return nil }
        lastFloor = (id, index)
        return index
    }

    private var lastTag: (id: TagID, index: TagIndex, evictions: Int)?

    /// The engine's tag index for a row of `id` with its tag limit applied (nil: refused, counted as
    /// `tag_limit`), idle tags evicted first (`PositioningEngine.admittedTagIndex(for:line:)`).
    mutating func admittedTagIndex(for id: TagID, line: Int) -> TagIndex? { engine.admittedTagIndex(for: id, line: line) }

    /// Evicts the tags idle past their time (`PositioningEngine.evictIdleTagsIfDue()`).
    @inline(__always)
    mutating func evictIdleTagsIfDue() { engine.evictIdleTagsIfDue() }

    /// Tags evicted so far: an index taken from the engine while this was n stays valid while it is n.
    var tagsEvicted: Int { engine.diagnostics.tagsEvicted }
    private var lastFloor: (id: FloorID, index: FloorIndex)?

    /// Makes the engine partition `index` of `count` (`PositioningEngine.setPartition`).
    /// - Throws: E1002/E1003 as the engine does.
    package mutating func setPartition(index: Int, count: Int) throws(LocusError) {
        try engine.setPartition(index: index, count: count)
    }

    /// The floor of rows that name none (`PositioningEngine.setDefaultFloor`).
    mutating func setDefaultFloor(_ floor: FloorIndex) { engine.setDefaultFloor(floor) }

    /// A position from another solver, judged against the zones (`PositioningEngine.ingest(fix:)`).
    mutating func ingest(fix: PositionFix) { engine.ingest(fix: fix) }

    /// Moves the clock (a timer tick): epochs close and zones exit without new ranges.
    package mutating func advance(toSeconds t: Double) { engine.advance(toSeconds: t) }

    /// Ends the run: everything is released (with `replacing`, the positions smoothed).
    /// - Throws: E4005 when the smoother's numbers go non-finite.
    package mutating func finish() throws(LocusError) {
        engine.finish()
        guard smoothing == .replacing, let smoother else { return }
        runFixes.append(contentsOf: engine.drainFixes())
        smoothed = try smoother.smooth(fixes: runFixes, engine: engine)
        runFixes = []
    }

    /// With `replacing`: the smoothed positions, released by the next `drainFixes()` after `finish()`.
    private var smoothed: [PositionFix]?

    // MARK: output

    /// The positions released since the last drain, in (time, tag) order (with `replacing`: none
    /// until `finish()`, then the smoothed run).
    package mutating func drainFixes() -> [PositionFix] {
        switch smoothing {
        case .none:
            return engine.drainFixes()
        case .alongside:
            let fixes = engine.drainFixes()
            runFixes.append(contentsOf: fixes)
            return fixes
        case .replacing:
            if let smoothed {
                self.smoothed = []
                return smoothed
            }
            runFixes.append(contentsOf: engine.drainFixes())
            return []
        }
    }

    /// Positions the engine released that `drainFixes()` has not taken (0 with `replacing` until `finish()`).
    package var pendingFixCount: Int {
        smoothing == .replacing ? (smoothed?.count ?? 0) : engine.fixes.count
    }

    /// The zone events released since the last drain, in SPEC §4.7 order.
    package mutating func drainEvents() -> [ZoneEvent] { engine.drainEvents() }

    /// With `alongside`, after `finish()`: the run's positions smoothed offline, in (time, tag) order.
    /// - Throws: E1002 without `alongside` or before `finish()`; E4005 when the smoother's numbers go non-finite.
    func smoothedFixes() throws(LocusError) -> [PositionFix] {
        guard smoothing == .alongside, let smoother else {
            throw LocusError(.callOrder, "the session does not keep its runs for smoothing: set Configuration.smoothing")
        }
        guard engine.hasFinished else { throw LocusError(.callOrder, "smooth after end()") }
        return try smoother.smooth(fixes: runFixes + engine.fixes, engine: engine)
    }

    /// The engine's counters (the rows the driver skipped before it included). Other modules read
    /// `engine.diagnostics`, the same value.
    var diagnostics: EngineDiagnostics { engine.diagnostics }
}

// MARK: as a shard of a group

extension EngineDriver {
    // A `ShardedEngine` merges its shards' outputs itself, keyed by the shards' tag indices and held
    // back until no shard can precede them: these are the engine's steps it takes for that. A shard
    // is driven without a smoother, so nothing here bypasses the driver's own.

    /// Hands the positions released since the last take and their tags' indices to `body`, without
    /// a copy (`PositioningEngine.takeFixes`).
    @inline(__always)
    mutating func takeFixes<R>(_ body: ([PositionFix], [Int32]) throws -> R) rethrows -> R { try engine.takeFixes(body) }

    /// Hands the zone events released since the last take to `body` (`PositioningEngine.takeEvents`).
    @inline(__always)
    mutating func takeEvents<R>(_ body: ([ZoneEvent]) throws -> R) rethrows -> R { try engine.takeEvents(body) }

    /// No position earlier than this is still to come (`PositioningEngine.fixFrontier`).
    mutating func fixFrontier() -> Double { engine.fixFrontier() }

    /// No zone event earlier than this is still to come (`PositioningEngine.eventFrontier`).
    mutating func eventFrontier() -> Double { engine.eventFrontier() }

    /// Moves the zone judges' clock to `t`, as the merge releasing a position at `t` does
    /// (`PositioningEngine.advanceJudges`).
    mutating func advanceJudges(toSeconds t: Double) { engine.advanceJudges(toSeconds: t) }
}
