import LocusCore

/// Writes zone events as JSON Lines (SPEC §3), one object per line in the order given:
/// `{"t":12.250,"tag":"T1","floor":"1F","zone":"entrance","event":"enter"}`, with
/// `"dwellSeconds"` added to dwell events. Times have 3 decimals (ms) and dwell seconds the shortest
/// exact form, so the same events give the same bytes.
package struct ZoneEventWriter {
    package private(set) var bytes: [UInt8] = []
    private let writer = JSONWriter(style: .line)

    package init() {}

    /// The JSON object of one event.
    package static func json(_ e: ZoneEvent) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("t", .number(e.timeSeconds, .fixed(3))),
            ("tag", .string(e.tag.rawValue)),
            ("floor", .string(e.floor.rawValue)),
            ("zone", .string(e.zone.rawValue)),
            ("event", .string(e.kind.rawValue)),
        ]
        if let d = e.dwellSeconds { members.append(("dwellSeconds", .number(d, .shortest))) }
        return .object(members)
    }

    /// Appends one event line.
    package mutating func append(_ event: ZoneEvent) {
        writer.appendLine(Self.json(event), to: &bytes)
    }
}
