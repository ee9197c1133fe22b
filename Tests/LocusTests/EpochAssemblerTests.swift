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
