@testable import Locus
import LocusCore
import Testing

@Suite("Epoch assembly")
struct EpochAssemblerTests {
    /// Feeds (t, slot) pairs and returns the epochs as (time, sorted slots).
    func epochs(_ rows: [(Double, Int)], rate: Double = 4, locators: Int = 8) -> [(Double, [Int])] {
        var a = EpochAssembler(locatorCount: locators, rateHertz: rate)
        var out: [(Double, [Int])] = []
        for (t, slot) in rows {
            if a.closes(at: t) { out.append((a.epochTimeSeconds, a.presentSlots.sorted())); a.reset() }
            a.add(slot: slot, rangeMeters: Double(slot), timeSeconds: t)
        }
        if a.isOpen { out.append((a.epochTimeSeconds, a.presentSlots.sorted())) }
        return out
    }

    @Test("bursts separated by pauses are epochs of their own")
    func bursts() {
        let rows: [(Double, Int)] = [(0.000, 0), (0.004, 1), (0.008, 2), (0.012, 3),
                                     (0.250, 0), (0.254, 1), (0.258, 2),
                                     (1.000, 3), (1.004, 0), (1.008, 1)]
        let e = epochs(rows)
        #expect(e.map(\.0) == [0.012, 0.258, 1.008])
        #expect(e.map(\.1) == [[0, 1, 2, 3], [0, 1, 2], [0, 1, 3]])
    }

    @Test("a continuous 100 Hz stream is cut at the output rate with each locator's latest range")
    func continuous() {
        var rows: [(Double, Int)] = []
        for k in 0..<100 { rows.append((Double(k) * 0.01, k % 8)) }  // one locator every 10 ms, 1 s
        let e = epochs(rows)
        #expect(e.count == 4)
        #expect(e.allSatisfy { $0.1 == Array(0..<8) })
        let times = e.map(\.0)
        #expect(zip(times.dropFirst(), times).allSatisfy { abs($0 - $1 - 0.25) < 1e-9 })
    }

    @Test("the latest range of a locator within the epoch wins")
    func latestWins() {
        var a = EpochAssembler(locatorCount: 2, rateHertz: 4)
        a.add(slot: 0, rangeMeters: 1, timeSeconds: 0)
        a.add(slot: 0, rangeMeters: 2, timeSeconds: 0.01)
        #expect(a.rangeMeters[0] == 2)
        #expect(a.presentSlots == [0])
    }

    @Test("a timer can close an epoch that no later range can join")
    func due() {
        var a = EpochAssembler(locatorCount: 2, rateHertz: 4)
        a.add(slot: 0, rangeMeters: 1, timeSeconds: 10)
        #expect(!a.isDue(at: 10.1))
        #expect(a.isDue(at: 10.13))
    }
}

@Suite("Epoch assembly at exact boundaries")
struct EpochBoundaryTests {
    @Test("a clock standing exactly on an epoch's due time closes it (no endless re-queue)")
    func exactDue() throws {
        // Rows 5 ms apart and a pause of exactly 0.125 s (4 Hz): the second tag's row lands on the
        // first tag's lastTime + pause. This used to spin in PositioningEngine.advance forever.
        var a = EpochAssembler(locatorCount: 2, rateHertz: 4)
        a.add(slot: 0, rangeMeters: 1, timeSeconds: 1.0)
        #expect(a.dueSeconds == 1.125)
        #expect(a.isDue(at: 1.125))
        #expect(a.closes(at: 1.125))
        #expect(!a.isDue(at: 1.1249999))
    }

    @Test("the engine finishes a trace whose rows hit due times exactly")
    func engineExactDue() throws {
        let locators = [Point3(x: 0, y: 0, z: 2), Point3(x: 10, y: 0, z: 2), Point3(x: 10, y: 10, z: 2), Point3(x: 0, y: 10, z: 2)]
        let floor = Floor(id: "F", tagHeightMeters: 1, sessionID: 1,
                          locators: locators.enumerated().map { Locator(address: LocatorAddress(UInt16($0.offset)), position: $0.element) })
        var engine = try PositioningEngine(site: Site(building: .init(id: "b"), floors: [floor]))
        let p = Point3(x: 4, y: 5, z: 1)
        // Tag A ranges at 0.000–0.015, tag B's first row at exactly 0.015 + 0.125 = 0.140.
        for k in 0..<20 {
            for (tag, offset) in [("A", 0.0), ("B", 0.140)] {
                for (i, l) in locators.enumerated() {
                    engine.ingest(RangeMeasurement(timeSeconds: Double(k) * 0.25 + offset + Double(i) * 0.005, tag: TagID(tag),
                                                   locator: LocatorAddress(UInt16(i)), rangeMeters: l.distance(to: p)))
                }
            }
        }
        engine.finish()
        #expect(engine.drainFixes().count >= 38)
    }
}

@Suite("Rounds close when complete (issue 16)")
struct RoundCompletionTests {
    /// Feeds (t, slot) rows as the engine does: an epoch closes when a range would close it (pause
    /// or period) or, after adding, when it is complete; a straggler of a round closed complete is
    /// skipped (late). Returns (time, slot count, closed early).
    func epochs(_ rows: [(Double, Int)], rate: Double = 4, locators: Int = 12) -> [(Double, Int, Bool)] {
        epochsAndLate(rows, rate: rate, locators: locators).epochs
    }

