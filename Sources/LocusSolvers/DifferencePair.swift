import LocusCore

/// One range difference of an epoch (TDoA), by index into the epoch's locator positions:
/// z = d(tag, locators[locator]) − d(tag, locators[reference]), metres, locator biases removed.
///
/// **Groups.** Differences formed from one arrival at the reference (an uplink blink heard by every
/// locator, differenced against one reference) share that arrival's error: the m differences of a
/// group have Σ = σ²(I + 11ᵀ) (`DifferenceModel`). A group is a run of consecutive pairs with the
/// same reference and the same time; pairs of different runs are independent (downlink pairs, or
/// blinks at other times). The engine keeps an epoch's pairs in arrival order, so a blink's
/// differences are one run.
package struct DifferencePair: Sendable, Equatable {
    /// A: index of the reference locator in the epoch's locator list.
    var reference: Int32
    /// B: index of the other locator.
    var locator: Int32
    /// z = d(tag, B) − d(tag, A), metres (biases removed: z − (b_B − b_A)).
    var differenceMeters: Double
    /// The difference's time, seconds.
    var timeSeconds: Double

    /// A pair.
    package init(reference: Int, locator: Int, differenceMeters: Double, timeSeconds: Double) {
        self.reference = Int32(truncatingIfNeeded: reference)
        self.locator = Int32(truncatingIfNeeded: locator)
        self.differenceMeters = differenceMeters
        self.timeSeconds = timeSeconds
    }

    /// Whether `other` continues this pair's group: the same reference at the same time.
    @inline(__always)
    func sharesArrival(with other: DifferencePair) -> Bool {
        reference == other.reference && timeSeconds == other.timeSeconds
    }

    /// The pairs of an uplink blink at `timeSeconds`: every locator of `count` but `reference`,
    /// differenced against it, with differences from `differencesMeters` (by locator index; the
    /// reference's entry unused).
    static func uplink(count: Int, reference: Int, differencesMeters: [Double], timeSeconds: Double = 0) -> [DifferencePair] {
        (0..<count).filter { $0 != reference }.map {
            DifferencePair(reference: reference, locator: $0, differenceMeters: differencesMeters[$0], timeSeconds: timeSeconds)
        }
    }
}
