import LocusCore
import LocusSolvers

/// How the positioning engine runs. Configuration only (no state); defaults in `standard`. Other
/// modules make one from the user's settings only (`init(_:tagLimit:)`, `EngineOptions.swift`).
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
    /// The online per-tag, per-locator range biases (docs/calibration.md), where `tagRangeOffset` applies.
    var locatorBias: LocatorBias
    /// Ranges longer than this are not UWB measurements (a corrupt value): skipped as
    /// `range_too_long`, metres. 1,000 m is far beyond any UWB link.
    var maximumRangeMeters: Double
    /// The bound on live tags (`locus stream`'s `--max-tags`, `--tag-idle`); nil — the default, and
    /// what replay, the C ABI and the Swift API use — keeps every tag for the whole run.
    var tagLimit: TagLimit?
    /// A range difference larger in magnitude than its two locators' distance plus this margin is no
    /// difference of that pair (skipped as `difference_too_long`), metres: 2 m covers the noise and
    /// the NLOS excess of a real difference next to the pair's baseline.
    var differenceMarginMeters = 2.0
    /// How long, in seconds of data time, fixes wait behind the clock before they are released
    /// (`locus stream --max-lag`; 0, the default, releases each fix as soon as no open epoch can
    /// precede it). A live input's tags need not arrive in time order with each other: a tag
    /// behind a slower gateway sends rounds the clock (another tag's latest row) has already passed,
    /// and its fix, released after later fixes, is judged at the zone judges' clock, not at its own
    /// time. Waiting up to this long puts every fix up to that late back in time order and judges
    /// it at its own time — the events are exactly replay's — at the cost of this much latency.
    var releaseLatenessSeconds = 0.0

    /// How many tags an engine keeps at once, and when it lets an idle one go
    /// (`PositioningEngine+Eviction.swift`). A live input trusts no sender: without a bound, every
    /// new id costs its per-tag state (filter, epoch row, zone state, registry entry) for good, so a
    /// sender inventing ids grows memory without limit.
    struct TagLimit: Sendable, Equatable {
        /// At most this many tags hold state at once (≥ 1). A row of a new tag while that many are
        /// live is skipped as `tag_limit`; a live tag is never displaced for a new one.
        var maximumTags: Int
        /// A tag whose latest row is more than this many seconds (data time) behind the engine's
        /// clock is evicted — once nothing of it is still in flight: no open epoch, no parked fix,
        /// no zone it is inside (it exits first, `outPeriod` after its last detection) and no
        /// zone count still running. Seconds, > 0 and finite.
        var idleSeconds: Double

        /// A bound; checked when an engine is made (`PositioningEngine.init`: E1003 when out of range).
        init(maximumTags: Int, idleSeconds: Double) {
            self.maximumTags = maximumTags
            self.idleSeconds = idleSeconds
        }
    }

    /// When the engine estimates and removes a per-tag common range offset b̂
    /// (`TagRangeOffsetEstimator`) on planar floors.
    enum TagRangeOffset: Sendable {
        /// Never.
        case off
        /// On every planar floor.
        case on(TagRangeOffsetConfiguration)
        /// On planar floors whose locators carry no bias (every `biasM` 0): it stands in for a
        /// calibration; on calibrated floors it only adds noise.
        case automatic(TagRangeOffsetConfiguration)
    }

    /// Whether the engine estimates and removes per-tag, per-locator range biases
    /// (`TagLocatorBiasEstimator`) where it estimates the tag's common offset.
    enum LocatorBias: Sendable {
        /// Never.
        case off
        /// On every floor where the tag offset is estimated (`tagRangeOffset`).
        case automatic(TagLocatorBiasConfiguration)
    }

    /// What turns ranges into the fixes the engine reports.
    enum Tracking: Sendable {
        /// Raw per-epoch least-squares fixes (`--filter none`).
        case none
        /// The causal filter (`--filter kalman`): tightly coupled (each range an EKF update) or
        /// loosely coupled (each epoch's least-squares fix an update), per its configuration. The
        /// filter is planar (interacting models) where the solver works in the plane; on floors whose
        /// locators make it work in 3-D it is the 3-D constant-velocity track (`SpatialTrack`, ranges
        /// only, whatever the coupling). Epochs still given raw fixes there (range differences) are
        /// counted in `EngineDiagnostics.unfilteredEpochs` (the summaries' `unfiltered_epochs` and a warning).
        case kalman(TrackFilterConfiguration)
    }

    /// A configuration; defaults as `standard`.
    init(rateHertz: Double = 4, defaultFloor: FloorID? = nil, solver: TrilaterationConfiguration = .standard,
                 tracking: Tracking = .kalman(.standard), tagRangeOffset: TagRangeOffset = .automatic(.standard),
                 locatorBias: LocatorBias = .automatic(.standard), maximumRangeMeters: Double = 1000, tagLimit: TagLimit? = nil) {
        self.maximumRangeMeters = maximumRangeMeters
        self.tagLimit = tagLimit
        self.rateHertz = rateHertz
        self.defaultFloor = defaultFloor
        self.solver = solver
        self.tracking = tracking
        self.tagRangeOffset = tagRangeOffset
        self.locatorBias = locatorBias
    }

    /// 4 Hz, first floor, the solver's standard settings (robust, automatic planar/spatial), the
    /// causal filter with its standard settings (tightly coupled, interacting models), the per-tag
    /// range offset on uncalibrated planar floors (`.automatic`).
    static let standard = EngineConfiguration()
}
