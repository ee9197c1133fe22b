import Testing
import LocusCore
@testable import LocusZones

/// Batch and tick invariance, properties on random walks, and a naive oracle of SPEC §4.
@Suite("Zone judgement invariance and properties")
struct ZoneJudgeInvarianceTests {
    /// Events from feeding `fixes` one by one, then `finish`.
    static func reference(_ scene: RandomScene) throws -> [ZoneEvent] {
        var judge = try ZoneJudge(floor: Floor(id: "F", zones: scene.zones))
        var events: [ZoneEvent] = []
        for f in scene.fixes { try judge.judge(f, into: &events) }
        judge.finish(into: &events)
        return events
    }

    @Test("the tag numbering — dense, shuffled or sparse — never changes the events", arguments: [6, 7] as [UInt64])
    func tagNumberingIsOnlyANumbering(seed: UInt64) throws {
        let scene = RandomScene(seed: seed)
        let expected = try Self.reference(scene)
        var rng = SeededGenerator(seed: seed &+ 77)
        var numbers: [TagID: TagIndex] = [:]
        var free = Array(0..<64).shuffled(using: &rng)
        var judge = try ZoneJudge(floor: Floor(id: "F", zones: scene.zones))
        var events: [ZoneEvent] = []
        for f in scene.fixes {
            let index = numbers[f.tag] ?? TagIndex(3 * free.removeLast() + 5)
            numbers[f.tag] = index
            try judge.judge(f, tag: index, into: &events)
        }
        judge.finish(into: &events)
        #expect(events.map(render) == expected.map(render))
    }

    @Test("random batch sizes and ticks up to the next fix time give identical events", arguments: [1, 2, 3, 4, 5] as [UInt64])
    func batchAndTickInvariance(seed: UInt64) throws {
        let scene = RandomScene(seed: seed)
        let expected = try Self.reference(scene)
        #expect(expected.count > 20)  // the scene exercises the judge
        var rng = SeededGenerator(seed: seed &+ 1000)
        var judge = try ZoneJudge(floor: Floor(id: "F", zones: scene.zones))
        var all: [ZoneEvent] = []
        var i = 0
        while i < scene.fixes.count {
            let batchSize = 1 + Int(rng.next() % 17)
            var batch: [ZoneEvent] = []  // a fresh array per batch, as a caller draining per call would
            for f in scene.fixes[i..<min(scene.fixes.count, i + batchSize)] {
                if rng.next() % 3 == 0 {
                    // A timer tick somewhere between the clock and this fix's time (never beyond).
                    let lo = judge.clockSeconds ?? f.timeSeconds - 1
                    let tick = min(f.timeSeconds, lo + (f.timeSeconds - lo) * rng.nextUnit())
                    try judge.advance(toSeconds: tick, into: &batch)
                    if rng.next() % 2 == 0 { try judge.advance(toSeconds: f.timeSeconds, into: &batch) }
                }
                try judge.judge(f, into: &batch)
            }
            all += batch
            i += batchSize
        }
        judge.finish(into: &all)
        #expect(all.map(render) == expected.map(render))
    }

