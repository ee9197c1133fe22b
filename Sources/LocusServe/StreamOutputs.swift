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
///   `<tag>` is the id encoded into one topic level (`TopicEncoding`): an id is data, never topic
///   syntax. A publish the client refuses is counted (`publishFailures`) and logged once, with the
///   id shown bounded and escaped; it never ends the stream (one bad message must not stop every
///   other tag's feed).
///
/// Everything written is buffered and handed on by `flush()`, which the stream calls after each
/// input batch and tick — a consumer sees a position as soon as the batch that made it is done.
struct StreamOutputs {
    private let standardOutput: ByteSink?
    /// Standard output's form: JSON Lines (`--format jsonl`) or the positions CSV.
    private let jsonLines: Bool
    private let positions: ByteSink?
    private let events: ByteSink?
    private let publisher: LivePublisher?
    private let log: @Sendable (String) -> Void

    private var stdoutBytes: [UInt8] = []
    private var positionBytes: [UInt8] = []
    private var eventWriter = ZoneEventWriter()
    private var stdoutEvents = ZoneEventWriter()
    private var positionJSON = PositionJSONWriter()

    /// Fixes and events written so far.
    private(set) var fixCount = 0
    private(set) var eventCounts: [ZoneEvent.Kind: Int] = [:]
    /// Publishes the broker client refused (counted, the first one logged).
    private(set) var publishFailures = 0

    /// `log` gets the first refused publish.
    init(standardOutput: ByteSink?, jsonLines: Bool, positions: ByteSink?, events: ByteSink?,
         publisher: LivePublisher?, log: @escaping @Sendable (String) -> Void) {
        self.log = log
        self.standardOutput = standardOutput
        self.jsonLines = jsonLines
        self.positions = positions
        self.events = events
        self.publisher = publisher
        if standardOutput != nil && !jsonLines { stdoutBytes = Array(PositionsWriter.header.utf8) }
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
            if !jsonLines {
                for f in fixes { PositionsWriter.appendRow(f, to: &stdoutBytes) }
            } else {
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
            OutputInterleaving.interleave(fixes, released, position: { f in
                positionJSON.append(f)
                publish(publisher, f.tag, "position", Array(positionJSON.bytes.dropLast()))
                positionJSON.removeAll()
            }, event: { e in
                stdoutEvents.append(e)
                publish(publisher, e.tag, "zone", Array(stdoutEvents.bytes.dropLast()))
                stdoutEvents.removeAll()
            })
        }
    }

    /// Publishes one message to `PREFIX/tags/<encoded tag>/<kind>`; a refusal is counted and the
    /// first one logged (the id bounded: `TopicEncoding.shown`; not the client's message, which
    /// quotes the whole topic).
    private mutating func publish(_ publisher: LivePublisher, _ tag: TagID, _ kind: String, _ payload: [UInt8]) {
        do throws(LocusError) {
            try publisher.publish(tag: tag, kind: kind, payload)
        } catch {
            publishFailures += 1
            if publishFailures == 1 {
                log("locus stream: a publish failed (\(error.code.rawValue)) for tag '\(TopicEncoding.shown(tag.rawValue))' (\(kind)); counted as publish_failures, the stream goes on and later failures are not logged\n")
            }
        }
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
