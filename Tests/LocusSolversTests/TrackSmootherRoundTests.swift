import Testing
@testable import LocusCore
@testable import LocusSimulation
@testable import LocusSolvers
import LocusTestSupport

/// The smoother's pass takes a tag's ranges in the rounds the engine takes them (`TrackSmoother.appendRound`,
/// `TrackFilter.journal`): a young track judges a round as a whole, so the smoother starts where the live
/// track started.
@Suite struct TrackSmootherRoundTests {
    /// The hall of `TrackFilterStartTests` as a floor.
    static let floor = Floor(id: "1F", name: "hall", widthMeters: 40, heightMeters: 25, tagHeightMeters: 1.1, sessionID: 1,
                             locators: TrackFilterStartTests.hall.map { Locator(address: $0.0, position: $0.1, biasMeters: 0) })
    static let tag = Point3(x: 2.0, y: 1.5, z: 1.1)

    /// T4's first round (its first four ranges give the mirror position), then `rounds` exact rounds at
    /// 4 Hz from the tag standing at (2.0, 1.5), 4 ms between ranges; the output times at each round's end.
    static func recording(rounds: Int) -> (ranges: [RangeMeasurement], outputs: [Double]) {
        let hall = TrackFilterStartTests.hall
        var ranges = hall.indices.map {
            RangeMeasurement(timeSeconds: TrackFilterStartTests.t4Times[$0], tag: "T4", locator: hall[$0].0,
                             rangeMeters: TrackFilterStartTests.t4Ranges[$0])
        }
        var outputs = [TrackFilterStartTests.t4Times[hall.count - 1]]
        for k in 1...rounds {
            let t0 = 0.096 + 0.25 * Double(k)
            for (j, (address, anchor)) in hall.enumerated() {
                ranges.append(RangeMeasurement(timeSeconds: t0 + 0.004 * Double(j), tag: "T4", locator: address,
                                               rangeMeters: TrackFilterStartTests.distance(tag, anchor)))
            }
            outputs.append(t0 + 0.004 * Double(hall.count - 1))
        }
        return (ranges, outputs)
    }

    static func error(_ x: Double, _ y: Double) -> Double { ((x - tag.x) * (x - tag.x) + (y - tag.y) * (y - tag.y)).squareRoot() }

    @Test("A round whose first four ranges give the mirror position: the smoother starts from the whole round, as the live filter does, and every smoothed fix is within 0.2 m (one range at a time started 2.8 m off)")
    func startsFromTheRound() throws {
        let (ranges, outputs) = Self.recording(rounds: 12)
        let nodes = TrackSmoother.nodes(ranges: ranges, floor: Self.floor, outputTimesSeconds: outputs, configuration: .standard)
        let prior = try #require(nodes.first?.prior)
        #expect(Self.error(prior.x[0], prior.x[1]) < 0.2, "start \(prior.x[0]), \(prior.x[1])")
        #expect(nodes.filter { $0.prior != nil }.count == 1, "one start")
        let fixes = try TrackSmoother.smooth(ranges: ranges, floor: Self.floor, outputTimesSeconds: outputs)
        #expect(fixes.count == outputs.count)
        for f in fixes { #expect(Self.error(f.position.x, f.position.y) < 0.2, "t \(f.timeSeconds): \(f.position)") }
        // The same pass one range at a time (the smoother before) starts at the mirror.
        var single = TrackFilter(tag: "T4", floor: "1F", tagHeightMeters: 1.1)
        for r in ranges.prefix(TrackFilterStartTests.hall.count) {
            let l = try #require(Self.floor.locator(r.locator))
            single.update(correctedRangeMeters: r.rangeMeters, timeSeconds: r.timeSeconds, address: l.address, anchor: l.position)
        }
        let closed = single.closeEpoch(atSeconds: outputs[0])
        let s = try #require(closed)
        #expect(Self.error(s.position.x, s.position.y) > 2)
    }

    @Test("A journal changes nothing in the filter: rounds taken with and without one leave the same bits", arguments: [1, 2] as [UInt64])
    func journalChangesNothing(seed: UInt64) throws {
        let rec = TrackFixture.recording(seed: seed, durationSeconds: 30)
        var plain = TrackFilter(tag: "T1", floor: rec.floor.id, tagHeightMeters: rec.floor.tagHeightMeters)
        var journaled = plain
        journaled.startJournal()
        var entries = 0
        for round in RangeRounds.split(rec.ranges) {
            let locators = round.compactMap { rec.floor.locator($0.locator) }
            let r = round.map(\.rangeMeters), t = round.map(\.timeSeconds), a = locators.map(\.position), d = locators.map(\.address)
            plain.update(rangesMeters: r.span, timesSeconds: t.span, anchors: a.span, addresses: d.span)
            journaled.startJournal()
            journaled.update(rangesMeters: r.span, timesSeconds: t.span, anchors: a.span, addresses: d.span)
            entries += journaled.journal?.count ?? 0
            let time = t[t.count - 1]
            let pc = plain.closeEpoch(atSeconds: time), jc = journaled.closeEpoch(atSeconds: time)
            let p = try #require(pc), j = try #require(jc)
            #expect(p.bitPatterns == j.bitPatterns)
        }
        #expect(Double(entries) > 0.95 * Double(rec.ranges.count), "\(entries) of \(rec.ranges.count) ranges journaled")
        #expect(plain.journal == nil)
    }
}
