/// One tag's clock as seen in its rows: times must not go backwards, and a jump far forward must be
/// confirmed before it is believed.
///
/// A single corrupt timestamp far in the future would otherwise become the tag's latest time, and
/// every later (correct) row would read as going backwards — the tag silenced for good. So a row
/// more than `maximumJumpSeconds` after the tag's latest time is held back as a *suspected jump*
/// (skipped as `clock_jump`); the next row confirms the jump when it lies within
/// `maximumJumpSeconds` of the suspect (a tag that really came back after a long pause: only its
/// first row is lost), and dismisses it otherwise. Rows at or after the latest time are admitted.
@usableFromInline package struct TagClock: Sendable, Equatable {
    /// A forward jump larger than this (seconds) needs a second row to be believed: 300 s (a tag
    /// silent for longer loses one row on its return). One limit for every tag, so not stored per
    /// tag (16 bytes a clock: an engine keeps one per live tag). (A computed constant, not a
    /// `static let`: that is a global behind a lazy-initialisation check on every inlined read.)
    @inlinable static var maximumJumpSeconds: Double { 300 }
    /// The latest admitted time, seconds (−∞ before the first row).
    var latestSeconds: Double { latest }
    /// The time of a suspected jump, if one is held back.
    var suspectSeconds: Double? { suspect == -.infinity ? nil : suspect }
    // Internal storage visible to the inlinable fast path of `admit` (called once per range).
    @usableFromInline var latest = -Double.infinity
    /// The suspected jump's time; −∞ when none (a row's time is finite, so −∞ is never a time; one
    /// compare, where `isNaN` is a few integer operations on the bits).
    @usableFromInline var suspect = -Double.infinity

    package init() {}

    /// Admits a row at `t` (finite) or says why it is skipped: `.timeBackwards` or `.clockJump`.
    /// Inlined where the common case — no earlier than the latest time, no jump, nothing
    /// suspected — is taken (once per range in the engine).
    @inlinable package mutating func admit(_ t: Double) -> SkipReason? {
        if t >= latest && t - latest <= Self.maximumJumpSeconds && suspect == -.infinity {
            latest = t
            return nil
        }
        return admitSlowly(t)
    }

    /// `admit(_:)` for a caller that keeps the latest admitted time itself (`latest`; the clock's own
    /// is set to it first) and checks the common case without this call: true when t is admitted
    /// with nothing suspected, t >= latest and t - latest <= `maximumJumpSeconds` (then the caller
    /// records t as its latest and need not call `admit(_:after:)` at all).
    @inlinable package func admitsDirectly(_ t: Double, after latest: Double) -> Bool {
        t >= latest && t - latest <= Self.maximumJumpSeconds && suspect == -.infinity
    }

    /// The rows `admitsDirectly(_:after:)` refuses: `admit(_:)` with the clock's latest time set to
    /// `latest` first. The caller records t as its latest when this returns nil.
    package mutating func admit(_ t: Double, after latest: Double) -> SkipReason? {
        self.latest = latest
        return admit(t)
    }

    @usableFromInline mutating func admitSlowly(_ t: Double) -> SkipReason? {
        if t < latest { return .timeBackwards }
        if latest.isFinite && t - latest > Self.maximumJumpSeconds {
            if suspect != -.infinity, abs(t - suspect) <= Self.maximumJumpSeconds {
                suspect = -.infinity
                latest = t
                return nil
            }
            suspect = t
            return .clockJump
        }
        suspect = -.infinity
        latest = t
        return nil
    }

}
