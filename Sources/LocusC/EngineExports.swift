#if canImport(Glibc)
import Glibc
#endif
import Locus
import LocusCore
import LocusIO
import LocusSolvers

// The engine half of include/locus.h: create, push, advance, finish, poll, stats, destroy.
// Every entry point runs inside `Status.guarded`: inputs are checked before any Swift code that
// could trap sees them, and every failure becomes a status and the thread's last error.

/// `locus_engine_create_json`: an engine from site JSON text.
///
/// - Parameters: `json` (UTF-8, `length` bytes or `LOCUS_NUL_TERMINATED`), `options` (NULL: defaults),
///   `outEngine` receives the handle (NULL on failure).
/// - Returns: 0, or E1003 (null pointer, option out of range, id longer than 63 bytes), E5002, the
///   site codes E3101–E3112, E3002 (unknown default floor).
@c(locus_engine_create_json)
public func locusEngineCreateJSON(_ json: UnsafePointer<CChar>?, _ length: Int, _ options: UnsafeRawPointer?,
                                  _ outEngine: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    outEngine?.pointee = nil
    return Status.guarded { () throws(LocusError) in
        guard let outEngine else { throw LocusError(.invalidArgument, "out_engine is NULL") }
        guard let json else { throw LocusError(.invalidArgument, "json is NULL") }
        let count = length == -1 ? strlen(json) : length
        guard count >= 0 else { throw LocusError(.invalidArgument, "length \(length) is not a byte count") }
        let bytes = [UInt8](UnsafeRawBufferPointer(start: json, count: count))
        let site = try SiteDecoder.decode(bytes, file: "<json>")
        outEngine.pointee = try EngineFactory.make(site: site, options: options)
    }
}

/// `locus_engine_create_file`: an engine from the site file at `path`.
/// - Returns: as `locus_engine_create_json`, plus E5001 for a file that cannot be read.
@c(locus_engine_create_file)
public func locusEngineCreateFile(_ path: UnsafePointer<CChar>?, _ options: UnsafeRawPointer?,
                                  _ outEngine: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    outEngine?.pointee = nil
    return Status.guarded { () throws(LocusError) in
        guard let outEngine else { throw LocusError(.invalidArgument, "out_engine is NULL") }
        let site = try SiteDecoder.load(path: try CText.string(path, field: "path"))
        outEngine.pointee = try EngineFactory.make(site: site, options: options)
    }
}

/// `locus_engine_destroy`: releases an engine (NULL: nothing).
/// - Returns: 0, or E1002 for a handle that is not live (destroyed twice).
@c(locus_engine_destroy)
public func locusEngineDestroy(_ engine: OpaquePointer?) -> Int32 {
    Status.guarded { () throws(LocusError) in
        guard let engine else { return }
        try EngineRegistry.remove(engine)
    }
}

/// `locus_engine_push`: one range measurement.
/// - Returns: 0 when the range joined an epoch; otherwise why it was skipped (E4003, E3002, E1002,
///   E1003) — skipped ranges are counted as `locus replay` counts them.
@c(locus_engine_push)
public func locusEnginePush(_ engine: OpaquePointer?, _ range: UnsafeRawPointer?) -> Int32 {
    Status.guarded { () throws(LocusError) in
        try RangeIngest.pushOne(engine, range, noun: "range", push: RangeIngest.push)
    }
}

/// `locus_engine_push_ranges`: `count` ranges in order (every one offered even when one is skipped).
/// - Returns: 0 when all were used, else the status of the first skipped one (index in the message).
///   `outAccepted` (may be NULL) receives the number used.
@c(locus_engine_push_ranges)
public func locusEnginePushRanges(_ engine: OpaquePointer?, _ ranges: UnsafeRawPointer?, _ count: Int,
                                  _ outAccepted: UnsafeMutablePointer<Int>?) -> Int32 {
    outAccepted?.pointee = 0
    return Status.guarded { () throws(LocusError) in
        try RangeIngest.pushBatch(engine, ranges, count: count, size: CLayout.Range.size, noun: "ranges", accepted: outAccepted,
                                  push: RangeIngest.push)
    }
}

