import LocusCore

/// One `ZoneJudge` per floor of a site on one clock (SPEC §4.6): a fix is judged on its floor and
/// moves the other floors' clocks to its time; released events come out merged across floors in
/// §4.7 order. For consumers of a position stream (`locus zones`, the reference events of a replay
/// judged against truth); the engine keeps its own allocation-free copy of this step.
package struct FloorJudges: Sendable {
    package private(set) var judges: [ZoneJudge]
    private var scratch: [[ZoneEvent]]

    /// Judges for `floors` with `options`.
    /// - Throws: `ZoneJudge.init`'s errors for an invalid zone.
    package init(floors: [Floor], options: ZoneJudgeOptions) throws(LocusError) {
        var judges: [ZoneJudge] = []
        for floor in floors { judges.append(try ZoneJudge(floor: floor, options: options)) }
        self.judges = judges
        scratch = Array(repeating: [], count: judges.count)
    }

    /// Judges `fix` on floor `floor` (nil: no floor's — only the clocks move) and appends what
    /// becomes final to `events`.
    /// - Throws: `ZoneJudge.judge`'s errors.
    package mutating func judge(_ fix: ZoneFix, tag: TagIndex, floor: Int?, into events: inout [ZoneEvent]) throws(LocusError) {
        for f in judges.indices {
            if f == floor {
                try judges[f].judge(fix, tag: tag, into: &scratch[f])
            } else {
                try judges[f].advance(toSeconds: fix.timeSeconds, into: &scratch[f])
            }
        }
        collect(into: &events)
    }

    /// Ends judgement on every floor (no synthetic exit, SPEC §4.6) and appends the rest.
    package mutating func finish(into events: inout [ZoneEvent]) {
        for f in judges.indices { judges[f].finish(into: &scratch[f]) }
        collect(into: &events)
    }

    private mutating func collect(into events: inout [ZoneEvent]) {
        guard scratch.contains(where: { !$0.isEmpty }) else { return }
        events += judges.count == 1 ? scratch[0] : ZoneJudge.merge(scratch)
        for f in scratch.indices { scratch[f].removeAll(keepingCapacity: true) }
    }
}
