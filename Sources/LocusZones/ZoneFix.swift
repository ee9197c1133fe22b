import LocusCore

/// The part of a position fix that zone judgement uses: time, tag and planar position.
package struct ZoneFix: Sendable, Hashable {
    /// Time of the fix, seconds (the data's clock).
    var timeSeconds: Double
    /// The tag the fix belongs to.
    var tag: TagID
    /// Planar (x, y) position in the floor frame, metres.
    var point: Point2

    /// A fix of `tag` at `point` (metres) at `timeSeconds`.
    package init(timeSeconds: Double, tag: TagID, point: Point2) {
        self.timeSeconds = timeSeconds
        self.tag = tag
        self.point = point
    }

    /// The fix's time, tag and horizontal position (x, y).
    init(_ fix: PositionFix) {
        self.init(timeSeconds: fix.timeSeconds, tag: fix.tag, point: fix.position.horizontal)
    }
}
