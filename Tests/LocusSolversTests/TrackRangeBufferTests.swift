import LocusCore
@testable import LocusSolvers
import Testing

/// The latest range per locator, kept for (re-)initialisation: 8 entries inline, up to 16 in all.
@Suite("TrackRangeBuffer")
struct TrackRangeBufferTests {
    /// A reference with the documented policy: the latest range per locator, at most 16 locators,
    /// the oldest replaced when full; entries in the order their slots were first filled.
    struct Reference {
        var entries: [(address: UInt16, range: Double, time: Double)] = []
        mutating func insert(_ a: UInt16, _ r: Double, _ t: Double) {
            if let i = entries.firstIndex(where: { $0.address == a }) { entries[i] = (a, r, t); return }
            if entries.count < 16 { entries.append((a, r, t)); return }
            var oldest = 0
            for i in entries.indices where entries[i].time < entries[oldest].time { oldest = i }
            entries[oldest] = (a, r, t)
        }
    }

    @Test("rounds over 4, 8, 13, 16, 20 and 32 locators, in order and shuffled, keep what the reference keeps")
    func matchesReference() {
        var rng = SeededGenerator(seed: 42)
        for locators in [4, 8, 13, 16, 20, 32] {
            var buffer = TrackRangeBuffer()
            var reference = Reference()
            var t = 0.0
            for round in 0..<40 {
                var order = Array(0..<locators)
                if round % 3 == 2 { order.shuffle(using: &rng) }
                for k in order {
                    t += 0.004
                    let r = Double.random(in: 1...30, using: &rng)
                    let a = UInt16(40_000 + k)
                    buffer.insert(address: LocatorAddress(a), anchor: Point3(x: Double(k), y: 2, z: 3), rangeMeters: r, timeSeconds: t)
                    reference.insert(a, r, t)
                }
            }
            #expect(buffer.count == reference.entries.count)
            for (i, e) in reference.entries.enumerated() {
                #expect(buffer.entryForTesting(i).address.rawValue == e.address)
                #expect(buffer.entryForTesting(i).rangeMeters == e.range)
                #expect(buffer.entryForTesting(i).timeSeconds == e.time)
            }
            #expect(buffer.count == min(locators, 16))
        }
    }
}
