import LocusCore

/// Groups one tag's range stream into solver epochs (issue 2, SPEC §5 output rate).
///
/// Two kinds of stream are handled by one rule:
/// - **bursts** (a ranging round: the locators ranged a few ms apart, then a pause): a gap longer
///   than `pauseSeconds` between consecutive ranges closes the epoch, so each burst is an epoch of
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
    /// A gap longer than this closes the epoch, seconds.
    package let pauseSeconds: Double

    /// Latest range per locator slot in the open epoch, metres; −1 marks a slot absent from the
    /// epoch (ranges are ≥ 0), so presence needs no array of its own (memory per tag).
    package private(set) var rangeMeters: [Double]
    /// Slots present in the open epoch, in order of first appearance (32-bit: memory per tag).
    package private(set) var presentSlots: [Int32]
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
        rangeMeters = [Double](repeating: -1, count: locatorCount)
        presentSlots = []
    }

    /// True when an epoch is open (has at least one range).
    package var isOpen: Bool { !presentSlots.isEmpty }

    /// The open epoch's time: its latest range's time.
    package var epochTimeSeconds: Double { lastTime }

    /// The earliest clock time at which the open epoch is due if no range joins it meanwhile:
    /// min(last + pause, start + period) (due strictly after the first, at the second).
    package var dueSeconds: Double { min(lastTime + pauseSeconds, epochStart + periodSeconds) }

    /// True when a range at `t` would close the open epoch first (pause or period reached).
    package func closes(at t: Double) -> Bool {
        isOpen && (t - lastTime > pauseSeconds || t - epochStart >= periodSeconds)
    }

    /// True when, with the clock at `now`, no range can still join the open epoch (its pause has
    /// passed or its period is over): a live engine may solve it without waiting for the next range.
    package func isDue(at now: Double) -> Bool {
        isOpen && (now - lastTime > pauseSeconds || now - epochStart >= periodSeconds)
    }

    /// Adds a range to the open epoch (opening one if none is open). Call `closes(at:)` first and
    /// take the epoch out with `reset()` after solving it when it returns true.
    /// `range` must be ≥ 0 (the engine clamps bias-corrected ranges at 0).
    package mutating func add(slot: Int, rangeMeters range: Double, timeSeconds t: Double) {
        precondition(range >= 0, "EpochAssembler: ranges are ≥ 0")
        if !isOpen {
            epochStart = t
            if presentSlots.capacity < rangeMeters.count { presentSlots.reserveCapacity(rangeMeters.count) }
        }
        if rangeMeters[slot] < 0 { presentSlots.append(Int32(truncatingIfNeeded: slot)) }
        rangeMeters[slot] = range
        lastTime = t
    }

    /// Empties the open epoch (after it was solved).
    package mutating func reset() {
        for s in presentSlots { rangeMeters[Int(s)] = -1 }
        presentSlots.removeAll(keepingCapacity: true)
    }
}
