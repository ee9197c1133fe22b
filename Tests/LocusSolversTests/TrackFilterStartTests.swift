@testable import LocusCore
@testable import LocusSolvers
import Testing

/// Issue #42: how a tightly coupled track starts — from one round-robin cycle when the tag ranges to one
/// locator at a time, and not from four ranges that the rest of their own round contradicts.
@Suite("TrackFilter: the start of a track")
struct TrackFilterStartTests {
    /// A 2.4 m square of 4 locators at z 0 (the libRSF "Labyrinth" layout), tag height 0.
    static let square: [(LocatorAddress, Point3)] = [
        (LocatorAddress(105), Point3(x: -0.02, y: -0.01, z: 0)), (LocatorAddress(107), Point3(x: -0.02, y: 2.365, z: 0)),
        (LocatorAddress(108), Point3(x: 2.385, y: 2.36, z: 0)), (LocatorAddress(109), Point3(x: 2.385, y: -0.005, z: 0)),
    ]

    static func distance(_ p: Point3, _ a: Point3) -> Double {
        ((p.x - a.x) * (p.x - a.x) + (p.y - a.y) * (p.y - a.y) + (p.z - a.z) * (p.z - a.z)).squareRoot()
    }

    /// Feeds one range at a time every 0.128 s, locators in turn, the tag at `position(t)`; returns the
    /// filter after `count` ranges and the ranges' times.
    static func roundRobin(count: Int, configuration: TrackFilterConfiguration = .standard,
                           position: (Double) -> Point3) -> (TrackFilter, [Double]) {
        var filter = TrackFilter(configuration: configuration, tag: "T", floor: "F", tagHeightMeters: 0)
        var times: [Double] = []
        for i in 0..<count {
            let t = 0.128 * Double(i + 1)
            let (address, anchor) = square[i % square.count]
            let r = [distance(position(t), anchor)], ts = [t], a = [anchor], d = [address]
            filter.update(rangesMeters: r.span, timesSeconds: ts.span, anchors: a.span, addresses: d.span)
            times.append(t)
        }
        return (filter, times)
    }

    @Test("A round robin of 4 locators every 0.128 s (one cycle 0.384 s, beyond the 0.3 s window) starts the track at its 4th range, at the ranges' mean time; with the cycle window off it never starts")
    func roundRobinStarts() throws {
        let still = Point3(x: 1.0, y: 1.3, z: 0)
        let (three, _) = Self.roundRobin(count: 3) { _ in still }
        #expect(!three.isTracking)
        var (four, times) = Self.roundRobin(count: 4) { _ in still }
        #expect(four.isTracking)
        #expect(four.initializationCount == 1)
        #expect(abs(four.stateSeconds - times.reduce(0, +) / 4) < 1e-12)
        let closed = four.closeEpoch(atSeconds: times[3])
        let fix = try #require(closed)
        #expect(abs(fix.position.x - 1.0) < 0.01 && abs(fix.position.y - 1.3) < 0.01, "\(fix.position)")
        // Then every single range is an update and every epoch has a fix.
        var (later, laterTimes) = Self.roundRobin(count: 40) { _ in still }
        #expect(later.initializationCount == 1)
        #expect(later.lastUpdateSeconds == laterTimes.last)
        #expect(later.closeEpoch(atSeconds: laterTimes.last!) != nil)
        // The old rule (4 locators within 0.3 s) never starts on this hardware.
        let (off, _) = Self.roundRobin(count: 40, configuration: TrackFilterConfiguration(initializationCycleSeconds: 0)) { _ in still }
        #expect(!off.isTracking)
    }

    @Test("A tag moving at 0.5 m/s through the cycle starts nearer its position at the ranges' mean time than at the last range's")
    func roundRobinMovingStart() throws {
        let walk = { (t: Double) in Point3(x: 0.6 + 0.5 * t, y: 1.2, z: 0) }
        var (filter, times) = Self.roundRobin(count: 4, position: walk)
        let state = try #require(filter.state)
        let mean = walk(times.reduce(0, +) / 4), last = walk(times[3])
        let toMean = ((state.x[0] - mean.x) * (state.x[0] - mean.x) + (state.x[1] - mean.y) * (state.x[1] - mean.y)).squareRoot()
        let toLast = ((state.x[0] - last.x) * (state.x[0] - last.x) + (state.x[1] - last.y) * (state.x[1] - last.y)).squareRoot()
        #expect(toMean < toLast, "start \(state.x[0]), \(state.x[1]): \(toMean) m from the mean-time position, \(toLast) m from the last")
        #expect(toMean < 0.05)
        // The epoch's fix at the last range is predicted there from the start.
        #expect(filter.closeEpoch(atSeconds: times[3]) != nil)
    }

