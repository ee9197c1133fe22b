import Locus
import LocusCore
import LocusIO

/// `locus replay` over a recording of any length: the trace is read in chunks (`TraceStream`), fed
/// to the engine as it is read (`ShardedEngine`, `jobs` cores), and positions and events are written
/// as the engine releases them — memory depends on the live tags and the reorder window, not on the
/// length of the recording. The bytes are those of the whole-file path (`EngineDriver.replay`).
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
        /// The run judged against truth (with truth).
        var evaluation: ReplayEvaluation?
        /// Time-ordered runs of the trace, and blocks sorted through the temporary file (0: in memory);
        /// nil when the trace was in order.
        var sortedRuns: Int?
        var spilledBlocks = 0
    }

    let site: Site
    let configuration: EngineConfiguration
    let jobs: Int
    /// What a comparison with truth gathers (nil without truth): copied into each pass.
    var evaluation: ReplayEvaluation?
    /// Called with the number of rows read, now and then.
    var progress: ((Int) -> Void)?
    /// Rows per sorted block of an out-of-order trace (`TraceRowSorter`); small in tests, to spill.
    var sortBlockRows = 1 << 20

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
        if ordered {
            if let outcome = try pass(source: source, sorted: false, positions: positions, events: events) { return outcome }
            // Written so far is taken back (only restartable outputs get here: see above).
            try positions?.restart()
            try events?.restart()
        }
        try source.rewind()
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

    /// One block of rows on its way to the engine, by shard, with the tags and floors first seen in it.
    private struct ReadBlock: Sendable {
        var rows: ShardRows
        var newTags: [TagID] = []
        var newFloors: [FloorID] = []
        var outOfOrder = false
        /// Data rows read so far, this block's included.
        var rowsRead = 0
    }

    /// What the reading stage counted.
    private struct ReadSummary: Sendable {
        var rows = 0
        var tags = 0
        var skipped = SkipTally()
        var sortedRuns: Int?
        var spilledBlocks = 0
    }

    /// What the writing stage counted.
    private struct WriteSummary: Sendable {
        var fixes = 0
        var events: [ZoneEvent.Kind: Int] = [:]
    }

    /// A value filled by one stage's thread and read after it ended.
    private final class Box<T>: @unchecked Sendable {
        var value: T
        init(_ value: T) { self.value = value }
    }

    /// One pass: rows as read (`sorted` false; nil at the first row out of order) or through the
    /// sorter, into the engine, out to the sinks. While the shards solve one block (on every
    /// thread, each shard spelling its fixes), a side task (`ShardedEngine.withSideTask`), run by whichever
    /// thread is free, reads and parses the next block and writes the output collected the time
    /// before; meanwhile, before the shards start, this thread takes what the merge lets out after
    /// the block before (`Writer.collect`), for the next side task to write. Blocks' row storage
    /// and the output buffers go round (the block solved lends its storage to the block after
    /// next), so none is allocated afresh.
    private func pass(source: ByteSource, sorted: Bool, positions: ByteSink?, events: ByteSink?) throws(LocusError) -> Outcome? {
        let encoder: ShardedEngine.FixEncoder? = positions == nil ? nil : { @Sendable fix, bytes in PositionsWriter.appendRow(fix, to: &bytes) }
        let engine = try ShardedEngine(site: site, configuration: configuration, jobs: jobs, encoder: encoder, keepFixes: evaluation != nil)
        let reader = Box(Reader(source: source, sorted: sorted, sortBlockRows: sortBlockRows, shards: engine.shardCount))
        var writer = Writer(evaluation: evaluation)
        // What the merge let out, filled by this thread (`collect`) and written by the side task.
        var collected = Output(positions: positions, events: events)
        let toWrite = Box(Output(positions: positions, events: events))
        var outOfOrder = false

        var current = try reader.value.next(reusing: nil)
        var spare: ShardRows? = nil
        while let block = current {
            if block.outOfOrder { outOfOrder = true; break }
            // The next block read, and the last block's output written, alongside this one's solving.
            let next = Box<Result<ReadBlock?, LocusError>>(.success(nil))
            let written = Box<LocusError?>(nil)
            let storage = spare
            engine.withSideTask({
                next.value = Result { () throws(LocusError) in try reader.value.next(reusing: storage) }
                do throws(LocusError) { try toWrite.value.write() } catch { written.value = error }
            }) {
                // What the last block's solving released, collected while the side task runs (the
                // shards are idle now: collecting after the solving would leave the other thread idle).
                writer.collect(from: engine, into: &collected)
                engine.add(newTagIDs: block.newTags, newFloorIDs: block.newFloors)
                engine.ingest(block.rows)
            }
            if let failure = written.value { throw failure }
            swap(&collected, &toWrite.value)
            progress?(block.rowsRead)
            spare = block.rows
            current = try next.value.get()
        }
        if outOfOrder { return nil }
        engine.finish()
        writer.collect(from: engine, into: &collected)
        try toWrite.value.write()
        try collected.write()
        try positions?.flush()
        try events?.flush()
        let read = reader.value.summary
        var out = Outcome()
        out.fixes = writer.summary.fixes
        out.events = writer.summary.events
        writer.evaluation?.finish()
        out.evaluation = writer.evaluation
        out.tags = read.tags
        out.skipped = read.skipped
        out.rows = read.rows + read.skipped.total
        out.diagnostics = engine.diagnostics
        out.skipped.merge(out.diagnostics.skipped)
        out.sortedRuns = read.sortedRuns
        out.spilledBlocks = read.spilledBlocks
        return out
    }

    /// The reading stage: the trace in blocks (as read, or through the sorter), split by shard, the
    /// order checked; the ids first seen in each block handed over with it (the engine routes by them).
    private struct Reader: @unchecked Sendable {  // one stage at a time (the sorter is a class)
        private var stream: TraceStream
        private let sorted: Bool
        private let sortBlockRows: Int
        private var sorter: TraceRowSorter?
        private var tagsSent = 0
        private var floorsSent = 0
        private var lastTime = -Double.infinity
        /// A block's rows: as read (the stream writes them into `run`), or from the sorter.
        private let run = TraceRowRun(capacity: 1 << 16)
        private var rows: [TraceRow] = []
        private(set) var rowsRead = 0
        private let shards: Int

        init(source: ByteSource, sorted: Bool, sortBlockRows: Int, shards: Int) {
            self.shards = shards
            stream = TraceStream(source: source)
            self.sorted = sorted
            self.sortBlockRows = sortBlockRows
        }

        /// The next block (its rows in `storage`, emptied), nil at the end.
        mutating func next(reusing storage: ShardRows?) throws(LocusError) -> ReadBlock? {
            if sorted && sorter == nil {
                let s = TraceRowSorter(blockRows: sortBlockRows)
                while try stream.nextRows(into: &rows) {
                    try s.add(rows)
                    rows.removeAll(keepingCapacity: true)
                }
                sorter = s
            }
            rows.removeAll(keepingCapacity: true)
            run.removeAll()
            let more: Bool
            if let sorter { more = try sorter.next(into: &rows) } else { more = try stream.nextRows(into: run) }
            guard more else { return nil }
            var block = ReadBlock(rows: storage ?? ShardRows(shards: shards))
            let tags = stream.tags
            if tagsSent < tags.count {
                block.newTags = Array(tags[tagsSent...])
                tagsSent = tags.count
            }
            let floors = stream.floors
            if floorsSent < floors.count {
                block.newFloors = Array(floors[floorsSent...])
                floorsSent = floors.count
            }
            // The rows as read (in the run) or from the sorter (in the array).
            let split = block.rows
            func route(_ read: Span<TraceRow>) -> Bool { split.route(read, lastTime: &lastTime) }
            let sortedRows = rows  // the sorter's rows (no copy: the array's storage is shared)
            guard sorter == nil ? run.withRows(route) : route(sortedRows.span) else {
                return ReadBlock(rows: split, outOfOrder: true)
            }
            rowsRead += sorter == nil ? run.count : rows.count
            block.rowsRead = rowsRead
            return block
        }

        /// The counts, once the input is exhausted.
        var summary: ReadSummary {
            ReadSummary(rows: rowsRead, tags: stream.tags.count, skipped: stream.skipped, sortedRuns: sorter?.runs,
                        spilledBlocks: sorter?.spilledBlocks ?? 0)
        }
    }

    /// What the merge let out and is not written yet: the positions bytes (already spelled by the
    /// shards; the header first) and the zone events, with their sinks. Filled by `Writer.collect`
    /// on the driving thread, written by the side task while the next block is solved.
    private struct Output: @unchecked Sendable {  // one thread at a time (the sinks are classes)
        let positions: ByteSink?
        let events: ByteSink?
        var positionBytes: [UInt8] = []
        var released: [ZoneEvent] = []
        private var eventsWriter = ZoneEventWriter()

        init(positions: ByteSink?, events: ByteSink?) {
            self.positions = positions
            self.events = events
        }

        /// Writes and forgets what is held (keeping the storage).
        /// - Throws: E5005 for an output.
        mutating func write() throws(LocusError) {
            if let positions, !positionBytes.isEmpty { try positions.write(positionBytes) }
            positionBytes.removeAll(keepingCapacity: true)
            if let events, !released.isEmpty {
                for e in released { eventsWriter.append(e) }
                try events.write(eventsWriter.bytes)
                eventsWriter.removeAll()
            }
            released.removeAll(keepingCapacity: true)
        }
    }

    /// The writing stage's bookkeeping: what the engine's merge lets out, counted, compared with
    /// truth, and handed to an `Output` to be written.
    private struct Writer {
        private var fixes: [PositionFix] = []
        private var headerDone = false
        private(set) var summary = WriteSummary()
        /// The comparison with truth, fed in release order.
        var evaluation: ReplayEvaluation?

        init(evaluation: ReplayEvaluation?) {
            self.evaluation = evaluation
        }

        /// Takes what `engine` lets out into `output` (after what it holds; the positions header
        /// first).
        mutating func collect(from engine: ShardedEngine, into output: inout Output) {
            if !headerDone {
                if output.positions != nil { output.positionBytes.append(contentsOf: PositionsWriter.header.utf8) }
                headerDone = true
            }
            let eventsBefore = output.released.count
            summary.fixes += engine.takeMerged(bytes: &output.positionBytes, fixes: &fixes, events: &output.released)
            for e in output.released[eventsBefore...] { summary.events[e.kind, default: 0] += 1 }
            if evaluation != nil {
                for f in fixes { evaluation?.add(f) }
                for e in output.released[eventsBefore...] { evaluation?.add(e) }
            }
            fixes.removeAll(keepingCapacity: true)
            if output.positions == nil { output.positionBytes.removeAll(keepingCapacity: true) }
            if output.events == nil { output.released.removeAll(keepingCapacity: true) }
        }
    }
}