/// `locus_engine_advance`: moves the clock to `timeSeconds`.
/// - Returns: 0, E4003 (not finite), E1002 (finished).
@c(locus_engine_advance)
public func locusEngineAdvance(_ engine: OpaquePointer?, _ timeSeconds: Double) -> Int32 {
    Status.guarded { () throws(LocusError) in
        try EngineRegistry.withState(engine) { (state: inout EngineState) throws(LocusError) in
            guard !state.isFinished else { throw LocusError(.callOrder, "the engine is finished") }
            guard timeSeconds.isFinite else { throw LocusError(.invalidRange, "time \(timeSeconds) is not finite") }
            state.driver.advance(toSeconds: timeSeconds)
        }
    }
}

/// `locus_engine_set_partition`: the engine solves only the tags whose index of first appearance is
/// `index` mod `count` and observes the others' rows (checked, counted, moving the clock): one of
/// `count` engines fed the same stream, whose outputs merged by (time, tag index) and in SPEC §4.7
/// order are the single engine's (`PositioningEngine.setPartition`).
/// - Returns: 0, E1003 (bad index or count, or with `LOCUS_OPTION_SMOOTH`), E1002 (after the first row).
@c(locus_engine_set_partition)
public func locusEngineSetPartition(_ engine: OpaquePointer?, _ index: Int, _ count: Int) -> Int32 {
    Status.guarded { () throws(LocusError) in
        try EngineRegistry.withState(engine) { (state: inout EngineState) throws(LocusError) in
            guard !state.isSmoothing || count == 1 else {
                throw LocusError(.invalidArgument, "a smoothed engine cannot be partitioned (the smoother needs every tag's fixes)")
            }
            guard !state.isFinished, state.rangesAccepted == 0 else { throw LocusError(.callOrder, "the partition is set before the first range") }
            try state.driver.setPartition(index: index, count: count)
        }
    }
}

/// `locus_engine_tag_index`: the index of tag `tag` in order of first appearance (the order of
/// equal-time positions; the merge key of partitions).
/// - Returns: 0, E1003 (NULL or bad text, or a tag no range named yet).
@c(locus_engine_tag_index)
public func locusEngineTagIndex(_ engine: OpaquePointer?, _ tag: UnsafePointer<CChar>?, _ outIndex: UnsafeMutablePointer<Int64>?) -> Int32 {
    Status.guarded { () throws(LocusError) in
        guard let tag, let outIndex else { throw LocusError(.invalidArgument, "tag or out_index is NULL") }
        let id = TagID(try CText.identifier(UnsafeRawPointer(tag), field: "tag"))
        try EngineRegistry.withState(engine) { (state: inout EngineState) throws(LocusError) in
            guard let index = state.engine.registeredTagIndex(id) else { throw LocusError(.invalidArgument, "no range named tag '\(TopicEncoding.shown(id.rawValue))'") }
            outIndex.pointee = Int64(index.rawValue)
        }
    }
}

/// `locus_engine_finish`: ends the stream and releases everything.
/// - Returns: 0, or E1002 when already finished.
@c(locus_engine_finish)
public func locusEngineFinish(_ engine: OpaquePointer?) -> Int32 {
    Status.guarded { () throws(LocusError) in
        try EngineRegistry.withState(engine) { (state: inout EngineState) throws(LocusError) in
            guard !state.isFinished else { throw LocusError(.callOrder, "the engine is already finished") }
            try state.finish()
        }
    }
}

/// `locus_engine_poll_positions`: takes up to `capacity` released positions into `out`.
/// - Returns: 0, or E1003 (NULL `outCount`, NULL `out` with a positive capacity).
@c(locus_engine_poll_positions)
public func locusEnginePollPositions(_ engine: OpaquePointer?, _ out: UnsafeMutableRawPointer?, _ capacity: Int,
                                     _ outCount: UnsafeMutablePointer<Int>?) -> Int32 {
    poll(engine, out, capacity, outCount) { state, out, capacity in
        let n = min(capacity, state.fixes.count - state.fixRead)
        for k in 0..<n { Records.store(state.fixes[state.fixRead + k], to: out + k * CLayout.Position.size) }
        state.fixRead += n
        return n
    }
}

