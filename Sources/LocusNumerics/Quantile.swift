/// Sample quantiles of ascending values, by the two rules Locus reports with. Units are those of
/// the values; q is a fraction in [0, 1] (outside it the rank is clamped to the ends).
///
/// - `nearestRank` (Hyndman–Fan type 1, the inverse of the empirical CDF): x₍k₎ with
///   k = ⌈q·N⌉ (1-based), clamped to 1…N — always one of the values; the accuracy and zone-delay
///   percentiles of `locus replay`.
/// - `linear` (type 7, NumPy's default): with h = q·(N − 1), x₍⌊h⌋₎ + (h − ⌊h⌋)·(x₍⌊h⌋+1₎ − x₍⌊h⌋₎)
///   (0-based) — interpolates between neighbours; the HDOP percentiles of `locus geometry`.
///
/// Both take `sorted` ascending without NaN (a NaN makes the order, and so the answer, undefined),
/// return nil when it is empty, and allocate nothing.
package enum Quantile {
    /// The nearest-rank q-quantile x₍⌈q·N⌉₎ (1-based, clamped to 1…N) of ascending `sorted`; nil when empty.
    package static func nearestRank(sorted: [Double], _ q: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let k = Int((q * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(k, 0), sorted.count - 1)]
    }

    /// The linearly interpolated q-quantile of ascending `sorted` (type 7, h = q·(N − 1)); nil when empty.
    package static func linear(sorted: [Double], _ q: Double) -> Double? {
        guard let first = sorted.first else { return nil }
        if sorted.count == 1 { return first }
        let h = q * Double(sorted.count - 1)
        let lower = Int(h.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        return sorted[lower] + (h - Double(lower)) * (sorted[upper] - sorted[lower])
    }
}
