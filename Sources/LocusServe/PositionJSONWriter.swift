import LocusCore

/// Writes positions as JSON Lines, the live stream's form of a fix (`locus stream`: MQTT payloads
/// and `--format jsonl`; docs/stream.md):
/// `{"t": 12.250, "tag": "T1", "floor": "1F", "x": 3.1416, "y": 2.7183, "z": 1.1000, "sd_x": 0.0712,
/// "sd_y": 0.0655, "r95": 0.1683}` — the SPEC's position fields, then the fix's uncertainty from its
/// covariance C: `sd_x` = √C_xx and `sd_y` = √C_yy (metres, 1σ) and `r95` the radius of the
/// horizontal circle holding the position with probability 0.95 (metres; the positions CSV's
/// `accuracy95_m`); `vx`, `vy` (m/s) follow when the filter estimated a velocity. Times have 3
/// decimals (ms), lengths 4 (0.1 mm), velocities 3: the same fixes give the same bytes.
struct PositionJSONWriter {
    private(set) var bytes: [UInt8] = []
    private let writer = JSONWriter(style: .line)

    init() {}

    /// Forgets the bytes written, keeping the storage (output written piece by piece).
    mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// The JSON object of one fix.
    static func json(_ fix: PositionFix) -> JSONValue {
        let c = fix.covariance
        var members: [(String, JSONValue)] = [
            ("t", .number(fix.timeSeconds, .fixed(3))),
            ("tag", .string(fix.tag.rawValue)),
            ("floor", .string(fix.floor.rawValue)),
            ("x", .number(fix.position.x, .fixed(4))),
            ("y", .number(fix.position.y, .fixed(4))),
            ("z", .number(fix.position.z, .fixed(4))),
            ("sd_x", .number(max(0, c.xx).squareRoot(), .fixed(4))),
            ("sd_y", .number(max(0, c.yy).squareRoot(), .fixed(4))),
            ("r95", .number(fix.horizontalAccuracy95Meters, .fixed(4))),
        ]
        if let v = fix.velocity {
            members.append(("vx", .number(v.x, .fixed(3))))
            members.append(("vy", .number(v.y, .fixed(3))))
        }
        return .object(members)
    }

    /// Appends one fix's line.
    mutating func append(_ fix: PositionFix) {
        writer.appendLine(Self.json(fix), to: &bytes)
    }
}
