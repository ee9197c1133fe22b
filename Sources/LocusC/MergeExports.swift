import Locus
import LocusCore
import LocusEvaluation
import LocusIO
import LocusZones

// The ordered merge of partition outputs (`locus.distributed`): engines that each solve a share of
// the tags (`locus_engine_set_partition`) give, merged in this order, the single engine's bytes;
// and their summaries merged into the single run's.
// The orders are the ones the sharded engine merges its shards by (`ShardedEngine`), so no binding
// re-implements them.

/// `locus_merge_positions`: the single run's order of `partCount` partitions' positions — by
/// (time, tag index of first appearance), ties in partition order. `times[k]` and `tagIndices[k]`
/// hold `counts[k]` values; `outPart`/`outIndex` get Σ counts entries (partition, index in it).
/// - Returns: 0, or E1003 (NULL arrays with a positive count, a count too large).
@c(locus_merge_positions)
public func locusMergePositions(_ times: UnsafePointer<UnsafePointer<Double>?>?, _ tagIndices: UnsafePointer<UnsafePointer<Int64>?>?,
                                _ counts: UnsafePointer<Int>?, _ partCount: Int,
                                _ outPart: UnsafeMutablePointer<Int>?, _ outIndex: UnsafeMutablePointer<Int>?) -> Int32 {
    Status.guarded { () throws(LocusError) in
        let sizes = try MergeArguments.counts(counts, partCount)
        guard let out = try MergeArguments.outputs(outPart, outIndex, total: sizes.reduce(0, +)) else { return }
        let (outPart, outIndex) = out
        var keys: [(t: Double, tag: Int64, part: Int, index: Int)] = []
        keys.reserveCapacity(sizes.reduce(0, +))
        for k in 0..<partCount where sizes[k] > 0 {
            guard let t = times?[k], let g = tagIndices?[k] else { throw LocusError(.invalidArgument, "times[\(k)] or tag_indices[\(k)] is NULL") }
            for i in 0..<sizes[k] {
                guard t[i].isFinite else { throw LocusError(.invalidArgument, "times[\(k)][\(i)] is not finite") }
                keys.append((t[i], g[i], k, i))
            }
        }
        keys.sort { a, b in
            if a.t != b.t { return a.t < b.t }
            if a.tag != b.tag { return a.tag < b.tag }
            if a.part != b.part { return a.part < b.part }
            return a.index < b.index
        }
        for (n, key) in keys.enumerated() {
            outPart[n] = key.part
            outIndex[n] = key.index
        }
    }
}

/// `locus_merge_events`: the single run's order of `partCount` partitions' zone events (each
/// partition's `locus_event` array in its release order) — SPEC §4.7 (`ZoneJudge.mergeOrder`, an
/// exit at the time of its own enter right after it), ties in partition order.
/// - Returns: 0, or E1003 (NULL arrays with a positive count, a bad id in an event).
@c(locus_merge_events)
public func locusMergeEvents(_ parts: UnsafePointer<UnsafeRawPointer?>?, _ counts: UnsafePointer<Int>?, _ partCount: Int,
                             _ outPart: UnsafeMutablePointer<Int>?, _ outIndex: UnsafeMutablePointer<Int>?) -> Int32 {
    Status.guarded { () throws(LocusError) in
        let sizes = try MergeArguments.counts(counts, partCount)
        guard let out = try MergeArguments.outputs(outPart, outIndex, total: sizes.reduce(0, +)) else { return }
        let (outPart, outIndex) = out
        var streams: [[ZoneEvent]] = []
        for k in 0..<partCount {
            var stream: [ZoneEvent] = []
            if sizes[k] > 0 {
                guard let base = parts?[k] else { throw LocusError(.invalidArgument, "parts[\(k)] is NULL") }
                for i in 0..<sizes[k] { stream.append(try Records.loadEvent(from: base + i * CLayout.Event.size)) }
            }
            streams.append(stream)
        }
        for (n, at) in ZoneJudge.mergeOrder(streams).enumerated() {
            outPart[n] = at.stream
            outIndex[n] = at.index
        }
    }
}

/// `locus_merge_summaries`: the single run's `locus replay --json` object from its `count`
/// partitions' summaries (JSON texts, as `locus_engine_summary` gives them), by the rule of
/// `PartitionSummaries`: what each partition solved adds up, rows every partition read count once.
/// The text is `malloc`ed (free with `locus_free`).
/// - Returns: 0, or E1003 (NULL arguments, a text that is not JSON, summaries that cannot be
///   merged: see `PartitionSummaries.merge`).
@c(locus_merge_summaries)
public func locusMergeSummaries(_ summaries: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int,
                                _ summaryJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    RunResult.deliver(summaryJSON: summaryJSON, notes: nil, verdict: nil) { () throws(LocusError) in
        guard count >= 1, count <= 1 << 20 else { throw LocusError(.invalidArgument, "count \(count) is not in 1...1048576") }
        guard let summaries else { throw LocusError(.invalidArgument, "summaries is NULL") }
        var parts: [JSONValue] = []
        for k in 0..<count {
            let text = try CText.string(summaries[k], field: "summaries[\(k)]")
            do throws(LocusError) {
                parts.append(try JSONParser.parse(Array(text.utf8)))
            } catch {
                throw LocusError(.invalidArgument, "summaries[\(k)] is not JSON: \(error.message)")
            }
        }
        return (try PartitionSummaries.merge(parts), "", 0)
    }
}

/// Checks of the merges' arguments.
enum MergeArguments {
    /// The output arrays, checked (nil when there is nothing to write).
    static func outputs(_ outPart: UnsafeMutablePointer<Int>?, _ outIndex: UnsafeMutablePointer<Int>?,
                        total: Int) throws(LocusError) -> (UnsafeMutablePointer<Int>, UnsafeMutablePointer<Int>)? {
        guard total > 0 else { return nil }
        guard let outPart, let outIndex else { throw LocusError(.invalidArgument, "out_part or out_index is NULL") }
        return (outPart, outIndex)
    }

    /// The partitions' counts, checked.
    static func counts(_ counts: UnsafePointer<Int>?, _ partCount: Int) throws(LocusError) -> [Int] {
        guard partCount >= 0, partCount <= 1 << 20 else { throw LocusError(.invalidArgument, "part_count \(partCount) is not in 0...1048576") }
        guard partCount == 0 || counts != nil else { throw LocusError(.invalidArgument, "counts is NULL") }
        var sizes: [Int] = []
        var total = 0
        for k in 0..<partCount {
            let n = counts?[k] ?? 0
            guard n >= 0, n <= Int.max / 8 - total else { throw LocusError(.invalidArgument, "counts[\(k)] \(n) is too large") }
            sizes.append(n)
            total += n
        }
        return sizes
    }
}
