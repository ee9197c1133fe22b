@testable import LocusCore
@testable import LocusNumerics
import LocusTestSupport
@testable import LocusSimulation
@testable import LocusSolvers
import Testing

/// `TrackFilter.update(rangesMeters:timesSeconds:anchors:addresses:)` — a round's ranges in one kernel
/// call, the engine's path — against `update(correctedRangeMeters:…)` once per range (and `updateRound`
/// for the rounds that judge a young track as a whole, as the round path does, the mirror check after
/// a round that gated two or more, `mirrorIfReflectionFits`, and the unchecked-round rule,
/// `scoreUncheckedRound`): the same filter,
/// bit for bit, through everything the per-range path handles (the track starting, gated NLOS ranges,
/// the gate opening, a gap that re-initialises, unusable ranges, a time going backwards).
@Suite("TrackFilter: a round in one call is the per-range path, bit for bit")
struct TrackFilterRoundTests {
    struct Range {
        var rangeMeters: Double
        var timeSeconds: Double
        var locator: Locator
    }

    /// A simulated walk's rounds with NLOS and dropouts, then disturbed on purpose: every 23rd round
    /// all long by 3 m (a burst that opens the gate), a 3 s gap (beyond `reinitializeAfterSeconds`),
    /// now and then a negative, NaN or infinite range, and two ranges of a round in the wrong time order.
    static func rounds(seed: UInt64) -> [[Range]] {
        let recording = TrackFixture.recording(seed: seed, durationSeconds: 60, nlos: 0.15, dropout: 0.05)
        let byAddress = Dictionary(uniqueKeysWithValues: recording.floor.locators.map { ($0.address, $0) })
        var generator = SeededGenerator(seed: seed &+ 17)
        var out: [[Range]] = []
        var shift = 0.0
        for (i, round) in RangeRounds.split(recording.ranges).enumerated() {
            if i == 120 { shift = 3.0 }   // the gap: the stream resumes 3 s later
            var ranges = round.map { Range(rangeMeters: $0.rangeMeters, timeSeconds: $0.timeSeconds + shift, locator: byAddress[$0.locator]!) }
            if i % 23 == 22 { for k in ranges.indices { ranges[k].rangeMeters += 3 } }
            for k in ranges.indices {
                switch Int.random(in: 0..<60, using: &generator) {
                case 0: ranges[k].rangeMeters = -0.4
                case 1: ranges[k].rangeMeters = .nan
                case 2: ranges[k].rangeMeters = .infinity
                default: break
                }
            }
            if ranges.count > 3, Int.random(in: 0..<15, using: &generator) == 0 {
                ranges.swapAt(1, 2)   // a later range first: the next one is earlier than the track
            }
            out.append(ranges)
        }
        return out
    }

    /// The filter's observable state, as bit patterns (so that −0 and 0, or two NaNs, are told apart).
    static func snapshot(_ filter: inout TrackFilter) -> [UInt64] {
        var bits: [UInt64] = [filter.stateSeconds.bitPattern, filter.lastUpdateSeconds.bitPattern,
                              UInt64(bitPattern: Int64(filter.rejectionScore)), UInt64(filter.initializationCount)]
        if let mean = filter.meanAtLastUpdate { bits += (0..<4).map { mean[$0].bitPattern } }
        if let state = filter.state {
            bits += (0..<4).map { state.x[$0].bitPattern } + (0..<16).map { state.p[$0].bitPattern }
        }
        let mu = filter.modeProbabilities
        bits += (0..<4).map { mu[$0].bitPattern }
        return bits
    }

    @Test("the same fixes and state after every round", arguments: [UInt64(3), 11, 29])
    func sameAsPerRange(seed: UInt64) {
        let rounds = Self.rounds(seed: seed)
        let floor = TrackFixture.floor()
        var perRange = TrackFilter(tag: "T", floor: floor.id, tagHeightMeters: floor.tagHeightMeters)
        var byRound = perRange
        var generator = SeededGenerator(seed: seed)
        var fixes = 0, gated = 0
        for (i, round) in rounds.enumerated() {
            // The engine hands over a round in one piece, or in two when a range had to be taken
            // at once (a locator's second range in the epoch): both ways here.
            let split = Int.random(in: 0...round.count, using: &generator)
            for part in [round[..<split], round[split...]] where !part.isEmpty {
                // The reference: each range on its own, except for a round that the round path judges as
                // a whole (the track starting or not yet confirmed: `updateRound`, the same function).
                let ranges = part.map(\.rangeMeters), times = part.map(\.timeSeconds)
                let anchors = part.map(\.locator.position), addresses = part.map(\.locator.address)
                if perRange.judgesRound(count: ranges.count, firstSeconds: times[0]) {
                    ranges.withUnsafeBufferPointer { r in times.withUnsafeBufferPointer { t in
                        anchors.withUnsafeBufferPointer { a in addresses.withUnsafeBufferPointer { d in
                            perRange.updateRound(rangesMeters: r, timesSeconds: t, anchors: a, addresses: d)
                        } }
                    } }
                    continue
                }
                var partGated = 0
                let mark = perRange.roundMark
                for k in ranges.indices {
                    if perRange.update(correctedRangeMeters: ranges[k], timeSeconds: times[k], address: addresses[k],
                                       anchor: anchors[k]) == .gated { partGated += 1 }
                }
                gated += partGated
                // And the round's own check after its ranges (`mirrorIfReflectionFits`: seed 29's round 71
                // finds a track 2.5 m beyond the wall at y = 0 and mirrors it to the tag).
                if partGated >= 2 {
                    ranges.withUnsafeBufferPointer { r in times.withUnsafeBufferPointer { t in
                        anchors.withUnsafeBufferPointer { a in addresses.withUnsafeBufferPointer { d in
                            perRange.mirrorIfReflectionFits(rangesMeters: r, timesSeconds: t, anchors: a, addresses: d, gated: partGated)
                        } }
                    } }
                }
                // And the unchecked-round rule (`scoreUncheckedRound`: a round that refused ranges and kept two or fewer).
                perRange.scoreUncheckedRound(since: mark, gated: partGated, lastSeconds: times[times.count - 1],
                                             lastAddress: addresses[addresses.count - 1])
            }
            for part in [round[..<split], round[split...]] where !part.isEmpty {
                let ranges = part.map(\.rangeMeters), times = part.map(\.timeSeconds)
                let anchors = part.map(\.locator.position), addresses = part.map(\.locator.address)
                byRound.update(rangesMeters: ranges.span, timesSeconds: times.span, anchors: anchors.span, addresses: addresses.span)
            }
            #expect(Self.snapshot(&perRange) == Self.snapshot(&byRound), "round \(i): state")
            let time = round.map(\.timeSeconds).max()!
            let a = perRange.closeEpoch(atSeconds: time), b = byRound.closeEpoch(atSeconds: time)
            #expect(a?.bitPatterns == b?.bitPatterns, "round \(i): fix")
            if a != nil { fixes += 1 }
        }
        // The disturbances were met: the track ran, ranges were gated, and it started more than once.
        #expect(fixes > rounds.count / 2)
        #expect(gated > 20)
        #expect(perRange.initializationCount >= 3)
    }
}
