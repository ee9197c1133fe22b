import LocusCore

/// Positions and zone events in one time order, as they happened: each event after the positions up
/// to its time and before later ones (at equal times the positions first: an event is raised by the
/// position at its time); each kind keeps the engine's order ((time, tag) for fixes, SPEC §4.7 for
/// events). What `FloorSession` hands its callbacks and `locus stream` writes and publishes.
package enum OutputInterleaving {
    /// Calls `position` and `event` for `fixes` and `events` (each in the engine's order) interleaved.
    package static func interleave(_ fixes: [PositionFix], _ events: [ZoneEvent],
                                   position: (PositionFix) throws -> Void, event: (ZoneEvent) throws -> Void) rethrows {
        var j = 0
        for f in fixes {
            while j < events.count, events[j].timeSeconds < f.timeSeconds {
                try event(events[j])
                j += 1
            }
            try position(f)
        }
        while j < events.count {
            try event(events[j])
            j += 1
        }
    }
}