/// `locus_engine_poll_events`: takes up to `capacity` released zone events into `out`.
/// - Returns: as `locus_engine_poll_positions`.
@c(locus_engine_poll_events)
public func locusEnginePollEvents(_ engine: OpaquePointer?, _ out: UnsafeMutableRawPointer?, _ capacity: Int,
                                  _ outCount: UnsafeMutablePointer<Int>?) -> Int32 {
    poll(engine, out, capacity, outCount) { state, out, capacity in
        let n = min(capacity, state.events.count - state.eventRead)
        for k in 0..<n { Records.store(state.events[state.eventRead + k], to: out + k * CLayout.Event.size) }
        state.eventRead += n
        return n
    }
}

/// The checks and locking both poll functions share; `take` copies up to `capacity` records to `out`
/// and returns how many.
private func poll(_ engine: OpaquePointer?, _ out: UnsafeMutableRawPointer?, _ capacity: Int,
                  _ outCount: UnsafeMutablePointer<Int>?,
                  take: (inout EngineState, UnsafeMutableRawPointer, Int) -> Int) -> Int32 {
    outCount?.pointee = 0
    return Status.guarded { () throws(LocusError) in
        guard let outCount else { throw LocusError(.invalidArgument, "out_count is NULL") }
        guard capacity >= 0 else { throw LocusError(.invalidArgument, "capacity is too large") }
        guard capacity == 0 || out != nil else { throw LocusError(.invalidArgument, "out is NULL") }
        try EngineRegistry.withState(engine) { (state: inout EngineState) throws(LocusError) in
            guard capacity > 0, let out else { return }
            state.collect()
            outCount.pointee = take(&state, out, capacity)
        }
    }
}

/// `locus_engine_stats`: the engine's counters.
/// - Returns: 0, or E1003 (NULL `out`).
@c(locus_engine_stats)
public func locusEngineStats(_ engine: OpaquePointer?, _ out: UnsafeMutableRawPointer?) -> Int32 {
    Status.guarded { () throws(LocusError) in
        guard let out else { throw LocusError(.invalidArgument, "out is NULL") }
        try EngineRegistry.withState(engine) { (state: inout EngineState) throws(LocusError) in
            let d = state.engine.diagnostics
            let values = [state.rangesAccepted, d.skipped.total, d.epochs, d.failedEpochs.reduce(0) { $0 + $1.count },
                          d.epochsBeforeTrack, d.rejectedRanges, state.pendingFixes, state.pendingEvents]
            for (k, v) in values.enumerated() {
                out.storeBytes(of: Int64(v), toByteOffset: 8 * k, as: Int64.self)
            }
        }
    }
}

/// Builds engines from a site and a `locus_options`.
enum EngineFactory {
    /// A registered engine for `site` with `options` (NULL: defaults, as `locus replay`).
    /// - Throws: E1003 for options out of range or ids longer than 63 bytes; the engine's errors.
    static func make(site: Site, options: UnsafeRawPointer?) throws(LocusError) -> OpaquePointer {
        let options = try engineOptions(options)
        for floor in site.floors {
            try checkLength(floor.id.rawValue, "floor id")
            for zone in floor.zones { try checkLength(zone.id.rawValue, "zone id") }
        }
        let box = EngineBox(driver: try EngineDriver(site: site, configuration: EngineConfiguration(options),
                                                     smoothing: options.smooth ? .replacing : .none))
        box.state.withLock { $0.run.filter = options.filter.rawValue }
        return EngineRegistry.insert(box)
    }

