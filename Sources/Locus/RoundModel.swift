/// What one tag's ranging rounds usually look like, learned from its recent rounds: the engine's
/// way to solve a round as soon as it is complete instead of a pause later (issue 16: latency).
///
/// A tag that ranges in rounds — bursts separated by a pause — usually reports the same locators
/// in the same order every round. The model keeps the sizes (distinct locators) of the tag's last
/// three rounds and the slot that ended the last one. Once two sizes are known, an epoch is
/// **complete** when it holds n̂ = max(recent sizes) locators or more and its latest range came from
/// the slot that ended the last round; the engine then closes it at once. An incomplete round
/// still closes at the pause, and an epoch cut by the period rule, or one in which a locator
/// reported twice, is a continuous stream, not a round: the model forgets everything and stays
/// silent until rounds are seen again.
///
/// An early close gives the epoch the same ranges and the same time (its latest range) as the
/// pause would, so outputs change only when a round outgrew the model: a range of a locator the
/// closed round did not hold arrives within the pause after its latest range — a **straggler**. (Issue
/// #41 item 5: three rounds of 8 locators in a row that each lost one, the last of them its usual
/// last locator, make n̂ = 7 with that round's last slot as the final one; the next whole round is
/// complete at its 7th range, and its 8th comes 2.5 ms later.) A straggler never opens an epoch of
/// its own — that was a second fix, from one locator, a few ms after the round's —:
/// `EpochTable.add` counts it as late and `straggled` teaches the model that the closed
/// round held one more locator, the straggler's last, so the next such rounds are whole.
///
/// A range of a locator the closed round did hold, within the pause, is a new round (rounds come
/// faster than the pause): `opened` then expects one more locator than n̂ and that slot last, so
/// that such rounds stop closing early.
///
/// Stored in two spare 32-bit words of the tag's `EpochTable` row (no extra memory, no extra cache
/// line): `slots` = latest slot (bits 0–15) | final slot of the last round (bits 16–31);
/// `sizes` = the last three round sizes (a byte each, newest lowest, 0 = unknown, 255 = 255 or more)
/// | three flags (bits 24–26) | the stragglers taken since the last round closed (bits 27–31).
struct RoundModel {
    var slots: UInt32
    var sizes: UInt32

    private static let completeFlag: UInt32 = 1 << 24
    private static let endedCompleteFlag: UInt32 = 1 << 25
    private static let repeatFlag: UInt32 = 1 << 26
    /// Where the straggler count starts: 5 bits, cleared with the flags.
    private static let stragglerShift: UInt32 = 27
    /// The most stragglers one round can take (the count's 5 bits).
    static let maximumStragglers = 31
    private static let flagMask: UInt32 = 0xFF00_0000

    /// The slot of the epoch's latest range.
    var latestSlot: Int { Int(slots & 0xFFFF) }
    /// The slot whose range ended the tag's last round.
    var finalSlot: Int { Int(slots >> 16) }

    /// n̂: the largest of the recent round sizes once two are known, else 0 (no expectation).
    /// (Unknown sizes are 0, so the largest of all three bytes is the largest known size.)
    @inline(__always) var expectedSize: Int {
        let a = sizes & 0xFF, b = (sizes >> 8) & 0xFF, c = (sizes >> 16) & 0xFF
        let known = (a != 0 ? 1 : 0) + (b != 0 ? 1 : 0) + (c != 0 ? 1 : 0)
        return known >= 2 ? Int(max(a, max(b, c))) : 0
    }

    /// True when the open epoch is complete (set by `added`).
    var isComplete: Bool { sizes & Self.completeFlag != 0 }

    /// True when a locator reported twice in the open epoch: not a round.
    var hasRepeat: Bool { sizes & Self.repeatFlag != 0 }

    /// True when the tag's last epoch closed complete and no epoch opened since (`opened` clears
    /// it): the only state in which a range can be a straggler.
    @inline(__always) var endedComplete: Bool { sizes & Self.endedCompleteFlag != 0 }

    /// The newest round size: the last round's distinct locators, its stragglers included (0:
    /// unknown; 255: 255 or more, too many to tell which locators the round held).
    var latestSize: Int { Int(sizes & 0xFF) }

    /// How many stragglers of the last round were taken (`straggled`), ≤ `maximumStragglers`.
    var stragglers: Int { Int(sizes >> Self.stragglerShift) }

    /// An epoch opened at `t`, `sinceLatestSeconds` after the tag's previous range; `pauseSeconds`
    /// is the gap that separates rounds. If the previous epoch closed complete yet this range came
    /// within the pause (a locator of that round again: rounds faster than the pause), expect one
    /// more locator, this slot last.
    mutating func opened(sinceLatestSeconds gap: Double, pauseSeconds: Double, slot: Int) {
        if sizes & Self.endedCompleteFlag != 0, gap < pauseSeconds {
            push(size: expectedSize + 1)
            slots = (slots & 0xFFFF) | UInt32(truncatingIfNeeded: slot & 0xFFFF) << 16
        }
        sizes &= ~Self.flagMask
    }

    /// A range of `slot` joined the open epoch, which now holds `count` locators; `isRepeat` when the
    /// slot was already present.
    @inline(__always) mutating func added(slot: Int, count: Int, isRepeat: Bool) {
        slots = (slots & 0xFFFF_0000) | UInt32(truncatingIfNeeded: slot & 0xFFFF)
        if isRepeat { sizes |= Self.repeatFlag }
        // The cheap tests first: most ranges are not the round's usual last one.
        if slot == finalSlot, !hasRepeat, case let expected = expectedSize, expected > 0, count >= expected {
            sizes |= Self.completeFlag
        } else {
            sizes &= ~Self.completeFlag
        }
    }

    /// The open epoch of `count` locators closed as a round (complete, or its pause passed).
    mutating func closedRound(count: Int) {
        if hasRepeat { forget(); return }
        let complete = isComplete
        push(size: count)
        slots = (slots & 0xFFFF) | (slots & 0xFFFF) << 16
        sizes &= ~Self.flagMask
        if complete { sizes |= Self.endedCompleteFlag }
    }

    /// A straggler of `slot` came after the last round closed complete: that round held one more
    /// locator, this one last. Its size (the newest) grows by one and `slot` becomes the final slot,
    /// so that n̂ is at least that size and the next such round is complete at its true last range.
    /// The model stays `endedComplete`: a second straggler of the round is one too.
    /// - Precondition: `endedComplete`, `latestSize` < 255 and `stragglers` < `maximumStragglers`
    ///   (neither field overflows into the next).
    mutating func straggled(slot: Int) {
        let s = UInt32(truncatingIfNeeded: slot & 0xFFFF)
        slots = s | s << 16
        sizes = sizes &+ 1 &+ (1 << Self.stragglerShift)
    }

    /// No rounds (a continuous stream, another floor): forget everything.
    mutating func forget() { slots = 0; sizes = 0 }

    private mutating func push(size: Int) {
        let history = (sizes & 0xFFFF) << 8 | UInt32(min(max(size, 0), 255))
        sizes = (sizes & Self.flagMask) | history
    }
}
