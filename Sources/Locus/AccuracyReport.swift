import LocusCore

/// Horizontal position error against truth: RMSE, median, 95th percentile and maximum, metres.
///
/// Each fix is compared with the truth of its tag interpolated at the fix time; fixes outside the
/// truth's time span are not compared (`uncompared`). Errors are horizontal, e = ‖(x, y) − (x̂, ŷ)‖,
/// because planar solving fixes z; `rmse3DMeters` also includes z. Percentiles are the nearest-rank
/// values of the sorted errors.
package struct AccuracyReport: Sendable, Equatable {
    /// Fixes compared with truth.
    package var compared: Int
    /// Fixes without truth at their time (outside the truth span or tag).
    package var uncompared: Int
    /// Horizontal RMSE √(Σeᵢ²/n), metres.
    package var rmseMeters: Double
    /// Median horizontal error, metres.
    package var p50Meters: Double
    /// 95th-percentile horizontal error, metres.
    package var p95Meters: Double
    /// Largest horizontal error, metres.
    package var maxMeters: Double
    /// 3-D RMSE, metres.
    package var rmse3DMeters: Double

    /// Compares `fixes` with `truth(tag, t)`.
    package init(fixes: [PositionFix], truth: (TagID, Double) -> Point3?) {
        var errors: [Double] = []
        errors.reserveCapacity(fixes.count)
        var sum2 = 0.0, sum3 = 0.0
        var missing = 0
        for fix in fixes {
            guard let p = truth(fix.tag, fix.timeSeconds) else { missing += 1; continue }
            let dx = fix.position.x - p.x, dy = fix.position.y - p.y, dz = fix.position.z - p.z
            let e2 = dx * dx + dy * dy
            errors.append(e2.squareRoot())
            sum2 += e2
            sum3 += e2 + dz * dz
        }
        errors.sort()
        compared = errors.count
        uncompared = missing
        func rank(_ q: Double) -> Double {
            guard !errors.isEmpty else { return 0 }
            let k = Int((q * Double(errors.count)).rounded(.up)) - 1
            return errors[min(max(k, 0), errors.count - 1)]
        }
        rmseMeters = compared > 0 ? (sum2 / Double(compared)).squareRoot() : 0
        rmse3DMeters = compared > 0 ? (sum3 / Double(compared)).squareRoot() : 0
        p50Meters = rank(0.5)
        p95Meters = rank(0.95)
        maxMeters = errors.last ?? 0
    }
}