    /// A `locus_options` (NULL: defaults) as the engine's options, the same value `locus replay` builds
    /// from its command line.
    /// - Throws: E1003 for a value out of range, an unknown enum value or flag bit, a bad floor id.
    static func engineOptions(_ raw: UnsafeRawPointer?) throws(LocusError) -> EngineOptions {
        typealias O = CLayout.Options
        guard let raw else { return EngineOptions() }
        let rate = raw.loadUnaligned(fromByteOffset: O.rateHertz, as: Double.self)
        let sigma = raw.loadUnaligned(fromByteOffset: O.sigmaMeters, as: Double.self)
        let numbers = EngineOptions(rateHertz: rate != 0 ? rate : EngineOptions().rateHertz,
                                    sigmaMeters: sigma != 0 ? sigma : EngineOptions().sigmaMeters)
        try numbers.validate(naming: ("options.rate_hz", "options.sigma_m"))
        let filter: EngineOptions.Filter
        switch raw.loadUnaligned(fromByteOffset: O.filter, as: Int32.self) {
        case 0: filter = .kalman
        case 1: filter = .none
        case let other: throw LocusError(.invalidArgument, "options.filter \(other) is not a locus_filter")
        }
        let coupling: TrackFilterConfiguration.Coupling
        switch raw.loadUnaligned(fromByteOffset: O.coupling, as: Int32.self) {
        case 0: coupling = .tight
        case 1: coupling = .loose
        case let other: throw LocusError(.invalidArgument, "options.coupling \(other) is not a locus_coupling")
        }
        let mode = try SolverExports.mode(raw.loadUnaligned(fromByteOffset: O.mode, as: Int32.self))
        let flags = raw.loadUnaligned(fromByteOffset: O.flags, as: UInt32.self)
        guard flags & ~CLayout.OptionFlag.all == 0 else {
            throw LocusError(.invalidArgument, "options.flags \(flags) has bits that are not locus_option_flag values")
        }
        let tagOffset: EngineOptions.TagOffset
        switch (flags & CLayout.OptionFlag.tagOffsetOn != 0, flags & CLayout.OptionFlag.tagOffsetOff != 0) {
        case (true, true): throw LocusError(.invalidArgument, "options.flags: LOCUS_OPTION_TAG_OFFSET_ON and _OFF together")
        case (true, false): tagOffset = .on
        case (false, true): tagOffset = .off
        case (false, false): tagOffset = .automatic
        }
        let floorPointer = UnsafePointer<CChar>(bitPattern: raw.loadUnaligned(fromByteOffset: O.defaultFloor, as: UInt.self))
        var defaultFloor: FloorID?
        if let floorPointer {
            defaultFloor = FloorID(try CText.identifier(UnsafeRawPointer(floorPointer), field: "options.default_floor"))
        }
        return EngineOptions(rateHertz: numbers.rateHertz, sigmaMeters: numbers.sigmaMeters, filter: filter, coupling: coupling,
                             mode: mode, tagOffset: tagOffset, defaultFloor: defaultFloor,
                             smooth: flags & CLayout.OptionFlag.smooth != 0)
    }
    /// - Throws: E1003 when `id` does not fit a `LOCUS_ID_CAPACITY` field.
    private static func checkLength(_ id: String, _ what: String) throws(LocusError) {
        guard id.utf8.count < CLayout.idCapacity else {
            throw LocusError(.invalidArgument, "\(what) '\(id)' is longer than \(CLayout.idCapacity - 1) bytes (the C API's limit)")
        }
    }
}

/// `locus_engine_push_difference`: one range difference.
/// - Returns: 0 when it joined an epoch; otherwise why it was skipped (counted as `locus replay` counts it).
@c(locus_engine_push_difference)
public func locusEnginePushDifference(_ engine: OpaquePointer?, _ difference: UnsafeRawPointer?) -> Int32 {
    Status.guarded { () throws(LocusError) in
        try RangeIngest.pushOne(engine, difference, noun: "difference", push: RangeIngest.pushDifference)
    }
}

/// `locus_engine_push_differences`: `count` differences in order (every one offered even when one is skipped).
/// - Returns: 0 when all were used, else the status of the first skipped one (index in the message).
@c(locus_engine_push_differences)
public func locusEnginePushDifferences(_ engine: OpaquePointer?, _ differences: UnsafeRawPointer?, _ count: Int,
                                       _ outAccepted: UnsafeMutablePointer<Int>?) -> Int32 {
    outAccepted?.pointee = 0
    return Status.guarded { () throws(LocusError) in
        try RangeIngest.pushBatch(engine, differences, count: count, size: CLayout.Difference.size, noun: "differences",
                                  accepted: outAccepted, push: RangeIngest.pushDifference)
    }
}

