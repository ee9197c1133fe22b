import Locus
import LocusCore
import LocusIO

/// The summary of a run split into partitions — engines fed the same rows, each solving its share
/// of the tags (`PositioningEngine.setPartition`; an archive replayed on a cluster) — made from the
/// partitions' own summaries (`ReplaySummary.json`, as `locus_engine_summary` gives them): `locus
/// replay --json`'s object for the single run, so that no binding re-derives which counts add up.
///
/// The rule follows from what a partition sees. Every partition reads every row, so what is counted
/// per row is the same in each and counts once: `ranges`, `tags`, and the skipped rows — except the
/// reasons only a tag's own partition can tell (`PositioningEngine.partitionOwnedSkips`, a round's
/// straggler), which add up. What is counted per solved tag adds up: `fixes`, `epochs`,
/// `failed_epochs`, `epochs_before_track`, `unfiltered_epochs` (0 where a partition has none),
/// `rejected_ranges`, `events`. The settings (`filter`,
/// `smooth`) and the shared counts must agree: partitions that disagree are of different runs, and
/// merging them is refused rather than guessed. The partitions run side by side, so `elapsed_s` is
/// the slowest one's and `fixes_per_s` the merged fixes over it. A comparison with truth is refused:
/// its percentiles and CDF need every error, not the partitions' figures (compare the merged
/// positions instead).
package enum PartitionSummaries {
    /// Counts of what each partition solved: summed.
    private static let summed: Set<String> = ["fixes", "epochs", "epochs_before_track", "unfiltered_epochs", "rejected_ranges"]
    /// Summed counts a summary holds only when not 0 (right after `epochs_before_track`): 0 where absent.
    private static let optional = ["unfiltered_epochs"]
    /// Counts per solved tag, by key (code, kind): summed key by key.
    private static let summedByKey: Set<String> = ["failed_epochs", "events"]
    /// What every partition has alike: the same in each.
    private static let shared: Set<String> = ["ranges", "differences", "tags", "filter", "smooth"]

    /// The single run's summary from its partitions' (any order; one partition: its own, re-spelled).
    /// Keys in the first summary's order.
    /// - Throws: E1003 for no summary, a summary that is not a replay summary's object, one with truth
    ///   or a key this merge does not know, or partitions that disagree on what they share.
    package static func merge(_ parts: [JSONValue]) throws(LocusError) -> JSONValue {
        guard let first = parts.first?.members else {
            throw LocusError(.invalidArgument, parts.isEmpty ? "no partition summary to merge" : "summary 0 is not a JSON object")
        }
        // A key a partition gives only when its count is not 0 (`optional`) counts 0 where absent.
        var keys = first.map(\.key).filter { !optional.contains($0) }
        var present = Set<String>()
        for part in parts { for m in part.members ?? [] where optional.contains(m.key) { present.insert(m.key) } }
        for key in optional where present.contains(key) {
            keys.insert(key, at: (keys.firstIndex(of: "epochs_before_track") ?? keys.count - 1) + 1)
        }
        var objects: [[String: JSONValue]] = []
        for (k, part) in parts.enumerated() {
            guard let given = part.members else { throw LocusError(.invalidArgument, "summary \(k) is not a JSON object") }
            var members = given.map { (key: $0.key, value: $0.value) }
            for key in optional where present.contains(key) && !members.contains(where: { $0.key == key }) {
                members.insert((key, .integer(0)), at: (members.firstIndex { $0.key == "epochs_before_track" } ?? members.count - 1) + 1)
            }
            guard members.map(\.key) == keys else {
                throw LocusError(.invalidArgument, "summary \(k) has other keys than summary 0: partitions of different runs")
            }
            objects.append(Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last }))
        }
        var merged: [(String, JSONValue)] = []
        var fixes = 0, elapsed = 0.0
        for key in keys {
            let values = objects.map { $0[key]! }
            switch key {
            case _ where summed.contains(key):
                let total = try sum(values, key)
                if key == "fixes" { fixes = total }
                merged.append((key, .integer(total)))
            case _ where summedByKey.contains(key):
                merged.append((key, try sumByKey(values, key, owned: { _ in true })))
            case "skipped":
                let owned = Set(PositioningEngine.partitionOwnedSkips.map(\.rawValue))
                merged.append((key, try sumByKey(values, key, owned: { owned.contains($0) })))
            case _ where shared.contains(key):
                guard values.allSatisfy({ $0 == values[0] }) else {
                    throw LocusError(.invalidArgument, "the partitions' '\(key)' differ (\(values.map(\.description).joined(separator: ", "))): partitions of different runs")
                }
                merged.append((key, values[0]))
            case "elapsed_s":
                for (k, v) in values.enumerated() {
                    guard let seconds = v.doubleValue, seconds.isFinite else { throw LocusError(.invalidArgument, "summary \(k)'s 'elapsed_s' is not a number") }
                    elapsed = max(elapsed, seconds)
                }
                merged.append((key, .number(elapsed, .fixed(4))))
            case "fixes_per_s":
                merged.append((key, .null))  // filled in below, once fixes and elapsed_s are known
            default:
                throw LocusError(.invalidArgument, "'\(key)' cannot be merged from partitions (a comparison with truth needs every error: compare the merged positions)")
            }
        }
        if let at = merged.firstIndex(where: { $0.0 == "fixes_per_s" }) {
            merged[at].1 = .number(elapsed > 0 ? Double(fixes) / elapsed : 0, .fixed(0))
        }
        return .object(merged)
    }

    /// The sum of one integer count over the partitions.
    private static func sum(_ values: [JSONValue], _ key: String) throws(LocusError) -> Int {
        var total = 0
        for (k, v) in values.enumerated() {
            guard let n = v.intValue, n >= 0 else { throw LocusError(.invalidArgument, "summary \(k)'s '\(key)' is not a count") }
            total += n
        }
        return total
    }

    /// Objects of counts merged key by key, keys sorted (as the summary writes them), zeros of
    /// `skipped` left out: an `owned` key's counts summed, any other's the same in every partition
    /// (a key a partition lacks counts 0 there).
    private static func sumByKey(_ values: [JSONValue], _ key: String, owned: (String) -> Bool) throws(LocusError) -> JSONValue {
        var counts: [String: [Int]] = [:]
        for (k, v) in values.enumerated() {
            guard let members = v.members else { throw LocusError(.invalidArgument, "summary \(k)'s '\(key)' is not an object") }
            for m in members {
                guard let n = m.value.intValue, n >= 0 else { throw LocusError(.invalidArgument, "summary \(k)'s '\(key).\(m.key)' is not a count") }
                counts[m.key, default: Array(repeating: 0, count: values.count)][k] = n
            }
        }
        var out: [(String, JSONValue)] = []
        for name in counts.keys.sorted() {
            let each = counts[name]!
            guard owned(name) || each.allSatisfy({ $0 == each[0] }) else {
                throw LocusError(.invalidArgument, "the partitions' '\(key).\(name)' differ (\(each.map(String.init).joined(separator: ", "))): partitions of different runs")
            }
            let count = owned(name) ? each.reduce(0, +) : each[0]
            if count > 0 || key != "skipped" { out.append((name, .integer(count))) }
        }
        return .object(out)
    }
}
