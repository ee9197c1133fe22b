import LocusCore

/// A configuration warning about one zone: legal input that will not behave as its author likely
/// meant (SPEC §4.2). Not an error: judgement runs as specified.
package struct ZoneConfigurationWarning: Sendable, Hashable, CustomStringConvertible {
    /// What is wrong; the raw value is the stable, code-like key printed by `locus lint`.
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        /// `inCount` is 0: the zone never enters.
        case inCountZero = "zone.inCount.zero"
        /// `inCount ≥ 2` with `inCountInterval` shorter than the position period: it can never enter.
        case inCountIntervalTooShort = "zone.inCountInterval.tooShort"
        /// `outPeriod` shorter than the position period: the zone is left between consecutive fixes
        /// and re-entered at the next one (enter/exit flicker).
        case outPeriodTooShort = "zone.outPeriod.tooShort"
        /// Every vertex lies outside the floor rectangle.
        case outsideFloor = "zone.outsideFloor"
        /// Some vertices lie outside the floor rectangle.
        case partlyOutsideFloor = "zone.partlyOutsideFloor"
        /// Fewer locators than needed lie within the coverage range of the zone.
        case noLocatorCoverage = "zone.noLocatorCoverage"
    }

    /// What is wrong.
    package var kind: Kind
    /// The zone concerned.
    package var zone: ZoneID
    /// An English sentence naming the zone and the figures involved.
    package var message: String

    /// A warning of `kind` about `zone`.
    init(kind: Kind, zone: ZoneID, message: String) {
        self.kind = kind
        self.zone = zone
        self.message = message
    }

    /// `key: message`.
    package var description: String { "\(kind.rawValue): \(message)" }
}