/// `locus_range` and `locus_difference` records into an engine.
enum RangeIngest {
    /// The one record at `record` (NULL: E1003 "<noun> is NULL") offered to `push`.
    static func pushOne(_ engine: OpaquePointer?, _ record: UnsafeRawPointer?, noun: String,
                        push: (UnsafeRawPointer, inout EngineState) throws(LocusError) -> Void) throws(LocusError) {
        guard let record else { throw LocusError(.invalidArgument, "\(noun) is NULL") }
        try EngineRegistry.withState(engine) { (state: inout EngineState) throws(LocusError) in try push(record, &state) }
    }

    /// `count` records of `size` bytes at `records`, each offered in order to `push` (every one even
    /// when one is skipped). The number used goes to `accepted` (may be NULL); throws the first
    /// skipped one's error, its index named ("ranges[3]: …").
    static func pushBatch(_ engine: OpaquePointer?, _ records: UnsafeRawPointer?, count: Int, size: Int, noun: String,
                          accepted outAccepted: UnsafeMutablePointer<Int>?,
                          push: (UnsafeRawPointer, inout EngineState) throws(LocusError) -> Void) throws(LocusError) {
        guard count >= 0, count <= Int.max / size else { throw LocusError(.invalidArgument, "count is too large") }
        guard count > 0 else { _ = try EngineRegistry.box(engine); return }
        guard let records else { throw LocusError(.invalidArgument, "\(noun) is NULL") }
        var first: LocusError? = nil
        var accepted = 0
        try EngineRegistry.withState(engine) { (state: inout EngineState) throws(LocusError) in
            for i in 0..<count {
                do throws(LocusError) {
                    try push(records + i * size, &state)
                    accepted += 1
                } catch {
                    if first == nil {
                        var indexed = error
                        indexed.message = "\(noun)[\(i)]: " + error.message
                        first = indexed
                    }
                }
            }
        }
        outAccepted?.pointee = accepted
        if let first { throw first }
    }

    /// The difference at `raw` as a value (tag NULL: `tag`; floor NULL: none).
    /// - Throws: E1003 for a tag or floor text that is not a 1–63-byte UTF-8 id.
    static func loadDifference(_ raw: UnsafeRawPointer) throws(LocusError) -> RangeDifference {
        typealias D = CLayout.Difference
        var tag = TagID.single
        if let p = UnsafeRawPointer(bitPattern: raw.loadUnaligned(fromByteOffset: D.tag, as: UInt.self)) {
            tag = TagID(try CText.identifier(p, field: "difference.tag"))
        }
        var floor: FloorID? = nil
        if let p = UnsafeRawPointer(bitPattern: raw.loadUnaligned(fromByteOffset: D.floor, as: UInt.self)) {
            floor = FloorID(try CText.identifier(p, field: "difference.floor"))
        }
        return RangeDifference(timeSeconds: raw.loadUnaligned(fromByteOffset: D.timeSeconds, as: Double.self), tag: tag,
                               reference: LocatorAddress(raw.loadUnaligned(fromByteOffset: D.referenceAnchor, as: UInt16.self)),
                               locator: LocatorAddress(raw.loadUnaligned(fromByteOffset: D.otherAnchor, as: UInt16.self)),
                               differenceMeters: raw.loadUnaligned(fromByteOffset: D.differenceMeters, as: Double.self), floor: floor)
    }

