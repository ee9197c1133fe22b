import LocusCore

/// The tests' rounds of a single tag's simulated ranges.
public enum RangeRounds {
    /// `ranges` (one tag, in time order) grouped into rounds: a gap of 50 ms or more starts the next.
    public static func split(_ ranges: [RangeMeasurement]) -> [[RangeMeasurement]] {
        var out: [[RangeMeasurement]] = []
        for r in ranges {
            if let last = out.last?.last, r.timeSeconds - last.timeSeconds < 0.05 {
                out[out.count - 1].append(r)
            } else {
                out.append([r])
            }
        }
        return out
    }
}
