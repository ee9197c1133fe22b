import LocusCore

/// How each locator address was written in a site file, so that a site written back (`locus
/// calibrate --out`) keeps the input's notation: a JSON number stays a number, a string
/// (`"0x9DD7"`, `"0x9dd7"`, `"40407"`) stays exactly that string.
///
/// Kept beside the `Site`, not in `Locator`: the site model the engine uses carries no file spelling,
/// and sites built in code compare equal to decoded ones. Addresses without a recorded spelling are
/// written as `SiteEncoder` writes them by default (`"0x9DD7"`).
public struct SiteAddressNotation: Sendable, Equatable {
    /// One address's spelling in the file.
    enum Spelling: Sendable, Hashable {
        /// A JSON integer, e.g. `40407`.
        case number
        /// A JSON string, exactly as written (case, width, decimal or hex), e.g. `"0x9dd7"`.
        case string(String)
    }

    private var spellings: [FloorID: [LocatorAddress: Spelling]] = [:]

    /// No recorded spelling: every address is written in the default notation.
    public init() {}

    /// The spelling of `address` on floor `floor`, nil when none was recorded.
    subscript(floor: FloorID, address: LocatorAddress) -> Spelling? {
        get { spellings[floor]?[address] }
        set { spellings[floor, default: [:]][address] = newValue }
    }
}
