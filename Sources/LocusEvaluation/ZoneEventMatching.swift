import LocusCore
import LocusNumerics

/// Zone transitions scored against a reference: the events a pipeline raised matched with those the
/// same zone rules raise on the true positions — what the site's users see, as flicker (spurious
/// transitions) and lag (delay).
///
/// Only transitions count (enter, exit; dwell reports are not transitions). Two events can match when
/// they name the same tag, zone and kind and lie within `windowSeconds` of each other; within each
/// (tag, zone, kind) the pairs are taken in order of increasing |Δt| (ties: earlier reference, then
/// earlier pipeline event), each event at most once — the nearest-in-time matching. A reference
/// event left alone is missed, a pipeline event left alone is spurious. Delay = t_pipeline −
/// t_reference of a matched pair, seconds (positive: the pipeline was late).
struct ZoneEventMatching: Sendable, Equatable {
    /// Reference transitions, matched pairs, missed and spurious transitions.
    var reference: Int
    var matched: Int
    var missed: Int
    var spurious: Int
    /// Delays of the matched pairs, seconds, in the order of the reference events' times.
    var delaysSeconds: [Double]
    /// Delays by kind.
    var enterDelaysSeconds: [Double]
    var exitDelaysSeconds: [Double]

    /// The nearest-rank `quantile` (`Quantile.nearestRank`, in [0, 1]) of the matched pairs' delays,
    /// seconds: of every pair, or of the pairs of `kind` (enter or exit); nil when there is none.
    func delaySeconds(quantile: Double, of kind: ZoneEvent.Kind? = nil) -> Double? {
        let delays: [Double]
        switch kind {
        case nil: delays = delaysSeconds
        case .enter: delays = enterDelaysSeconds
        case .exit: delays = exitDelaysSeconds
        case .dwell: delays = []
        }
        return Quantile.nearestRank(sorted: delays.sorted(), quantile)
    }

    /// Matches `pipeline` with `reference` (any order; dwell events ignored).
    init(reference: [ZoneEvent], pipeline: [ZoneEvent], windowSeconds: Double) {
        struct Key: Hashable { var tag: TagID; var zone: ZoneID; var kind: ZoneEvent.Kind }
        func grouped(_ events: [ZoneEvent]) -> [Key: [Double]] {
            var out: [Key: [Double]] = [:]
            for e in events where e.kind != .dwell { out[Key(tag: e.tag, zone: e.zone, kind: e.kind), default: []].append(e.timeSeconds) }
            return out.mapValues { $0.sorted() }
        }
        let ref = grouped(reference), got = grouped(pipeline)
        var matched = 0
        var pairs: [(reference: Double, delay: Double, kind: ZoneEvent.Kind)] = []
        for key in Set(ref.keys).union(got.keys) {
            let r = ref[key] ?? [], p = got[key] ?? []
            var candidates: [(gap: Double, i: Int, j: Int)] = []
            for (i, tr) in r.enumerated() {
                for (j, tp) in p.enumerated() where abs(tp - tr) <= windowSeconds { candidates.append((abs(tp - tr), i, j)) }
            }
            candidates.sort { a, b in a.gap != b.gap ? a.gap < b.gap : (a.i != b.i ? a.i < b.i : a.j < b.j) }
            var usedR = [Bool](repeating: false, count: r.count), usedP = [Bool](repeating: false, count: p.count)
            for c in candidates where !usedR[c.i] && !usedP[c.j] {
                usedR[c.i] = true
                usedP[c.j] = true
                matched += 1
                pairs.append((r[c.i], p[c.j] - r[c.i], key.kind))
            }
        }
        pairs.sort { a, b in a.reference != b.reference ? a.reference < b.reference : a.delay < b.delay }
        self.reference = ref.values.reduce(0) { $0 + $1.count }
        self.matched = matched
        missed = self.reference - matched
        spurious = got.values.reduce(0) { $0 + $1.count } - matched
        delaysSeconds = pairs.map(\.delay)
        enterDelaysSeconds = pairs.filter { $0.kind == .enter }.map(\.delay)
        exitDelaysSeconds = pairs.filter { $0.kind == .exit }.map(\.delay)
    }
}
