import Locus
import LocusCore
import LocusIO

/// `locus replay` over a recording of any length: the trace is read in chunks (`TraceStream`), fed
/// to the engine as it is read (`ShardedEngine`, `jobs` cores), and positions and events are written
/// as the engine releases them — memory depends on the live tags and the reorder window, not on the
/// length of the recording. The bytes are those of the whole-file path (`ReplayRun`).
///
/// Order. The engine needs the rows in time order (ties in file order). A trace read as it comes is
/// assumed to be in order; at the first row earlier than its predecessor the pass stops, the outputs
/// are emptied, and the trace is read again through an external merge sort (`TraceRowSorter`): two
/// passes only for a trace that needs them. When an output cannot be taken back (standard output, a
/// pipe) the order is checked by a first reading pass instead, before anything is written.
struct StreamingReplay {
    /// What the run produced and counted.
    struct Outcome {
        var fixes = 0
        var events: [ZoneEvent.Kind: Int] = [:]
        /// Data rows read (kept or skipped by the reader).
        var rows = 0
        var tags = 0
        var skipped = SkipTally()
        var diagnostics = EngineDiagnostics()
        var accuracy: AccuracyReport?
        /// Time-ordered runs of the trace, and blocks sorted through the temporary file (0: in memory);
        /// nil when the trace was in order.
        var sortedRuns: Int?
        var spilledBlocks = 0
    }

    let site: Site
    let configuration: EngineConfiguration
    let jobs: Int
    let truth: GroundTruth?
    let truthShiftSeconds: Double
    /// Called with the number of rows read, now and then.
    var progress: ((Int) -> Void)?

    /// Replays the trace from `source` into the sinks.
    /// - Throws: the reader's errors (E5001, E5003, E5004 naming the input), E5005 for an output.
    func run(source: ByteSource, positions: ByteSink?, events: ByteSink?) throws(LocusError) -> Outcome {
        let restartable = [positions, events].allSatisfy { $0?.canRestart ?? true }
        var ordered = true
        if !restartable {
            // Nothing may be written before the order is known.
            ordered = try Self.isTimeOrdered(source)
            try source.rewind()
        }
        if ordered, let outcome = try pass(source: source, sorted: false, positions: positions, events: events) {
            return outcome
        }
        try source.rewind()
        try positions?.restart()
        try events?.restart()
        guard let outcome = try pass(source: source, sorted: true, positions: positions, events: events) else {
            preconditionFailure("a sorted pass is in order")
        }
        return outcome
    }

    /// True when the trace's kept rows are in non-decreasing time (a reading pass, nothing kept).
    static func isTimeOrdered(_ source: ByteSource) throws(LocusError) -> Bool {
        var stream = TraceStream(source: source)
        var rows: [TraceRow] = []
        var last = -Double.infinity
        while try stream.nextRows(into: &rows) {
            for r in rows {
                if r.timeSeconds < last { return false }
                last = r.timeSeconds
            }
            rows.removeAll(keepingCapacity: true)
        }
        return true
    }

    /// One pass: rows as read (`sorted` false; nil at the first row out of order) or through the
    /// sorter, into the engine, out to the sinks.
    private func pass(source: ByteSource, sorted: Bool, positions: ByteSink?, events: ByteSink?) throws(LocusError) -> Outcome? {
        var stream = TraceStream(source: source)
        var engine = try ShardedEngine(site: site, configuration: configuration, jobs: jobs)
        var out = Outcome()
        var positionsWriter = PositionsWriter()
        if positions == nil { positionsWriter.removeAll() }
        var eventsWriter = ZoneEventWriter()
        var accuracy = truth == nil ? nil : AccuracyReport.Accumulator()
        var floorOf: [Int32?] = []
        var routerSkips = SkipTally()
        var rows: [TraceRow] = []
        rows.reserveCapacity(1 << 16)
        var routed: [ShardedEngine.Row] = []
        routed.reserveCapacity(1 << 16)
        var lastTime = -Double.infinity
        var rowsSeen = 0

        var sorter: TraceRowSorter? = nil
        if sorted {
            let s = TraceRowSorter()
            while try stream.nextRows(into: &rows) {
                try s.add(rows)
                rows.removeAll(keepingCapacity: true)
            }
            sorter = s
            out.sortedRuns = s.runs
        }

        /// Writes and counts what the engine let out.
        func emit(_ fixes: [PositionFix], _ released: [ZoneEvent]) throws(LocusError) {
            out.fixes += fixes.count
            for e in released { out.events[e.kind, default: 0] += 1 }
            if let t = truth {
                for f in fixes { accuracy?.add(f, truth: t.position(tag: f.tag, at: f.timeSeconds + truthShiftSeconds)) }
            }
            if let positions {
                for f in fixes { positionsWriter.append(f) }
                try positions.write(positionsWriter.bytes)
                positionsWriter.removeAll()
            }
            if let events, !released.isEmpty {
                for e in released { eventsWriter.append(e) }
                try events.write(eventsWriter.bytes)
                eventsWriter.removeAll()
            }
        }

        while true {
            rows.removeAll(keepingCapacity: true)
            let more: Bool
            if let sorter { more = try sorter.next(into: &rows) } else { more = try stream.nextRows(into: &rows) }
            guard more else { break }
            while engine.tagCount < stream.tags.count {
                engine.register(stream.tags[engine.tagCount], global: engine.tagCount)
            }
            while floorOf.count < stream.floors.count {
                floorOf.append(site.floorIndex(of: stream.floors[floorOf.count]).map { Int32($0.rawValue) })
            }
            routed.removeAll(keepingCapacity: true)
            let defaultFloor = Int32(engine.first.defaultFloor.rawValue)
            for r in rows {
                if r.timeSeconds < lastTime { return nil }
                lastTime = r.timeSeconds
                var floor = defaultFloor
                if r.floorIndex >= 0 {
                    guard let known = floorOf[Int(r.floorIndex)] else { routerSkips.record(.unknownFloor, line: Int(r.line)); continue }
                    floor = known
                }
                routed.append(ShardedEngine.Row(tag: r.tagIndex, floor: floor, locator: r.locator, line: r.line,
                                                rangeMeters: r.rangeMeters, timeSeconds: r.timeSeconds))
            }
            routed.withUnsafeBufferPointer { engine.ingest($0) }
            var failure: LocusError? = nil
            engine.takeMerged { fixes, released in
                do throws(LocusError) { try emit(fixes, released) } catch { failure = error }
            }
            if let failure { throw failure }
            rowsSeen += rows.count
            progress?(rowsSeen)
        }
        engine.finish()
        var failure: LocusError? = nil
        engine.takeMerged { fixes, released in
            do throws(LocusError) { try emit(fixes, released) } catch { failure = error }
        }
        if let failure { throw failure }
        try positions?.flush()
        try events?.flush()

        out.tags = stream.tags.count
        out.skipped = stream.skipped
        out.rows = (sorter?.count ?? rowsSeen) + stream.skipped.total
        var diagnostics = engine.diagnostics
        diagnostics.skipped.merge(routerSkips)
        out.diagnostics = diagnostics
        out.skipped.merge(diagnostics.skipped)
        out.accuracy = accuracy?.report
        out.spilledBlocks = sorter?.spilledBlocks ?? 0
        return out
    }
}