    /// Reads the difference at `raw`, offers it to the engine and says why it was skipped, if it was.
    static func pushDifference(_ raw: UnsafeRawPointer, into state: inout EngineState) throws(LocusError) {
        guard !state.isFinished else { throw LocusError(.callOrder, "the engine is finished") }
        let d = try loadDifference(raw)
        let before = state.engine.diagnostics.skipped
        state.ingest(d)
        let after = state.engine.diagnostics.skipped
        guard after.total != before.total else { state.rangesAccepted += 1; return }
        func grew(_ reason: SkipReason) -> Bool { after.count(reason) > before.count(reason) }
        if grew(.nonFinite) { throw LocusError(.invalidRange, "difference \(d.differenceMeters) m at t \(d.timeSeconds) s is not finite") }
        if grew(.differenceTooLong) {
            throw LocusError(.invalidRange, "difference \(d.differenceMeters) m exceeds the distance of locators \(d.reference) and \(d.locator)")
        }
        if grew(.sameLocator) { throw LocusError(.invalidArgument, "anchor_a and anchor_b are both \(d.locator)") }
        if grew(.unknownFloor) { throw LocusError(.unknownFloor, "no floor '\(d.floor?.rawValue ?? "")' in the site") }
        if grew(.unknownAnchor) {
            throw LocusError(.invalidArgument, "no locator \(d.reference) or \(d.locator) on the difference's floor")
        }
        if grew(.timeBackwards) {
            throw LocusError(.callOrder, "time \(d.timeSeconds) s is before tag '\(TopicEncoding.shown(d.tag.rawValue))''s previous row")
        }
        throw LocusError(.invalidArgument, "the difference was skipped")
    }


    /// The range at `raw` as a measurement (tag NULL: `tag`; floor NULL: none).
    /// - Throws: E1003 for a tag or floor text that is not a 1–63-byte UTF-8 id.
    static func load(_ raw: UnsafeRawPointer) throws(LocusError) -> RangeMeasurement {
        typealias R = CLayout.Range
        var tag = TagID.single
        if let p = UnsafeRawPointer(bitPattern: raw.loadUnaligned(fromByteOffset: R.tag, as: UInt.self)) {
            tag = TagID(try CText.identifier(p, field: "range.tag"))
        }
        var floor: FloorID? = nil
        if let p = UnsafeRawPointer(bitPattern: raw.loadUnaligned(fromByteOffset: R.floor, as: UInt.self)) {
            floor = FloorID(try CText.identifier(p, field: "range.floor"))
        }
        return RangeMeasurement(timeSeconds: raw.loadUnaligned(fromByteOffset: R.timeSeconds, as: Double.self), tag: tag,
                                locator: LocatorAddress(raw.loadUnaligned(fromByteOffset: R.anchor, as: UInt16.self)),
                                rangeMeters: raw.loadUnaligned(fromByteOffset: R.rangeMeters, as: Double.self), floor: floor)
    }

    /// Reads the range at `raw`, offers it to the engine and says why it was skipped, if it was.
    /// - Throws: E1002 (finished, time backwards), E1003 (bad tag or floor text, unknown locator),
    ///   E3002 (unknown floor), E4003 (negative or non-finite range or time).
    static func push(_ raw: UnsafeRawPointer, into state: inout EngineState) throws(LocusError) {
        guard !state.isFinished else { throw LocusError(.callOrder, "the engine is finished") }
        let m = try load(raw)
        let (t, range, tag, floor, anchor) = (m.timeSeconds, m.rangeMeters, m.tag, m.floor, m.locator.rawValue)
        let before = state.engine.diagnostics.skipped
        state.ingest(m)
        let after = state.engine.diagnostics.skipped
        guard after.total != before.total else { state.rangesAccepted += 1; return }
        if after.count(.nonFinite) > before.count(.nonFinite) {
            throw LocusError(.invalidRange, "range \(range) m at t \(t) s is not finite")
        }
        if after.count(.negativeRange) > before.count(.negativeRange) {
            throw LocusError(.invalidRange, "range \(range) m is negative")
        }
        if after.count(.unknownFloor) > before.count(.unknownFloor) {
            throw LocusError(.unknownFloor, "no floor '\(floor?.rawValue ?? "")' in the site")
        }
        if after.count(.unknownAnchor) > before.count(.unknownAnchor) {
            throw LocusError(.invalidArgument, "no locator \(LocatorAddress(anchor)) on the range's floor")
        }
        if after.count(.timeBackwards) > before.count(.timeBackwards) {
            throw LocusError(.callOrder, "time \(t) s is before tag '\(TopicEncoding.shown(tag.rawValue))''s previous range")
        }
        throw LocusError(.invalidArgument, "the range was skipped")
    }
}
