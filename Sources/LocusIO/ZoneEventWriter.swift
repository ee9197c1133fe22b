import LocusCore

/// Writes zone events as JSON Lines (SPEC §3), one object per line in the order given:
/// `{"t":12.250,"tag":"T1","floor":"1F","zone":"entrance","event":"enter"}`, with
/// `"dwellSeconds"` added to dwell events. Times have 3 decimals (ms) and dwell seconds the shortest
/// exact form, so the same events give the same bytes.
public struct ZoneEventWriter {
    public private(set) var bytes: [UInt8] = []
    private let writer = JSONWriter(style: .line)

    public init() {}

    /// Forgets the bytes written, keeping the storage (output written piece by piece).
    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

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

    /// Appends one event line: written into stack scratch memory and copied once; an event the
    /// fast path cannot spell exactly (ids needing escapes, a long id, a time it cannot round) goes
    /// through `appendExact`, the same bytes.
    public mutating func append(_ event: ZoneEvent) {
        let written = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) { scratch -> Bool in
            guard let base = scratch.baseAddress else { return false }
            var row = ScratchRow(base: base, capacity: scratch.count)
            guard Self.write(event, to: &row) else { return false }
            bytes.append(contentsOf: row.written)
            return true
        }
        if !written { appendExact(event) }
    }

    /// Appends one event line through the JSON tree and `JSONWriter` (the reference spelling).
    mutating func appendExact(_ event: ZoneEvent) {
        writer.appendLine(Self.json(event), to: &bytes)
    }

    /// The `.line`-style record of `json(_:)` written directly; false when any part needs the exact path.
    private static func write(_ e: ZoneEvent, to row: inout ScratchRow) -> Bool {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        guard row.append("{\"t\": "), row.appendFixed(e.timeSeconds, decimals: 3),
              row.append(", \"tag\": \""), row.appendPlain(e.tag.rawValue, forbidding: quote, backslash),
              row.append("\", \"floor\": \""), row.appendPlain(e.floor.rawValue, forbidding: quote, backslash),
              row.append("\", \"zone\": \""), row.appendPlain(e.zone.rawValue, forbidding: quote, backslash),
              row.append("\", \"event\": \""), row.appendPlain(e.kind.rawValue, forbidding: quote, backslash),
              row.append(quote) else { return false }
        if let d = e.dwellSeconds {
            // `.shortest`: whole numbers below 10¹⁵ as digits, others as the standard library spells them.
            guard d.isFinite, row.append(", \"dwellSeconds\": ") else { return false }
            if d.rounded(.towardZero) == d, abs(d) < 1e15, let whole = Int64(exactly: d) {
                guard row.appendDigits(whole.magnitude, negative: whole < 0, decimals: 0) else { return false }
            } else {
                guard row.appendPlain(d.description, forbidding: quote, backslash) else { return false }
            }
        }
        return row.append("}\n")
    }
}
