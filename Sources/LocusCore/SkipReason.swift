/// Why an input row was skipped. Skipped rows are never silent: they are counted by reason and
/// reported (`skipped` in the `--json` summary). The raw values are the report's keys.
public enum SkipReason: String, Sendable, CaseIterable, Comparable {
    /// A required field is empty or the row has too few fields.
    case missingField = "missing_field"
    /// A number that does not parse.
    case unparseableNumber = "unparseable_number"
    /// A locator address that is not a 16-bit integer.
    case invalidAnchor = "invalid_anchor"
    /// A locator address the row's floor does not have.
    case unknownAnchor = "unknown_anchor"
    /// A floor id the site does not have.
    case unknownFloor = "unknown_floor"
    /// A range or time that is NaN or infinite.
    case nonFinite = "non_finite"
    /// A negative range.
    case negativeRange = "negative_range"
    /// A time earlier than the tag's previous row — or, where idle tags are evicted (a live stream's
    /// tag limit), a new or returning tag's first row earlier than the stream's clock by more than the
    /// idle time (an evicted tag keeps no previous row: the clock stands for it).
    case timeBackwards = "time_backwards"
    /// A time far after the tag's previous row, not (yet) confirmed by the next one (`TagClock`).
    case clockJump = "clock_jump"
    /// A range longer than the engine's plausible maximum (default 1,000 m).
    case rangeTooLong = "range_too_long"
    /// A range of a round its tag already closed (solved as complete before this straggler came, within
    /// the pause): it joins no epoch of its own, so a round never becomes two fixes.
    case lateRange = "late_range"
    /// A live row stamped further ahead of the stream's clock than the future horizon (or without a
    /// time on a stream of relative times): the shared clock never jumps for one sender.
    case futureTime = "future_time"
    /// A row of a new tag while the live tag limit (`--max-tags`) is reached.
    case tagLimit = "tag_limit"
    /// A tag id that is not a valid id (too long, not UTF-8, or holding a control character).
    case invalidTag = "invalid_tag"
    /// A range difference whose two locators are the same (A = B).
    case sameLocator = "same_locator"
    /// A range difference larger in magnitude than its two locators' distance plus the margin
    /// (`EngineConfiguration.differenceMarginMeters`): no tag position gives it.
    case differenceTooLong = "difference_too_long"

    /// Orders by the report key (`rawValue`).
    public static func < (a: SkipReason, b: SkipReason) -> Bool { a.rawValue < b.rawValue }
}

/// Counts of skipped rows by reason, with the first line number of each — the smallest, so that a
/// tally does not depend on the order rows were met or tallies merged (a sorted replay, several
/// engines): for messages. Deterministic: reported in the order of the reasons' keys.
public struct SkipTally: Sendable, Equatable {
    private var counts = [Int](repeating: 0, count: SkipReason.allCases.count)
    private var firstLines = [Int](repeating: 0, count: SkipReason.allCases.count)

    /// No row skipped.
    package init() {}

    private static func index(_ reason: SkipReason) -> Int {
        switch reason {
        case .missingField: 0
        case .unparseableNumber: 1
        case .invalidAnchor: 2
        case .unknownAnchor: 3
        case .unknownFloor: 4
        case .nonFinite: 5
        case .negativeRange: 6
        case .timeBackwards: 7
        case .clockJump: 8
        case .rangeTooLong: 9
        case .lateRange: 10
        case .futureTime: 11
        case .tagLimit: 12
        case .invalidTag: 13
        case .sameLocator: 14
        case .differenceTooLong: 15
        }
    }

    /// Counts one skipped row; `line` is its 1-based line number in the input, or 0 if none.
    package mutating func record(_ reason: SkipReason, line: Int = 0) {
        let i = Self.index(reason)
        firstLines[i] = Self.earlier(counts[i] == 0 ? nil : firstLines[i], line)
        counts[i] += 1
    }

    /// The earlier of two line numbers, 0 (unknown) counting as later than any.
    private static func earlier(_ a: Int?, _ b: Int) -> Int {
        guard let a else { return b }
        if a == 0 { return b }
        if b == 0 { return a }
        return min(a, b)
    }

    /// Adds another tally into this one.
    package mutating func merge(_ other: SkipTally) {
        for r in SkipReason.allCases where other.count(r) > 0 {
            let i = Self.index(r)
            firstLines[i] = Self.earlier(counts[i] == 0 ? nil : firstLines[i], other.firstLines[i])
            counts[i] += other.counts[i]
        }
    }

    /// Rows skipped for `reason`.
    public func count(_ reason: SkipReason) -> Int { counts[Self.index(reason)] }
    /// The smallest line of a row skipped for `reason` (0 if none, or unknown).
    public func firstLine(_ reason: SkipReason) -> Int { firstLines[Self.index(reason)] }
    /// Rows skipped for any reason.
    public var total: Int { counts.reduce(0, +) }

    /// The reasons with a non-zero count, sorted by key, with their counts.
    public var nonZero: [(reason: SkipReason, count: Int)] {
        SkipReason.allCases.sorted().compactMap { r in count(r) > 0 ? (r, count(r)) : nil }
    }
}
