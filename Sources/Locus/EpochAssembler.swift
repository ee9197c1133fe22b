import LocusCore

/// Groups one tag's range stream into solver epochs (issue 2, SPEC §5 output rate).
///
/// Two kinds of stream are handled by one rule:
/// - **bursts** (a ranging round: the locators ranged a few ms apart, then a pause): a gap of
///   `pauseSeconds` or more between consecutive ranges closes the epoch, so each burst is an epoch of
///   its own;
/// - **continuous** streams (e.g. every locator at 100 Hz): an epoch also closes when a range
///   arrives `periodSeconds` (1/rate) or more after the epoch's first range, so the stream is cut at
///   the output rate.
/// Within an epoch each locator contributes its latest range (later ranges overwrite earlier ones),
/// so a continuous stream is solved on ranges from the last few milliseconds of the window. The
/// epoch's time is the time of its latest range. The boundaries depend on the data alone (never on
/// batch sizes or the wall clock). Storage is fixed at the floor's locator count; adding a range
/// and closing an epoch allocate nothing.
struct EpochAssembler: Sendable {
    /// The rules live in `EpochTable`; an assembler is a table of one row.
    private var table: EpochTable

    /// Cut period, seconds (1/rate).
    var periodSeconds: Double { table.periodSeconds }
    /// A gap of this or more closes the epoch, seconds.
    var pauseSeconds: Double { table.pauseSeconds }

    /// - Parameters:
    ///   - locatorCount: slots (the floor's locators).
    ///   - rateHertz: output rate; the period is 1/rate.
    ///   - pauseSeconds: the gap that separates bursts; default half the period.
    init(locatorCount: Int, rateHertz: Double, pauseSeconds: Double? = nil) {
        precondition(rateHertz > 0 && rateHertz.isFinite, "EpochAssembler: rate must be positive")
        table = EpochTable(stride: locatorCount, rateHertz: rateHertz, pauseSeconds: pauseSeconds)
        table.appendRow()
    }

    /// Latest range per locator slot in the open epoch, metres; −1 for a slot absent from it.
    /// O(slots): for inspection, not the hot path.
    var rangeMeters: [Double] { (0..<table.stride).map { table.rangeMeters(0, slot: $0) } }

    /// Slots present in the open epoch, in order of first appearance. O(slots).
    var presentSlots: [Int] { (0..<table.presentCount(0)).map { table.presentSlot(0, $0) } }

    /// True when an epoch is open (has at least one range).
    var isOpen: Bool { table.isOpen(0) }

    /// The open epoch's time: its latest range's time.
    var epochTimeSeconds: Double { table.epochTimeSeconds(0) }

    /// The time from which the open epoch is due — no later range can join it:
    /// min(last + pause, start + period).
    var dueSeconds: Double { table.dueSeconds(0) }

    /// True when a range at `t` would close the open epoch first (pause or period reached).
    func closes(at t: Double) -> Bool { table.closes(0, at: t) }

    /// True when, with the clock at `now`, no range can still join the open epoch (its pause has
    /// passed or its period is over): a live engine may solve it without waiting for the next range.
    func isDue(at now: Double) -> Bool { table.isDue(0, at: now) }

    /// Adds a range (≥ 0) to the open epoch (opening one if none is open); returns false, adding
    /// nothing, when it is a straggler of the last round, which closed complete (`EpochTable`: the
    /// caller skips it as late). Call `closes(at:)` first and take the epoch out with `reset()` after
    /// solving it when it returns true.
    @discardableResult
    mutating func add(slot: Int, rangeMeters range: Double, timeSeconds t: Double) -> Bool {
        table.add(0, slot: slot, rangeMeters: range, timeSeconds: t) != .late
    }

    /// True when the open epoch holds as many locators as the recent rounds (`EpochTable`).
    var isComplete: Bool { table.isComplete(0) }

    /// Empties the open epoch (after it was solved), learning the round model from how it ended
    /// with the clock at `now` (nil: learn nothing).
    mutating func reset(atSeconds now: Double? = nil) {
        table.reset(0, ending: now.map { table.ending(0, at: $0) })
    }
}
