/// Robust location and scale of a sample: the median, the upper median, the median absolute
/// deviation (MAD) and the Gaussian-consistent scale 1.4826·MAD. Units are those of the values.
///
/// Two median conventions, kept apart because callers' outputs depend on them:
/// - `median`: for an even count n the mean ½(x₍n/2₎ + x₍n/2+1₎) of the two middle order statistics
///   (1-based); for odd n the middle one.
/// - `upperMedian`: x₍⌊n/2⌋+1₎ (1-based), the upper of the two middle values for even n — one index, no
///   arithmetic.
///
/// NaN policy: `median` and the MAD return NaN when any value is NaN (checked, O(n), no allocation);
/// the `sorted:` functions take ascending input without NaN (a NaN makes the order undefined).
/// ±0 compare equal: a median that is zero may come out as either. ½(lower + upper) is computed in
/// that order (the bits callers have always had), so two middle values beyond half the largest
/// finite Double overflow to ±∞.
package enum RobustStatistics {
    /// 1/Φ⁻¹(3/4) ≈ 1.4826, rounded as Locus has always used it: σ̂ = 1.4826·MAD estimates σ for
    /// Gaussian data (the MAD of N(μ, σ²) is 0.6745·σ).
    package static let madToSigma = 1.4826

    /// The median of `values` (mean of the two middle values for an even count), NaN when any value
    /// is NaN. Copies the values once, then `median(reordering:)`. O(n) expected.
    /// - Precondition: `values` is not empty.
    package static func median(_ values: [Double]) -> Double {
        precondition(!values.isEmpty, "RobustStatistics.median: no values")
        var copy = values
        return copy.withUnsafeMutableBufferPointer { median(reordering: $0) }
    }

    /// The median of `values[range]` as `median(reordering:)` gives it: reorders those elements in
    /// place (the others are left alone) and allocates nothing.
    /// - Precondition: `range` is not empty and lies within `values`.
    package static func median(reordering values: inout [Double], in range: Range<Int>) -> Double {
        precondition(range.lowerBound >= 0 && range.upperBound <= values.count, "RobustStatistics.median: range out of bounds")
        return values.withUnsafeMutableBufferPointer { median(reordering: UnsafeMutableBufferPointer(rebasing: $0[range])) }
    }

    /// The median of a buffer (mean of the two middle values for an even count, ½(lower + upper)),
    /// NaN when any value is NaN; reorders the buffer and allocates nothing. Quickselect with a
    /// median-of-three pivot: O(n) expected.
    /// - Precondition: `values` is not empty.
    static func median(reordering values: UnsafeMutableBufferPointer<Double>) -> Double {
        let n = values.count
        precondition(n > 0, "RobustStatistics.median: no values")
        for v in values where v.isNaN { return .nan }
        let k = (n - 1) / 2
        select(values, k)
        let lower = values[k]
        guard n % 2 == 0 else { return lower }
        var upper = values[k + 1]
        for i in (k + 2)..<max(k + 2, n) where values[i] < upper { upper = values[i] }
        return 0.5 * (lower + upper)
    }

    /// x₍⌊n/2⌋₎ (0-based) of ascending `sorted`: the middle value for odd n, the upper of the two
    /// middle values for even n.
    /// - Precondition: `sorted` is not empty (and ascending, without NaN).
    package static func upperMedian(sorted: [Double]) -> Double {
        precondition(!sorted.isEmpty, "RobustStatistics.upperMedian: no values")
        return sorted[sorted.count / 2]
    }

    /// MAD = median|xₖ − median(x)|, both medians by `median` (mean of the middle two); NaN when any
    /// value is NaN. O(n) expected, two arrays.
    /// - Precondition: `values` is not empty.
    static func medianAbsoluteDeviation(_ values: [Double]) -> Double {
        let m = median(values)
        return median(values.map { abs($0 - m) })
    }

    /// upperMedian|xₖ − upperMedian(x)| of ascending `sorted`: the MAD by the upper-median convention.
    /// O(n log n) (the deviations are sorted).
    /// - Precondition: `sorted` is not empty (and ascending, without NaN).
    package static func upperMedianAbsoluteDeviation(sorted: [Double]) -> Double {
        let m = upperMedian(sorted: sorted)
        return upperMedian(sorted: sorted.map { abs($0 - m) }.sorted())
    }

    /// Robust scale σ̂ = 1.4826·MAD (`madToSigma` · `medianAbsoluteDeviation`): σ for Gaussian data,
    /// unmoved by a minority of outliers; NaN when any value is NaN.
    /// - Precondition: `values` is not empty.
    package static func robustScale(_ values: [Double]) -> Double {
        madToSigma * medianAbsoluteDeviation(values)
    }

    /// Reorders `values` so that values[k] is the k-th smallest (0-based), with nothing larger before
    /// it and nothing smaller after it (Hoare partition, median-of-three pivot). No NaN.
    private static func select(_ values: UnsafeMutableBufferPointer<Double>, _ k: Int) {
        var lo = 0, hi = values.count - 1
        while hi > lo {
            let mid = lo + (hi - lo) / 2
            // Median of three into values[mid].
            if values[mid] < values[lo] { values.swapAt(mid, lo) }
            if values[hi] < values[lo] { values.swapAt(hi, lo) }
            if values[hi] < values[mid] { values.swapAt(hi, mid) }
            let pivot = values[mid]
            var i = lo, j = hi
            while i <= j {
                while values[i] < pivot { i += 1 }
                while values[j] > pivot { j -= 1 }
                if i <= j { values.swapAt(i, j); i += 1; j -= 1 }
            }
            if k <= j { hi = j } else if k >= i { lo = i } else { return }
        }
    }
}
