import LocusCore

extension ZoneJudge {
    /// Merges the released streams of several judges (e.g. one per floor) into one stream in the
    /// release order (`releasePrecedes`): a k-way merge, ties kept in stream order. Each stream
    /// must be one judge's output in its order; an exit is instant when its stream holds the same
    /// tag and zone's enter at the same time. O(N·k) for N events in k streams.
    package static func merge(_ streams: [[ZoneEvent]]) -> [ZoneEvent] {
        mergeOrder(streams).map { streams[$0.stream][$0.index] }
    }

    /// The order `merge(_:)` takes the streams' events in: (stream, index in it) per merged event.
    package static func mergeOrder(_ streams: [[ZoneEvent]]) -> [(stream: Int, index: Int)] {
        let instant: [[Bool]] = streams.map { stream in
            stream.indices.map { i in
                let e = stream[i]
                guard e.kind == .exit else { return false }
                var j = i - 1
                while j >= 0, stream[j].timeSeconds == e.timeSeconds {
                    if stream[j].kind == .enter, stream[j].tag == e.tag, stream[j].zone == e.zone { return true }
                    j -= 1
                }
                return false
            }
        }
        var heads = [Int](repeating: 0, count: streams.count)
        var out: [(stream: Int, index: Int)] = []
        out.reserveCapacity(streams.reduce(0) { $0 + $1.count })
        while true {
            var best = -1
            for k in streams.indices where heads[k] < streams[k].count {
                if best < 0 || releasePrecedes(streams[k][heads[k]], isInstantExit: instant[k][heads[k]],
                                               streams[best][heads[best]], isInstantExit: instant[best][heads[best]]) {
                    best = k
                }
            }
            guard best >= 0 else { return out }
            out.append((best, heads[best]))
            heads[best] += 1
        }
    }
}
