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

    @Test("A polling cycle carried to its newest range: 4 locators heard in turn every 0.128 s by a tag walking 0.5 m/s give, newest first, the distances at the newest range's time to within 5 mm (first order in the motion), where the ranges as measured are up to 19 cm off; ranges older than the cycle window are left out")
    func gatherCycle() {
        let anchors = [Point3(x: 0, y: 0, z: 2), Point3(x: 10, y: 0, z: 2), Point3(x: 10, y: 8, z: 2), Point3(x: 0, y: 8, z: 2)]
        let h = 1.0, v = Point2(x: 0.4, y: -0.3)
        func position(_ t: Double) -> Point2 { Point2(x: 4 + v.x * t, y: 5 + v.y * t) }
        func distance(_ p: Point2, _ a: Point3) -> Double { ((p.x - a.x) * (p.x - a.x) + (p.y - a.y) * (p.y - a.y) + (h - a.z) * (h - a.z)).squareRoot() }
        var buffer = TrackRangeBuffer()
        // An old range of a fifth locator, 2 s before the cycle: outside the 1 s window.
        buffer.insert(address: LocatorAddress(9), anchor: Point3(x: 5, y: -3, z: 2), rangeMeters: 7, timeSeconds: -1.5)
        var times: [Double] = []
        for k in 0..<8 {  // two cycles; the second overwrites the first
            let t = 0.128 * Double(k)
            buffer.insert(address: LocatorAddress(UInt16(k % 4)), anchor: anchors[k % 4], rangeMeters: distance(position(t), anchors[k % 4]), timeSeconds: t)
            times.append(t)
        }
        let t = times.last!
        var locators = InlineArray<16, Point3>(repeating: Point3(x: 0, y: 0, z: 0))
        var ranges = InlineArray<16, Double>(repeating: 0)
        var locatorSpan = locators.mutableSpan, rangeSpan = ranges.mutableSpan
        let n = buffer.gatherCycle(newestSeconds: t, cycleSeconds: 1.0, position: position(t), velocity: v, tagHeightMeters: h,
                                   locators: &locatorSpan, ranges: &rangeSpan)
        #expect(n == 4)
        var worstMeasured = 0.0
        for i in 0..<n {
            let a = locators[i]
            #expect(a == anchors[(7 - i) % 4], "newest first")
            let truth = distance(position(t), a)
            #expect(abs(ranges[i] - truth) < 0.005, "locator \(i): \(ranges[i]) m, true \(truth) m")
            worstMeasured = max(worstMeasured, abs(distance(position(times[7 - i]), a) - truth))
        }
        #expect(worstMeasured > 0.1, "the motion over the cycle matters: \(worstMeasured) m")
        // Room for two only: the two newest.
        var twoLocators = InlineArray<2, Point3>(repeating: Point3(x: 0, y: 0, z: 0))
        var twoRangeValues = InlineArray<2, Double>(repeating: 0)
        var two = twoLocators.mutableSpan, twoRanges = twoRangeValues.mutableSpan
        #expect(buffer.gatherCycle(newestSeconds: t, cycleSeconds: 1.0, position: position(t), velocity: v, tagHeightMeters: h,
                                   locators: &two, ranges: &twoRanges) == 2)
    }
}

