import LocusCore
import LocusNumerics

/// Horizontal position error against truth: RMSE, median, 95th percentile and maximum, metres.
///
/// Each fix is compared with the truth of its tag interpolated at the fix time; fixes outside the
/// truth's time span are not compared (`uncompared`). Errors are horizontal, e = ‖(x, y) − (x̂, ŷ)‖,
/// because planar solving fixes z; `rmse3DMeters` also includes z. Percentiles are the nearest-rank
/// values of the sorted errors (`Quantile.nearestRank`), 0 when nothing was compared. Other modules
/// read the figures through `measured`, nil when nothing was compared: figures of nothing are not
/// measured (the summaries print null or n/a), never 0.
struct AccuracyReport: Sendable, Equatable {
    /// Fixes compared with truth.
    var compared: Int
    /// Fixes without truth at their time (outside the truth span or tag).
    var uncompared: Int
    /// Horizontal RMSE √(Σeᵢ²/n), metres.
    var rmseMeters: Double
    /// Median horizontal error, metres.
    var p50Meters: Double
    /// 95th-percentile horizontal error, metres.
    var p95Meters: Double
    /// Largest horizontal error, metres.
    var maxMeters: Double
    /// 3-D RMSE, metres.
    var rmse3DMeters: Double

    /// The horizontal figures (RMSE, median, 95th percentile, maximum; metres), or nil when no fix
    /// was compared.
    var measured: (rmseMeters: Double, p50Meters: Double, p95Meters: Double, maxMeters: Double)? {
        compared > 0 ? (rmseMeters, p50Meters, p95Meters, maxMeters) : nil
    }

    /// Compares `fixes` with `truth(tag, t)`.
    init(fixes: [PositionFix], truth: (TagID, Double) -> Point3?) {
        var accumulator = Accumulator()
        for fix in fixes { accumulator.add(fix, truth: truth(fix.tag, fix.timeSeconds)) }
        self = accumulator.report
    }

    /// The figures gathered fix by fix (a streamed replay): the same arithmetic in the same order as
    /// `init(fixes:truth:)`, so the same fixes give the same bits. Keeps one error per compared fix.
    struct Accumulator: Sendable {
        private var errors: [Double] = []
        private var sum2 = 0.0, sum3 = 0.0
        private var missing = 0

        /// Nothing compared yet.
        init() {}

        /// Compares one fix with its truth (nil: none at its time).
        mutating func add(_ fix: PositionFix, truth p: Point3?) {
            guard let p else { missing += 1; return }
            let dx = fix.position.x - p.x, dy = fix.position.y - p.y, dz = fix.position.z - p.z
            let e2 = dx * dx + dy * dy
            errors.append(e2.squareRoot())
            sum2 += e2
            sum3 += e2 + dz * dz
        }

        /// The figures so far.
        var report: AccuracyReport {
            AccuracyReport(errors: errors.sorted(), sum2: sum2, sum3: sum3, missing: missing)
        }
    }

    private init(errors: [Double], sum2: Double, sum3: Double, missing: Int) {
        compared = errors.count
        uncompared = missing
        rmseMeters = compared > 0 ? (sum2 / Double(compared)).squareRoot() : 0
        rmse3DMeters = compared > 0 ? (sum3 / Double(compared)).squareRoot() : 0
        p50Meters = Quantile.nearestRank(sorted: errors, 0.5) ?? 0
        p95Meters = Quantile.nearestRank(sorted: errors, 0.95) ?? 0
        maxMeters = errors.last ?? 0
    }
}
