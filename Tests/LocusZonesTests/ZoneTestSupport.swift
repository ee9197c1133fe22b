import LocusCore
@testable import LocusZones
import Synchronization

/// One registry for the tests' tag ids (as an engine keeps one): judges take the index.
private let testTags = Mutex(TagRegistry())

extension ZoneJudge {
    /// `judge(_:tag:into:)` with the tag's index from the tests' registry.
    mutating func judge(_ fix: ZoneFix, into events: inout [ZoneEvent]) throws(LocusError) {
        let tag = testTags.withLock { $0.register(fix.tag).index }
        try judge(fix, tag: tag, into: &events)
    }

    /// `judge(_:tag:into:)` for a position fix, with the tag's index from the tests' registry.
    mutating func judge(_ fix: PositionFix, into events: inout [ZoneEvent]) throws(LocusError) {
        let tag = testTags.withLock { $0.register(fix.tag).index }
        try judge(fix, tag: tag, into: &events)
    }
}

/// Rules from the SPEC defaults with some fields overridden.
func rules(inDist: Double = ZoneRules.standard.inDistanceMeters, inCount: Int = ZoneRules.standard.inCount,
           interval: Double = ZoneRules.standard.inCountIntervalSeconds,
           outPeriod: Double = ZoneRules.standard.outPeriodSeconds, priority: Int = ZoneRules.standard.priority,
           callInout: Bool = ZoneRules.standard.callInout, dwell: Double = ZoneRules.standard.dwellSeconds) -> ZoneRules {
    ZoneRules(inDistanceMeters: inDist, inCount: inCount, inCountIntervalSeconds: interval, outPeriodSeconds: outPeriod,
              priority: priority, callInout: callInout, dwellSeconds: dwell)
}

/// An axis-aligned rectangle zone [x0, x1] × [y0, y1].
func rectangle(_ id: ZoneID, _ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double,
               _ r: ZoneRules = .standard) -> Zone {
    Zone(id: id, polygon: [Point2(x: x0, y: y0), Point2(x: x1, y: y0), Point2(x: x1, y: y1), Point2(x: x0, y: y1)],
         rules: r)
}

/// A fix literal.
func fix(_ t: Double, _ tag: TagID, _ x: Double, _ y: Double) -> ZoneFix {
    ZoneFix(timeSeconds: t, tag: tag, point: Point2(x: x, y: y))
}

/// `"t tag zone kind"` (plus `dwellSeconds` for dwell), for literal expectations.
func render(_ e: ZoneEvent) -> String {
    var s = "\(e.timeSeconds) \(e.tag) \(e.zone) \(e.kind.rawValue)"
    if let d = e.dwellSeconds { s += " \(d)" }
    return s
}

/// Judges `fixes` one by one on a floor "F" with `zones`, optionally advances to `advanceTo`,
/// then finishes; returns the rendered events.
func run(_ zones: [Zone], _ fixes: [ZoneFix], advanceTo: Double? = nil, finish: Bool = true) throws -> [String] {
    var judge = try ZoneJudge(floor: Floor(id: "F", zones: zones))
    var events: [ZoneEvent] = []
    for f in fixes { try judge.judge(f, into: &events) }
    if let a = advanceTo { try judge.advance(toSeconds: a, into: &events) }
    if finish { judge.finish(into: &events) }
    return events.map(render)
}

/// Fixes of one tag at `times`, all at (x, y).
func still(_ tag: TagID, _ x: Double, _ y: Double, _ times: [Double]) -> [ZoneFix] {
    times.map { fix($0, tag, x, y) }
}

/// A random scene: overlapping zones with varied rules and tags walking among them at 4 Hz,
/// fixes sorted by time (ties between tags kept), with occasional adjacent swaps between tags.
struct RandomScene {
    var zones: [Zone]
    var fixes: [ZoneFix]

    init(seed: UInt64, tags: Int = 4, zones zoneCount: Int = 8, durationSeconds: Double = 120,
         swaps: Bool = true, shareTimes: Bool = false) {
        var rng = SeededGenerator(seed: seed)
        var zones: [Zone] = []
        for i in 0..<zoneCount {
            let x = rng.uniform(0, 30), y = rng.uniform(0, 30)
            let w = rng.uniform(2, 10), h = rng.uniform(2, 10)
            let r = rules(inDist: [0, 0.5, 1, 3][Int(rng.next() % 4)],
                          inCount: [0, 1, 1, 2, 3][Int(rng.next() % 5)],
                          interval: [0.3, 1, 2][Int(rng.next() % 3)],
                          outPeriod: [0, 1, 3, 2.5][Int(rng.next() % 4)],
                          priority: Int(rng.next() % 3), callInout: rng.next() % 4 != 0,
                          dwell: [0, 1, 2.5, 5][Int(rng.next() % 4)])
            // A random quadrilateral (convex, so simple) in either winding.
            var poly = [Point2(x: x, y: y), Point2(x: x + w, y: y + rng.uniform(-1, 1)),
                        Point2(x: x + w, y: y + h), Point2(x: x + rng.uniform(-1, 1), y: y + h)]
            if rng.next() % 2 == 0 { poly.reverse() }
            zones.append(Zone(id: ZoneID("z\(i)"), polygon: poly, rules: r))
        }
        var fixes: [ZoneFix] = []
        for k in 0..<tags {
            var x = rng.uniform(0, 40), y = rng.uniform(0, 40)
            var heading = rng.uniform(0, 6.283)
            let offset = shareTimes ? 0 : rng.uniform(0, 0.25)
            var t = offset
            var silentUntil = -1.0
            while t < durationSeconds {
                heading += 0.4 * rng.nextGaussian()
                let speed = rng.uniform(0, 2)
                x = min(42, max(-2, x + 0.25 * speed * cos(heading)))
                y = min(42, max(-2, y + 0.25 * speed * sin(heading)))
                if t >= silentUntil {
                    if rng.next() % 200 == 0 { silentUntil = t + rng.uniform(1, 8) } // a tag goes quiet
                    fixes.append(fix(t, TagID("T\(k)"), x + 0.3 * rng.nextGaussian(), y + 0.3 * rng.nextGaussian()))
                }
                t += 0.25
            }
        }
        fixes.sort { ($0.timeSeconds, $0.tag) < ($1.timeSeconds, $1.tag) }
        if swaps {
            for i in 1..<fixes.count where fixes[i].tag != fixes[i - 1].tag && rng.next() % 10 == 0 {
                fixes.swapAt(i, i - 1)
            }
        }
        self.zones = zones
        self.fixes = fixes
    }
}

#if canImport(Glibc)
import Glibc
#endif
