/// Epochs of a round robin (issue #42): hardware that ranges to one locator at a time, in turn
/// (DW1000/DWM1001 tags polling their anchors), gives rounds of one range, from which no position and
/// so no bias can be solved. Such a tag's epochs are its polling cycles instead, with every range
/// carried to one time.
extension SelfCalibrationData {
    /// Whether a tag's rounds (the sizes of its epochs split by `appendTag`'s rule) are a round robin:
    /// more than half of them hold a single range, and the tag hears at least 3 locators.
    static func isRoundRobin(roundSizes: [Int], locatorCount: Int) -> Bool {
        locatorCount >= 3 && 2 * roundSizes.filter { $0 == 1 }.count > roundSizes.count
    }

    /// One tag's ranges as polling cycles: an epoch at each range tᵣ of the locator the tag hears most
    /// (the reference; the lowest slot of those heard equally often), holding that range and, for
    /// every other locator with a range at or before tᵣ and one at or after it, at most
    /// `cycleSpanSeconds` apart, the range interpolated linearly to tᵣ:
    ///
    ///   r(tᵣ) = r₀ + (r₁ − r₀)·(tᵣ − t₀)/(t₁ − t₀)
    ///
    /// A range changes along a walk by the speed along the line of sight (up to 15 cm in a 0.5 s cycle
    /// at 0.3 m/s, as large as the biases sought), but it curves only by v⊥²/ρ: linear interpolation
    /// over a cycle Δt misses by at most v⊥²Δt²/(8ρ), 3 mm at 0.3 m/s, 0.5 s and 1 m. Every range
    /// time is tᵣ. Interpolated ranges average two noisy ones (variance (w² + (1 − w)²)σ², between ½σ²
    /// and σ²), so the noise a locator shows in cycles is somewhat below its own.
    /// - Parameters:
    ///   - ranges: (slot, range, time) in non-decreasing time.
    ///   - cycleSpanSeconds: the longest gap between the two ranges an interpolation uses.
    /// - Returns: per epoch, the (slot, range) pairs (reference first) and tᵣ; epochs of one range are
    ///   left out.
    static func cycles(of ranges: [(slot: Int, rangeMeters: Double, timeSeconds: Double)],
                       cycleSpanSeconds: Double) -> [(ranges: [(slot: Int, rangeMeters: Double)], timeSeconds: Double)] {
        var series: [Int: [(rangeMeters: Double, timeSeconds: Double)]] = [:]
        for r in ranges { series[r.slot, default: []].append((r.rangeMeters, r.timeSeconds)) }
        guard let reference = series.max(by: { a, b in
            a.value.count < b.value.count || (a.value.count == b.value.count && a.key > b.key)
        })?.key else { return [] }
        let others = series.filter { $0.key != reference }.sorted { $0.key < $1.key }
        var next = [Int](repeating: 0, count: others.count)  // per other locator: its first range after the last tᵣ
        var out: [(ranges: [(slot: Int, rangeMeters: Double)], timeSeconds: Double)] = []
        for (rangeMeters, t) in series[reference, default: []] {
            var epoch: [(slot: Int, rangeMeters: Double)] = [(reference, rangeMeters)]
            for (k, (slot, s)) in others.enumerated() {
                while next[k] < s.count && s[next[k]].timeSeconds < t { next[k] += 1 }
                // s[next[k] − 1] is the last range before t, s[next[k]] the first at or after it.
                guard next[k] < s.count else { continue }
                let after = s[next[k]]
                if after.timeSeconds == t {
                    epoch.append((slot, after.rangeMeters))
                    continue
                }
                guard next[k] > 0 else { continue }
                let before = s[next[k] - 1]
                let span = after.timeSeconds - before.timeSeconds
                guard span <= cycleSpanSeconds else { continue }
                let w = (t - before.timeSeconds) / span
                epoch.append((slot, before.rangeMeters + (after.rangeMeters - before.rangeMeters) * w))
            }
            if epoch.count > 1 { out.append((epoch, t)) }
        }
        return out
    }
}
