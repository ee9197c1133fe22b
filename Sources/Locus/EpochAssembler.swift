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
package struct EpochAssembler: Sendable {
    /// Cut period, seconds (1/rate).
    package let periodSeconds: Double
    /// A gap of this or more closes the epoch, seconds.
    package let pauseSeconds: Double

    /// Latest range per locator slot in the open epoch, metres, and its time.
    package private(set) var rangeMeters: [Double]
    package private(set) var timeSeconds: [Double]
    /// Slots present in the open epoch, in order of first appearance.
    package private(set) var presentSlots: [Int]
    private var isPresent: [Bool]
    private var epochStart = 0.0
    private var lastTime = -Double.infinity

    /// - Parameters:
    ///   - locatorCount: slots (the floor's locators).
    ///   - rateHertz: output rate; the period is 1/rate.
    ///   - pauseSeconds: the gap that separates bursts; default half the period.
    package init(locatorCount: Int, rateHertz: Double, pauseSeconds: Double? = nil) {
        precondition(rateHertz > 0 && rateHertz.isFinite, "EpochAssembler: rate must be positive")
        periodSeconds = 1 / rateHertz
        self.pauseSeconds = pauseSeconds ?? 0.5 / rateHertz
        rangeMeters = [Double](repeating: 0, count: locatorCount)
        timeSeconds = [Double](repeating: 0, count: locatorCount)
        isPresent = [Bool](repeating: false, count: locatorCount)
        presentSlots = []
        presentSlots.reserveCapacity(locatorCount)
    }

    /// True when an epoch is open (has at least one range).
    package var isOpen: Bool { !presentSlots.isEmpty }

    /// The open epoch's time: its latest range's time.
    package var epochTimeSeconds: Double { lastTime }

    /// The time from which the open epoch is due — no later range can join it:
    /// min(last + pause, start + period). One expression decides both `closes(at:)` and
    /// `isDue(at:)`, so a clock standing exactly on it always closes the epoch.
    package var dueSeconds: Double { min(lastTime + pauseSeconds, epochStart + periodSeconds) }

    /// True when a range at `t` would close the open epoch first: a gap of `pauseSeconds` or more
    /// since its latest range, or `periodSeconds` or more since its first.
    package func closes(at t: Double) -> Bool {
        isOpen && t >= dueSeconds
    }

    /// True when, with the clock at `now`, no range can still join the open epoch: a live engine
    /// solves it without waiting for the next range. The same rule as `closes(at:)`.
    package func isDue(at now: Double) -> Bool {
        isOpen && now >= dueSeconds
    }

    /// Adds a range to the open epoch (opening one if none is open). Call `closes(at:)` first and
    /// take the epoch out with `reset()` after solving it when it returns true.
    package mutating func add(slot: Int, rangeMeters range: Double, timeSeconds t: Double) {
        if !isOpen { epochStart = t }
        if !isPresent[slot] {
            isPresent[slot] = true
            presentSlots.append(slot)
        }
        rangeMeters[slot] = range
        timeSeconds[slot] = t
        lastTime = t
    }

    /// Empties the open epoch (after it was solved).
    package mutating func reset() {
        for s in presentSlots { isPresent[s] = false }
        presentSlots.removeAll(keepingCapacity: true)
    }
}
