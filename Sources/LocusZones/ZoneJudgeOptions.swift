/// Settings of a `ZoneJudge` that are not part of any zone: used for configuration warnings only
/// (judgement itself depends on the zones and the data alone).
package struct ZoneJudgeOptions: Sendable, Hashable {
    /// The position period Δt = 1/rate, seconds (0.25 s at 4 Hz): an `inCount ≥ 2` zone whose
    /// `inCountInterval` is shorter than Δt can never enter.
    var positionPeriodSeconds: Double
    /// Largest locator–zone planar distance at which a locator counts as covering a zone, metres.
    var coverageRangeMeters: Double
    /// Locators needed within `coverageRangeMeters` of a zone (3 for planar positioning).
    var minimumCoveringLocators: Int

    /// Options as other modules set them: the position period and the coverage range (defaults as
    /// `standard`); 3 covering locators.
    package init(positionPeriodSeconds: Double = 0.25, coverageRangeMeters: Double = 30) {
        self.init(positionPeriodSeconds: positionPeriodSeconds, coverageRangeMeters: coverageRangeMeters, minimumCoveringLocators: 3)
    }

    /// Options with every field given (see `standard` for the defaults).
    init(positionPeriodSeconds: Double, coverageRangeMeters: Double, minimumCoveringLocators: Int) {
        self.positionPeriodSeconds = positionPeriodSeconds
        self.coverageRangeMeters = coverageRangeMeters
        self.minimumCoveringLocators = minimumCoveringLocators
    }

    /// 4 Hz (Δt = 0.25 s), 30 m coverage range, 3 locators.
    static let standard = ZoneJudgeOptions()
}
