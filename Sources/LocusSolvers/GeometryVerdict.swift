import LocusCore

/// The verdict on a geometry report (the heatmap title's colour, LocusReports): the worse of how much
/// of the floor is covered and how bad its worst cell is, so one unusable corner is not hidden by a good
/// average.
///
/// With the report's limits (coverage HDOP c = 2, poor HDOP p = 5):
/// - good (green): coverage ≥ 95 % and max HDOP ≤ c;
/// - fair (amber): coverage ≥ 80 % and max HDOP ≤ p;
/// - poor (red): anything else, including a floor where no cell can be positioned.
public enum GeometryVerdict: Sendable, Equatable {
    case good, fair, poor

    /// Coverage fractions at or above which a floor can be good or fair.
    static let goodCoverage = 0.95, fairCoverage = 0.80

    /// The verdict on `statistics` with the limits of `options`.
    init(statistics s: GeometryStatistics, options: GeometryReportOptions) {
        guard let worst = s.hdopMax else { self = .poor; return }
        if s.coverage >= Self.goodCoverage && worst <= options.coverageHDOP {
            self = .good
        } else if s.coverage >= Self.fairCoverage && worst <= options.poorHDOP {
            self = .fair
        } else {
            self = .poor
        }
    }
}

extension GeometryReport {
    /// The verdict on this report's statistics with its limits (`GeometryVerdict`).
    public var verdict: GeometryVerdict { GeometryVerdict(statistics: statistics, options: options) }
}
