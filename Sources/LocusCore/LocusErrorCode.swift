/// Stable error and log codes (SPEC §6). Append new codes; never renumber or reuse one.
///
/// The table with explanations is `docs/errors.md`; `LocusErrorCodeTests` pins both.
public enum LocusErrorCode: String, Sendable, CaseIterable, Comparable {
    // E1xxx: set-up and call order
    /// A command-line usage error: unknown, repeated or malformed option, missing argument.
    case usage = "E1001"
    /// An API called in the wrong state (e.g. a session not begun).
    case callOrder = "E1002"
    /// An API argument out of its domain (negative rate, empty tag id, …).
    case invalidArgument = "E1003"

    // E3xxx: floor and site configuration
    /// No floor map is set, so there are no coordinates to position in.
    case noFloorMap = "E3001"
    /// A floor id that the site does not have.
    case unknownFloor = "E3002"
    /// A required site field is missing.
    case siteMissingField = "E3101"
    /// A site field has the wrong JSON type.
    case siteWrongType = "E3102"
    /// Two floors or two zones of a floor share an id.
    case siteDuplicateID = "E3103"
    /// Two locators of a floor share an address.
    case siteDuplicateAddress = "E3104"
    /// A number is not finite (or does not fit a double).
    case siteNonFiniteNumber = "E3105"
    /// A value that must not be negative is negative.
    case siteNegativeValue = "E3106"
    /// The site has no floor.
    case siteNoFloor = "E3107"
    /// A polygon has fewer than 3 distinct vertices.
    case polygonTooFewVertices = "E3108"
    /// A polygon's edges cross each other.
    case polygonSelfIntersecting = "E3109"
    /// A polygon encloses no area.
    case polygonZeroArea = "E3110"
    /// A locator address is not a 16-bit integer, `0x` hex or decimal string.
    case invalidLocatorAddress = "E3111"
    /// A value is outside its allowed range (e.g. an `inCount` that is not a whole number).
    case siteValueOutOfRange = "E3112"
    /// The floor has no zones yet: positions flow, no zone events (logged at `info`, not an error).
    case floorHasNoZones = "E3003"

    // E4xxx: positioning at run time
    /// Too few usable ranges for the mode (3 planar, 4 spatial).
    case tooFewRanges = "E4001"
    /// Locators are collinear, coplanar (spatial mode) or coincident: the position is not determined.
    case degenerateGeometry = "E4002"
    /// A range is negative or not finite.
    case invalidRange = "E4003"
    /// The iterative solver did not produce a finite solution.
    case solverDiverged = "E4004"
    /// The tracking filter diverged and was re-initialised.
    case filterDivergence = "E4005"

    // E5xxx: I/O and data
    /// A file could not be read.
    case fileUnreadable = "E5001"
    /// JSON that does not parse.
    case malformedJSON = "E5002"
    /// A CSV file lacks a required column.
    case csvMissingColumn = "E5003"
    /// A CSV file that cannot be read as CSV (no header, bad quoting).
    case malformedCSV = "E5004"
    /// A file could not be written.
    case fileUnwritable = "E5005"
    /// Buffered positions were not yet delivered when the process ended.
    case undeliveredPositions = "E5006"
    /// LAPACK reported an illegal argument: a bug in Locus, never the user's data.
    case lapackInternal = "E5101"
    /// The position sink did not acknowledge a batch; it stays pending and is offered again.
    case deliveryFailed = "E5007"
    /// A network endpoint could not be opened or reached: a UDP port that cannot be bound, an MQTT
    /// broker unreachable (or refusing us) at start-up, a socket error while receiving.
    case networkUnavailable = "E5008"

    public static func < (lhs: LocusErrorCode, rhs: LocusErrorCode) -> Bool { lhs.rawValue < rhs.rawValue }

    /// True when the code means the work failed at run time (`locus` exits 1: a call out of order,
    /// a solver or filter that diverged, an output that cannot be written, undelivered positions,
    /// a LAPACK bug); false for usage errors and invalid input (exit 2). SPEC §5; docs/errors.md.
    public var isRunTimeFailure: Bool {
        switch self {
        case .callOrder, .solverDiverged, .filterDivergence, .fileUnwritable, .undeliveredPositions, .deliveryFailed,
             .networkUnavailable, .lapackInternal:
            true
        default:
            false
        }
    }
}