    @Test("on random walks exits follow enters, dwells are tEnter + k·dwellSeconds, no event is after the clock, order is §4.7",
          arguments: [11, 12, 13, 14] as [UInt64])
    func properties(seed: UInt64) throws {
        let scene = RandomScene(seed: seed, tags: 6, zones: 10, durationSeconds: 200)
        let rulesByZone = Dictionary(uniqueKeysWithValues: scene.zones.map { ($0.id, $0.rules) })
        var judge = try ZoneJudge(floor: Floor(id: "F", zones: scene.zones))
        var events: [ZoneEvent] = []
        for f in scene.fixes {
            let before = events.count
            try judge.judge(f, into: &events)
            let clock = try #require(judge.clockSeconds)
            for e in events[before...] { #expect(e.timeSeconds <= clock) }
        }
        judge.finish(into: &events)
        #expect(events.count > 20)
        let instant = NaiveOracle.instantExits(events)
        for i in events.indices.dropLast() {
            let p = events[i], q = events[i + 1]
            #expect(ZoneJudge.releasePrecedes(p, isInstantExit: instant[i], q, isInstantExit: instant[i + 1]),
                    "out of order: \(render(p)) then \(render(q))")
            if !instant[i] && !instant[i + 1] { #expect(ZoneEvent.precedes(p, q)) }  // plain §4.7 otherwise
        }
        struct Pair: Hashable { var tag: TagID; var zone: ZoneID }
        var enterTime: [Pair: Double] = [:]
        for e in events {
            let pair = Pair(tag: e.tag, zone: e.zone)
            let r = try #require(rulesByZone[e.zone])
            switch e.kind {
            case .enter:
                #expect(enterTime[pair] == nil, "enter twice: \(render(e))")
                enterTime[pair] = e.timeSeconds
            case .exit:
                #expect(enterTime[pair] != nil, "exit without enter: \(render(e))")
                enterTime[pair] = nil
            case .dwell:
                #expect(r.dwellSeconds > 0)
                let d = try #require(e.dwellSeconds)
                let k = (d / r.dwellSeconds).rounded()
                #expect(k >= 1 && abs(d - k * r.dwellSeconds) < 1e-9)
                if r.callInout {
                    let entered = try #require(enterTime[pair], "dwell outside: \(render(e))")
                    #expect(e.timeSeconds == entered + k * r.dwellSeconds)
                }
            }
        }
    }

    @Test("the incremental judge agrees with a naive all-pairs oracle of SPEC §4", arguments: [21, 22, 23] as [UInt64])
    func agreesWithOracle(seed: UInt64) throws {
        let scene = RandomScene(seed: seed, tags: 5, zones: 12, durationSeconds: 150, swaps: false, shareTimes: seed == 22)
        let expected = NaiveOracle.events(zones: scene.zones, fixes: scene.fixes)
        #expect(expected.count > 20)
        #expect(try Self.reference(scene).map(render) == expected.map(render))
    }

    @Test("walking along a zone edge with 0.3 m noise at 4 Hz gives no enter/exit flicker",
          arguments: [0.0, -3.0] as [Double])
    func boundaryJitter(edgeOffsetMeters: Double) throws {
        let zone = rectangle("a", 0, 0, 20, 10)
        var rng = SeededGenerator(seed: 77)
        var fixes: [ZoneFix] = []
        for k in 0..<(4 * 60) {  // x from −10 to 50 m at 1 m/s: along the edge y = 0 (or the reach y = −3)
            let t = Double(k) * 0.25
            fixes.append(fix(t, "T1", -10 + t + 0.3 * rng.nextGaussian(), edgeOffsetMeters + 0.3 * rng.nextGaussian()))
        }
        let events = try run([zone], fixes)
        let enters = events.filter { $0.hasSuffix("enter") }.count
        let exits = events.filter { $0.hasSuffix("exit") }.count
        #expect(enters == 1 && exits <= 1, "\(events)")
    }
}

/// A deliberately naive SPEC §4 judge for globally time-sorted fixes: every pair is visited at
/// every fix, and all events are sorted at the end. Slow, obvious, independent of the heap,
/// the grid and the release buffer.
enum NaiveOracle {
    struct State { var count = 0; var previous = 0.0; var inside = false; var enter = 0.0; var last = 0.0 }

