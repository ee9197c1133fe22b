import LocusCore
import LocusIO

/// The feed's `frame` and `end` messages (docs/serve.md): what the engine released, gathered between
/// two frames and written as one line of JSON.
///
/// A fix: `{"t", "tag", "floor", "x", "y", "z", "r95"}` (seconds to ms, metres to mm; `r95` the
/// radius of the 95 % horizontal circle, `PositionFix.horizontalAccuracy95Meters`), with truth the
/// truth at the fix's time (`GroundTruth`, linear in time, shifted by `truthShiftSeconds`) as
/// `"truth": [x, y]` and the horizontal error `"err"`. An event: SPEC §3's object
/// (`ZoneEventWriter.json`), the zones with `callInout: false` adding `"silent": true` to their
/// enter and exit — the command runs the engine with every zone's `callInout` on, so that occupancy
/// can be drawn for every zone, and marks here the events a user of `locus replay` is not sent.
struct ServeFrames {
    private var fixes: [PositionFix] = []
    private var events: [ZoneEvent] = []
    private let truth: GroundTruth?
    private let truthShiftSeconds: Double
    /// (floor, zone) whose enter and exit are silent.
    private let silentZones: Set<ZoneKey>
    private struct ZoneKey: Hashable { var floor: FloorID; var zone: ZoneID }
    private let writer = JSONWriter(style: .compact)

    /// Fixes and events gathered since the last frame.
    var pendingCount: Int { fixes.count + events.count }

    /// `site` as configured by the user (its `callInout` flags say which events are silent).
    init(site: Site, truth: GroundTruth?, truthShiftSeconds: Double = 0) {
        self.truth = truth
        self.truthShiftSeconds = truthShiftSeconds
        var silent = Set<ZoneKey>()
        for f in site.floors { for z in f.zones where !z.rules.callInout { silent.insert(ZoneKey(floor: f.id, zone: z.id)) } }
        silentZones = silent
    }

    /// `site` with every zone's `callInout` on: what the engine judges with (see the type's note).
    static func judgedSite(_ site: Site) -> Site {
        var judged = site
        for f in judged.floors.indices { for z in judged.floors[f].zones.indices { judged.floors[f].zones[z].rules.callInout = true } }
        return judged
    }

    /// Gathers a batch the engine released (fixes in time order, events in SPEC §4.7 order).
    mutating func add(fixes released: [PositionFix], events releasedEvents: [ZoneEvent]) {
        fixes.append(contentsOf: released)
        events.append(contentsOf: releasedEvents)
    }

    /// The `frame` message of everything gathered and of `heard`, or nil when there is nothing;
    /// forgets what it wrote.
    mutating func frame(heard: [(floor: FloorID, address: LocatorAddress, timeSeconds: Double)], clockSeconds: Double) -> [UInt8]? {
        guard !fixes.isEmpty || !events.isEmpty || !heard.isEmpty else { return nil }
        defer {
            fixes.removeAll(keepingCapacity: true)
            events.removeAll(keepingCapacity: true)
        }
        // Written directly (fixes are most of the feed: a JSON tree per fix costs the process about
        // a fifth of its CPU at 1,000 tags × 4 Hz); events and heard locators through the tree.
        var out: [UInt8] = []
        out.reserveCapacity(64 + fixes.count * 120 + events.count * 100 + heard.count * 60)
        out.append(contentsOf: #"{"type":"frame","clock":"#.utf8)
        Self.appendTime(clockSeconds, to: &out)
        out.append(contentsOf: #","fixes":["#.utf8)
        for (i, f) in fixes.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            appendFix(f, to: &out)
        }
        out.append(contentsOf: #"],"events":"#.utf8)
        out.append(contentsOf: writer.string(.array(events.map(eventJSON))).utf8)
        out.append(contentsOf: #","heard":"#.utf8)
        out.append(contentsOf: writer.string(.array(heard.map { h in
            .object([("floor", .string(h.floor.rawValue)), ("address", .string(h.address.description)),
                     ("t", Self.time(h.timeSeconds))])
        })).utf8)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The `end` message: the replay's trace is finished and everything released.
    func end(clockSeconds: Double) -> [UInt8] {
        Array(writer.string(.object([("type", .string("end")), ("clock", Self.time(clockSeconds))])).utf8)
    }

    /// `{"t":…,"tag":…,"floor":…,"x":…,"y":…,"z":…,"r95":…[,"truth":[x,y],"err":…]}`: seconds and
    /// metres to 3 decimals (ms, mm), strings escaped as `JSONWriter` does.
    private func appendFix(_ f: PositionFix, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"t":"#.utf8); Self.appendTime(f.timeSeconds, to: &out)
        out.append(contentsOf: #","tag":"#.utf8); JSONWriter.appendEscaped(f.tag.rawValue, to: &out)
        out.append(contentsOf: #","floor":"#.utf8); JSONWriter.appendEscaped(f.floor.rawValue, to: &out)
        out.append(contentsOf: #","x":"#.utf8); Self.appendTime(f.position.x, to: &out)
        out.append(contentsOf: #","y":"#.utf8); Self.appendTime(f.position.y, to: &out)
        out.append(contentsOf: #","z":"#.utf8); Self.appendTime(f.position.z, to: &out)
        out.append(contentsOf: #","r95":"#.utf8); Self.appendTime(f.horizontalAccuracy95Meters, to: &out)
        if let p = truth?.position(tag: f.tag, at: f.timeSeconds + truthShiftSeconds) {
            let dx = f.position.x - p.x, dy = f.position.y - p.y
            out.append(contentsOf: #","truth":["#.utf8); Self.appendTime(p.x, to: &out)
            out.append(UInt8(ascii: ",")); Self.appendTime(p.y, to: &out)
            out.append(contentsOf: #"],"err":"#.utf8); Self.appendTime((dx * dx + dy * dy).squareRoot(), to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// A number to 3 decimals, `null` when not finite.
    private static func appendTime(_ x: Double, to out: inout [UInt8]) {
        if x.isFinite { DecimalText.append(x, decimals: 3, to: &out) } else { out.append(contentsOf: "null".utf8) }
    }

    /// True for the enter and exit of a zone with `callInout: false`: judged for occupancy, not an
    /// event `locus replay` writes.
    func isSilent(_ e: ZoneEvent) -> Bool {
        e.kind != .dwell && !silentZones.isEmpty && silentZones.contains(ZoneKey(floor: e.floor, zone: e.zone))
    }

    private func eventJSON(_ e: ZoneEvent) -> JSONValue {
        let value = ZoneEventWriter.json(e)
        guard isSilent(e), let members = value.members else { return value }
        return .object(members.map { ($0.key, $0.value) } + [("silent", .bool(true))])
    }

    /// A time in seconds to ms (a non-finite clock, before the first row, as null).
    static func time(_ t: Double) -> JSONValue { t.isFinite ? .number(t, .fixed(3)) : .null }
}
