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
///
/// Laid out as the C kernels' `locus_difference_pair` (two int32 indices, two doubles), so that
/// `DifferenceModel.normalEquations` hands a span of pairs to `locus_difference_linearize` as it lies.
package struct DifferencePair: Sendable, Equatable {
    /// A: index of the reference locator in the epoch's locator list.
    package var reference: Int32
    /// B: index of the other locator.
    package var locator: Int32
    /// z = d(tag, B) − d(tag, A), metres (biases removed: z − (b_B − b_A)).
    package var differenceMeters: Double
    /// The difference's time, seconds.
    package var timeSeconds: Double

    /// A pair.
    package init(reference: Int, locator: Int, differenceMeters: Double, timeSeconds: Double) {
        self.reference = Int32(truncatingIfNeeded: reference)
        self.locator = Int32(truncatingIfNeeded: locator)
        self.differenceMeters = differenceMeters
        self.timeSeconds = timeSeconds
    }

    /// Whether `other` continues this pair's group: the same reference at the same time.
    @inlinable
    package func sharesArrival(with other: DifferencePair) -> Bool {
        reference == other.reference && timeSeconds == other.timeSeconds
    }
}
