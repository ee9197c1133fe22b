@testable import Locus
@testable import LocusNumerics
import Testing

/// `DifferenceEpochs.latestOfEachPair`: what an epoch's least-squares fix solves.
@Suite("Difference epochs: the newest difference of each locator pair")
struct DifferenceEpochsTests {
    static func pair(_ a: Int, _ b: Int, _ z: Double, _ t: Double) -> DifferencePair {
        DifferencePair(reference: a, locator: b, differenceMeters: z, timeSeconds: t)
    }

    @Test("a later difference of the same two locators (either way round) supersedes an earlier one; blinks keep their order")
    func latest() {
        let pairs = [Self.pair(0, 1, 1.0, 0.00), Self.pair(0, 2, 2.0, 0.00), Self.pair(0, 3, 3.0, 0.00),
                     Self.pair(0, 1, 1.1, 0.05), Self.pair(0, 2, 2.1, 0.05),
                     Self.pair(2, 0, -2.2, 0.10), Self.pair(2, 4, 0.5, 0.10)]
        var latest: [DifferencePair] = [Self.pair(9, 8, 0, 0)]
        DifferenceEpochs.latestOfEachPair(pairs, into: &latest)
        #expect(latest == [Self.pair(0, 3, 3.0, 0.00), Self.pair(0, 1, 1.1, 0.05), Self.pair(2, 0, -2.2, 0.10), Self.pair(2, 4, 0.5, 0.10)])
        // One blink: every pair kept.
        DifferenceEpochs.latestOfEachPair(Array(pairs.prefix(3)), into: &latest)
        #expect(latest == Array(pairs.prefix(3)))
        DifferenceEpochs.latestOfEachPair([], into: &latest)
        #expect(latest.isEmpty)
    }
}
