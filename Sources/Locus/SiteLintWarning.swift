import LocusCore

/// One warning of `SiteLint`: a legal site configuration that will likely not behave as its author
/// meant (SPEC §5 `locus lint`). Not an error: the site loads and runs as written.
struct SiteLintWarning: Sendable, Hashable, CustomStringConvertible {
    /// The stable, code-like key, e.g. `floor.locatorsCollinear`, `locator.outsideFloor`,
    /// `zone.beyondRange` (the keys of `SiteLint.warnings(for:options:)`).
    var key: String
    /// The floor concerned.
    var floor: FloorID
    /// Where in the site file, in the decoder's JSON path notation: `floors[0]`,
    /// `floors[0].locators[3]` or `floors[0].zones[2]`.
    var path: String
    /// An English sentence naming the floor, locator or zone and the figures involved (metres).
    var message: String

    /// A warning with every field given.
    init(key: String, floor: FloorID, path: String, message: String) {
        self.key = key
        self.floor = floor
        self.path = path
        self.message = message
    }

    /// `path: key: message`.
    var description: String { "\(path): \(key): \(message)" }
}
