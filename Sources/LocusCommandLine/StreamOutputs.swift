import Locus
import LocusCore
import LocusIO

/// Where `locus stream` writes what the engine releases, each output in its own form:
/// - standard output (`--output -`): the positions CSV (`--format csv`, SPEC §2, header first), or
///   JSON Lines (`--format jsonl`): position objects (`PositionJSONWriter`) and zone events (as
///   `--events` writes them) interleaved in time order;
/// - `--positions FILE`, `--events FILE`: exactly what `locus replay` writes;
/// - an MQTT broker (`--output mqtt://…/PREFIX`): each position published to
///   `PREFIX/tags/<tag>/position`, each event to `PREFIX/tags/<tag>/zone`, one JSON object per message
///   (without the line's newline), in time order (`publish` applies backpressure, never drops).
///
/// Everything written is buffered and handed on by `flush()`, which the stream calls after each
/// input batch and tick — a consumer sees a position as soon as the batch that made it is done.
struct StreamOutputs {
    enum Format: String { case csv, jsonl }

    private let standardOutput: ByteSink?
    private let format: Format
    private let positions: ByteSink?
    private let events: ByteSink?
    private let publisher: LivePublisher?
    private let topicPrefix: String

    private var stdoutBytes: [UInt8] = []
    private var positionBytes: [UInt8] = []
    private var eventWriter = ZoneEventWriter()
    private var stdoutEvents = ZoneEventWriter()
    private var positionJSON = PositionJSONWriter()

    /// Fixes and events written so far.
    private(set) var fixCount = 0
    private(set) var eventCounts: [ZoneEvent.Kind: Int] = [:]

    init(standardOutput: ByteSink?, format: Format, positions: ByteSink?, events: ByteSink?,
         publisher: LivePublisher?, topicPrefix: String) {
        self.standardOutput = standardOutput
        self.format = format
        self.positions = positions
        self.events = events
        self.publisher = publisher
        self.topicPrefix = topicPrefix
        if standardOutput != nil && format == .csv { stdoutBytes = Array(PositionsWriter.header.utf8) }
        if positions != nil { positionBytes = Array(PositionsWriter.header.utf8) }
    }

    /// Buffers (and publishes) a batch released by the engine: `fixes` in (time, tag) order,
    /// `events` in SPEC §4.7 order.
    mutating func write(fixes: [PositionFix], events released: [ZoneEvent]) throws(LocusError) {
        fixCount += fixes.count
        for e in released { eventCounts[e.kind, default: 0] += 1 }
        if positions != nil { for f in fixes { PositionsWriter.appendRow(f, to: &positionBytes) } }
        if events != nil { for e in released { eventWriter.append(e) } }
        if standardOutput != nil {
            switch format {
            case .csv:
                for f in fixes { PositionsWriter.appendRow(f, to: &stdoutBytes) }
            case .jsonl:
                OutputInterleaving.interleave(fixes, released, position: { f in
                    positionJSON.append(f)
                    stdoutBytes.append(contentsOf: positionJSON.bytes)
                    positionJSON.removeAll()
                }, event: { e in
                    stdoutEvents.append(e)
                    stdoutBytes.append(contentsOf: stdoutEvents.bytes)
                    stdoutEvents.removeAll()
                })
            }
        }
        if let publisher {
            var failure: LocusError?
            OutputInterleaving.interleave(fixes, released, position: { f in
                guard failure == nil else { return }
                positionJSON.append(f)
                do throws(LocusError) { try publisher.publish(topic(f.tag, "position"), Array(positionJSON.bytes.dropLast())) } catch { failure = error }
                positionJSON.removeAll()
            }, event: { e in
                guard failure == nil else { return }
                stdoutEvents.append(e)
                do throws(LocusError) { try publisher.publish(topic(e.tag, "zone"), Array(stdoutEvents.bytes.dropLast())) } catch { failure = error }
                stdoutEvents.removeAll()
            })
            if let failure { throw failure }
        }
    }

    private func topic(_ tag: TagID, _ kind: String) -> String {
        topicPrefix.isEmpty ? "tags/\(tag.rawValue)/\(kind)" : "\(topicPrefix)/tags/\(tag.rawValue)/\(kind)"
    }

    /// Hands everything buffered on (a write that blocks is backpressure: the stream waits).
    mutating func flush() throws(LocusError) {
        if let standardOutput, !stdoutBytes.isEmpty {
            try standardOutput.write(stdoutBytes)
            try standardOutput.flush()
            stdoutBytes.removeAll(keepingCapacity: true)
        }
        if let positions, !positionBytes.isEmpty {
            try positions.write(positionBytes)
            try positions.flush()
            positionBytes.removeAll(keepingCapacity: true)
        }
        if let events, !eventWriter.bytes.isEmpty {
            try events.write(eventWriter.bytes)
            try events.flush()
            eventWriter.removeAll()
        }
    }

    /// Flushes and closes the files.
    mutating func close() throws(LocusError) {
        try flush()
        try positions?.close()
        try events?.close()
    }
}