    static func events(zones: [Zone], fixes: [ZoneFix]) -> [ZoneEvent] {
        let polygons = zones.map { z in Array(z.polygon) }
        var states: [TagID: [State]] = [:]
        var out: [ZoneEvent] = []
        var clock = -Double.infinity

        func close(_ tag: TagID, _ z: Int, _ s: inout State, upTo c: Double, final: Bool) {
            // Dwells t_enter + k·T ≤ c and < t_last + T_out; exit when t_last + T_out < c.
            let r = zones[z].rules, exitTime = s.last + r.outPeriodSeconds
            if r.dwellSeconds > 0 {
                var k = 1.0
                while s.enter + k * r.dwellSeconds < exitTime && s.enter + k * r.dwellSeconds <= c {
                    let e = ZoneEvent(timeSeconds: s.enter + k * r.dwellSeconds, tag: tag, floor: "F", zone: zones[z].id,
                                      kind: .dwell, dwellSeconds: k * r.dwellSeconds)
                    if !out.contains(e) { out.append(e) }
                    k += 1
                }
            }
            if !final && exitTime < c {
                if r.callInout { out.append(ZoneEvent(timeSeconds: exitTime, tag: tag, floor: "F", zone: zones[z].id, kind: .exit)) }
                s = State()
            }
        }

        for f in fixes {
            clock = max(clock, f.timeSeconds)
            for tag in states.keys.sorted() {
                for z in zones.indices where states[tag]?[z].inside == true {
                    if var s = states[tag]?[z] { close(tag, z, &s, upTo: clock, final: false); states[tag]?[z] = s }
                }
            }
            if states[f.tag] == nil { states[f.tag] = Array(repeating: State(), count: zones.count) }
            var qualifying: [Int] = []
            for z in zones.indices where distance(f.point, polygons[z]) <= zones[z].rules.inDistanceMeters { qualifying.append(z) }
            let best = qualifying.map { zones[$0].rules.priority }.max() ?? 0
            for z in qualifying where zones[z].rules.priority == best {
                guard var s = states[f.tag]?[z] else { continue }
                let r = zones[z].rules
                if s.inside { s.last = clock } else if r.inCount > 0 {
                    s.count = (s.count > 0 && clock - s.previous <= r.inCountIntervalSeconds) ? s.count + 1 : 1
                    s.previous = clock
                    if s.count >= r.inCount {
                        s.inside = true; s.enter = clock; s.last = clock
                        if r.callInout { out.append(ZoneEvent(timeSeconds: clock, tag: f.tag, floor: "F", zone: zones[z].id, kind: .enter)) }
                    }
                }
                states[f.tag]?[z] = s
            }
        }
        for tag in states.keys.sorted() {
            for z in zones.indices where states[tag]?[z].inside == true {
                if var s = states[tag]?[z] { close(tag, z, &s, upTo: clock, final: true) }
            }
        }
        let instant = instantExits(out)
        return out.indices.sorted { i, j in
            ZoneJudge.releasePrecedes(out[i], isInstantExit: instant[i], out[j], isInstantExit: instant[j])
        }.map { out[$0] }
    }

    /// For each event: true when it is an exit with an enter of the same tag and zone at the same time.
    static func instantExits(_ events: [ZoneEvent]) -> [Bool] {
        events.map { e in
            e.kind == .exit && events.contains {
                $0.kind == .enter && $0.tag == e.tag && $0.zone == e.zone && $0.timeSeconds == e.timeSeconds
            }
        }
    }

    /// Brute-force planar point–polygon distance: 0 inside (crossing rule or on an edge), else the
    /// nearest edge point.
    static func distance(_ p: Point2, _ v: [Point2]) -> Double {
        var inside = false, best = Double.infinity
        for i in v.indices {
            let a = v[i], b = v[(i + 1) % v.count]
            if (a.y > p.y) != (b.y > p.y), p.x < a.x + (p.y - a.y) * (b.x - a.x) / (b.y - a.y) { inside.toggle() }
            let dx = b.x - a.x, dy = b.y - a.y
            let t = min(1, max(0, ((p.x - a.x) * dx + (p.y - a.y) * dy) / (dx * dx + dy * dy)))
            let ex = p.x - a.x - t * dx, ey = p.y - a.y - t * dy
            best = min(best, (ex * ex + ey * ey).squareRoot())
        }
        return inside ? 0 : best
    }
}