    /// The hall of Fixtures/sites/hall.json (8 locators at z 2.6, one at 2.55; tag height 1.1 m) and
    /// the first round of tag T4 in `locus simulate --tags 40 --duration 300 --sigma 0.1 --nlos 0.03
    /// --dropout 0.03 --seed 2` on it (docs/benchmarks.md, issue #42 item 4): the tag at (2.0, 1.5), its
    /// first four locators three in a line (y = 0.3) and the fourth, (39.7, 12.5), NLOS by 1.2 m.
    static let hall: [(LocatorAddress, Point3)] = [
        (LocatorAddress(40407), Point3(x: 0.3, y: 0.3, z: 2.6)), (LocatorAddress(40408), Point3(x: 20.0, y: 0.3, z: 2.6)),
        (LocatorAddress(40409), Point3(x: 39.7, y: 0.3, z: 2.6)), (LocatorAddress(40410), Point3(x: 39.7, y: 12.5, z: 2.6)),
        (LocatorAddress(40411), Point3(x: 39.7, y: 24.7, z: 2.6)), (LocatorAddress(40412), Point3(x: 20.0, y: 24.7, z: 2.6)),
        (LocatorAddress(40413), Point3(x: 0.3, y: 24.7, z: 2.6)), (LocatorAddress(40414), Point3(x: 0.3, y: 12.5, z: 2.55)),
    ]
    static let t4Ranges = [2.6406, 18.0131, 37.7595, 40.4727, 44.1870, 29.5078, 23.4845, 11.3657]
    static let t4Times = [0.0960, 0.1000, 0.1040, 0.1080, 0.1120, 0.1160, 0.1200, 0.1240]

    @Test("A round whose first four ranges give the mirror position (three locators in a line, one NLOS) starts from the whole round: within 0.2 m of the tag, where one range at a time starts 2.8 m off")
    func refutedStartUsesTheRound() throws {
        let anchors = Self.hall.map(\.1), addresses = Self.hall.map(\.0)
        var perRange = TrackFilter(tag: "T4", floor: "1F", tagHeightMeters: 1.1)
        for k in anchors.indices {
            perRange.update(correctedRangeMeters: Self.t4Ranges[k], timeSeconds: Self.t4Times[k], address: addresses[k], anchor: anchors[k])
        }
        var byRound = TrackFilter(tag: "T4", floor: "1F", tagHeightMeters: 1.1)
        byRound.update(rangesMeters: Self.t4Ranges.span, timesSeconds: Self.t4Times.span, anchors: anchors.span, addresses: addresses.span)
        let fa = perRange.closeEpoch(atSeconds: 0.124), fb = byRound.closeEpoch(atSeconds: 0.124)
        let a = try #require(fa), b = try #require(fb)
        func error(_ f: PositionFix) -> Double { ((f.position.x - 2.0) * (f.position.x - 2.0) + (f.position.y - 1.5) * (f.position.y - 1.5)).squareRoot() }
        #expect(error(a) > 2, "one range at a time: \(a.position)")
        #expect(error(b) < 0.2, "the round: \(b.position)")
        #expect(byRound.initializationCount == 1)
        #expect(byRound.stateSeconds == 0.124)
    }

    @Test("A round that agrees with its start is taken exactly as one range at a time (the start at the 4th range, the rest EKF updates)")
    func consistentStartUnchanged() throws {
        let anchors = Self.hall.map(\.1), addresses = Self.hall.map(\.0)
        let tag = Point3(x: 12.0, y: 9.0, z: 1.1)
        let ranges = anchors.map { Self.distance(tag, $0) }
        var perRange = TrackFilter(tag: "T", floor: "1F", tagHeightMeters: 1.1)
        for k in anchors.indices {
            perRange.update(correctedRangeMeters: ranges[k], timeSeconds: Self.t4Times[k], address: addresses[k], anchor: anchors[k])
        }
        var byRound = TrackFilter(tag: "T", floor: "1F", tagHeightMeters: 1.1)
        byRound.update(rangesMeters: ranges.span, timesSeconds: Self.t4Times.span, anchors: anchors.span, addresses: addresses.span)
        #expect(byRound.stateSeconds == perRange.stateSeconds && byRound.lastMean == perRange.lastMean)
        let fa = perRange.closeEpoch(atSeconds: 0.124), fb = byRound.closeEpoch(atSeconds: 0.124)
        let a = try #require(fa), b = try #require(fb)
        #expect(a.bitPatterns == b.bitPatterns)
    }
}