    /// `epochs`, and the times of the rows skipped as stragglers.
    func epochsAndLate(_ rows: [(Double, Int)], rate: Double = 4, locators: Int = 12) -> (epochs: [(Double, Int, Bool)], late: [Double]) {
        var a = EpochAssembler(locatorCount: locators, rateHertz: rate)
        var out: [(Double, Int, Bool)] = []
        var late: [Double] = []
        for (t, slot) in rows {
            if a.closes(at: t) { out.append((a.epochTimeSeconds, a.presentSlots.count, false)); a.reset(atSeconds: t) }
            guard a.add(slot: slot, rangeMeters: Double(slot), timeSeconds: t) else { late.append(t); continue }
            if a.isComplete { out.append((a.epochTimeSeconds, a.presentSlots.count, true)); a.reset(atSeconds: t) }
        }
        if a.isOpen { out.append((a.epochTimeSeconds, a.presentSlots.count, false)) }
        return (out, late)
    }

    /// Rounds every 0.25 s, the given slots 4 ms apart.
    func rounds(_ slots: [[Int]]) -> [(Double, Int)] {
        slots.enumerated().flatMap { k, s in s.enumerated().map { (Double(k) * 0.25 + Double($0.offset) * 0.004, $0.element) } }
    }

    @Test("after two rounds, a round of the usual locators closes at its last range, with the same time and ranges")
    func completeRoundsCloseEarly() {
        let full = Array(0..<8)
        let e = epochs(rounds([full, full, full, full]))
        #expect(e.map(\.1) == [8, 8, 8, 8])
        #expect(e.map(\.0) == [0.028, 0.278, 0.528, 0.778])
        #expect(e.map(\.2) == [false, false, true, true])  // the first two teach the model
    }

    @Test("an incomplete round waits for the pause, and is not split")
    func incompleteRoundWaits() {
        let full = Array(0..<8)
        let e = epochs(rounds([full, full, [0, 1, 2, 4, 5, 6, 7], full]))
        #expect(e.map(\.1) == [8, 8, 7, 8])
        #expect(e.map(\.2) == [false, false, false, true])
    }

    @Test("a round larger than the recent ones closes at its usual size once; its straggler is late, and the next ones are whole")
    func largerRoundStragglesOnce() {
        let eight = Array(0..<8), nine = Array(0..<9)
        let (e, late) = epochsAndLate(rounds([eight, eight, nine, nine, nine]))
        // Round 3 closes complete at slot 7; slot 8 comes within the pause: a straggler, skipped (it
        // used to open an epoch of its own: a second fix, of one locator). From then on 9 locators are
        // expected, slot 8 last: rounds 4 and 5 close complete, whole.
        #expect(e.map(\.1) == [8, 8, 8, 9, 9])
        #expect(e.map(\.2) == [false, false, true, true, true])
        #expect(late == [0.5 + 8 * 0.004])
    }

    @Test("stragglers of one round are all late, a straggler's duplicate teaches nothing more, and the next rounds are whole")
    func severalStragglers() {
        let eight = Array(0..<8), ten = Array(0..<10)
        var rows = rounds([eight, eight, ten, ten, ten])
        rows.insert((0.5 + 8 * 0.004, 8), at: 8 + 8 + 9)  // slot 8 of round 3 twice
        let (e, late) = epochsAndLate(rows)
        #expect(e.map(\.1) == [8, 8, 8, 10, 10])
        #expect(e.map(\.2) == [false, false, true, true, true])
        #expect(late == [0.532, 0.532, 0.536])
    }

    @Test("after a complete round, a new locator past the pause opens a round; one the round held, within the pause, too")
    func notStragglers() {
        let eight = Array(0..<8)
        // Round 3's complete close, then slot 9 alone 0.2 s later (past the 0.125 s pause): an epoch.
        var rows = rounds([eight, eight, eight])
        rows.append((0.5 + 0.028 + 0.2, 9))
        #expect(epochsAndLate(rows).late.isEmpty)
        #expect(epochs(rows).map(\.1) == [8, 8, 8, 1])
        // Slot 0 again 10 ms after round 3's close: a new round, not late (as before the rule).
        rows = rounds([eight, eight, eight])
        rows.append((0.5 + 0.028 + 0.01, 0))
        #expect(epochsAndLate(rows).late.isEmpty)
        #expect(epochs(rows).map(\.1) == [8, 8, 8, 1])
    }

    @Test("an extra locator inside the round does not split it: completion waits for the round's last slot")
    func extraInsideDoesNotSplit() {
        let e = epochs(rounds([[0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 9, 2, 3], [0, 1, 2, 3]]))
        #expect(e.map(\.1) == [4, 4, 5, 4])
    }

    @Test("a continuous stream (a locator repeating within the epoch) never closes early")
    func continuousNeverEarly() {
        var rows: [(Double, Int)] = []
        for k in 0..<200 { rows.append((Double(k) * 0.01, k % 8)) }  // one locator every 10 ms, 2 s
        let e = epochs(rows)
        #expect(e.allSatisfy { !$0.2 })
        #expect(e.count == 8)
    }

    @Test("bursts of every locator at one instant, at irregular gaps, are rounds when the gap is a pause; repeats teach nothing")
    func repeatedBurstsForget() {
        var rows: [(Double, Int)] = []
        // Bursts 0.3 s apart (rounds), then 0.05 s apart (merged into epochs with repeats).
        for t in [0.0, 0.3, 0.6, 0.9] { for s in 0..<8 { rows.append((t, s)) } }
        for k in 0..<10 { for s in 0..<8 { rows.append((1.2 + Double(k) * 0.05, s)) } }
        let e = epochs(rows)
        // Rounds 3 and 4 close complete; then the 50 ms bursts: the first closes complete and the
        // second, within the pause, raises the expectation to 9 (never reached): they merge as before.
        #expect(e.prefix(4).map(\.2) == [false, false, true, true])
        #expect(e.dropFirst(5).allSatisfy { !$0.2 })
    }
}
