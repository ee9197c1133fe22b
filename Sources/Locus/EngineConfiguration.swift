import LocusCore
import LocusSolvers

/// How the positioning engine runs. Configuration only (no state); defaults in `standard`.
package struct EngineConfiguration: Sendable {
    /// Output rate per tag, Hz: epochs are cut at 1/rate (SPEC §5 default 4 Hz).
    package var rateHertz: Double
    /// The floor for rows that name none; nil means the site's first floor.
    var defaultFloor: FloorID?
    /// Solver settings; the tag height is taken per floor.
    package var solver: TrilaterationConfiguration
    /// Tracking: raw per-epoch least-squares fixes, or the causal filter.
    var tracking: Tracking
    /// The online per-tag common range offset (tag antenna delay), docs/calibration.md.
    var tagRangeOffset: TagRangeOffset
    /// Ranges longer than this are not UWB measurements (a corrupt value): skipped as
    /// `range_too_long`, metres. 1,000 m is far beyond any UWB link.
    var maximumRangeMeters: Double

    /// When the engine estimates and removes a per-tag common range offset b̂
    /// (`TagRangeOffsetEstimator`) on planar floors.
    package enum TagRangeOffset: Sendable {
        /// Never.
        case off
        /// On every planar floor.
        case on(TagRangeOffsetConfiguration)
        /// On planar floors whose locators carry no bias (every `biasM` 0): it stands in for a
        /// calibration; on calibrated floors it only adds noise.
        case automatic(TagRangeOffsetConfiguration)
    }

    /// What turns ranges into the fixes the engine reports.
    package enum Tracking: Sendable {
        /// Raw per-epoch least-squares fixes (`--filter none`).
        case none
        /// The causal filter (`--filter kalman`): tightly coupled (each range an EKF update) or
        /// loosely coupled (each epoch's least-squares fix an update), per its configuration. The
        /// filter is planar; floors whose locators make the solver work in 3-D report raw fixes.
        case kalman(TrackFilterConfiguration)
    }

    /// A configuration; defaults as `standard`.
    package init(rateHertz: Double = 4, defaultFloor: FloorID? = nil, solver: TrilaterationConfiguration = .standard,
                 tracking: Tracking = .kalman(.standard), tagRangeOffset: TagRangeOffset = .automatic(.standard),
                 maximumRangeMeters: Double = 1000) {
        self.maximumRangeMeters = maximumRangeMeters
        self.rateHertz = rateHertz
        self.defaultFloor = defaultFloor
        self.solver = solver
        self.tracking = tracking
        self.tagRangeOffset = tagRangeOffset
    }

    /// 4 Hz, first floor, the solver's standard settings (robust, automatic planar/spatial), the
    /// causal filter with its standard settings (tightly coupled, interacting models), the per-tag
    /// range offset on uncalibrated planar floors (`.automatic`).
    static let standard = EngineConfiguration()
}
