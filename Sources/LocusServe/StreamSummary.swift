import Locus
import LocusCore
import LocusIO

/// What `locus stream` says when it has drained: every received row accounted for (used, or skipped
/// by reason), malformed messages, the input's own counts, fixes and events written (`StreamJob.run`).
struct StreamSummary {
    var rows: Int
    var fixes: Int
    var events: [ZoneEvent.Kind: Int]
    var skipped: SkipTally
    var malformed: Int
    var firstMalformed: String?
    var diagnostics: EngineDiagnostics
    /// The input's counts (datagrams, messages, reconnects…), in order.
    var input: [(String, Int)]
    /// Publishes the broker client refused (`--output mqtt://`; nil for other outputs: not measured).
    var publishFailures: Int?
    var elapsedSeconds: Double
    /// The signal that ended the stream (nil: the input ended).
    var signal: Int32?

    /// The summary as one JSON object (`--json`).
    var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("rows", .integer(rows)),
            ("fixes", .integer(fixes)),
            ("events", .object(ZoneEvent.Kind.allCases.sorted { $0.rawValue < $1.rawValue }.map { ($0.rawValue, JSONValue.integer(events[$0] ?? 0)) })),
            ("skipped", .object(skipped.nonZero.map { ($0.reason.rawValue, JSONValue.integer($0.count)) })),
            ("malformed_messages", .integer(malformed)),
            ("tags_evicted", .integer(diagnostics.tagsEvicted)),
            ("late_fixes", .integer(diagnostics.lateFixes)),
            ("failed_epochs", .object(diagnostics.failedEpochs.sorted { $0.code < $1.code }
                .map { ($0.code.rawValue, JSONValue.integer($0.count)) })),
            ("input", .object(input.map { ($0.0, JSONValue.integer($0.1)) })),
            ("publish_failures", publishFailures.map { .integer($0) } ?? .null),
            ("elapsed_s", .number(elapsedSeconds, .fixed(3))),
        ]
        // Epochs given raw fixes although the filter is on (only when there were: `EngineDiagnostics.unfilteredEpochs`).
        if diagnostics.unfilteredEpochs > 0 {
            members.insert(("unfiltered_epochs", .integer(diagnostics.unfilteredEpochs)), at: members.count - 3)
        }
        return .object(members)
    }

    /// The summary as lines of text.
    var text: String {
        var s = "stream: \(plural(rows, "row")) received, \(plural(fixes, "fix", "fixes")), events "
        s += ZoneEvent.Kind.allCases.sorted { $0.rawValue < $1.rawValue }.map { "\($0.rawValue) \(events[$0] ?? 0)" }.joined(separator: ", ")
        s += ", \(DecimalText.string(elapsedSeconds, decimals: 3)) s"
        if let signal { s += " (drained on \(signal == 2 ? "SIGINT" : "SIGTERM"))" }
        s += "\n"
        if skipped.total > 0 {
            s += "skipped rows: " + skipped.nonZero.map { "\($0.reason.rawValue) \($0.count)" }.joined(separator: ", ") + "\n"
        }
        if diagnostics.tagsEvicted > 0 { s += "tags evicted (idle): \(diagnostics.tagsEvicted)\n" }
        if diagnostics.lateFixes > 0 {
            s += "late fixes: \(diagnostics.lateFixes) (a tag's rows came after the clock had moved on: out of time order, "
                + "their zone events at the stream's clock; --max-lag S waits for rows up to S late)\n"
        }
        if malformed > 0 { s += "malformed messages: \(malformed) (first: \(firstMalformed ?? "?"))\n" }
        if !diagnostics.failedEpochs.isEmpty {
            s += "epochs without a fix: " + diagnostics.failedEpochs.sorted { $0.code < $1.code }
                .map { "\($0.code.rawValue) \($0.count)" }.joined(separator: ", ") + "\n"
        }
        if diagnostics.unfilteredEpochs > 0 {
            s += "\(diagnostics.unfilteredEpochs) of \(diagnostics.epochs) epochs are raw least-squares fixes, not filtered: "
            s += "on floors solved in 3-D the causal filter takes ranges, not range differences\n"
        }
        if let publishFailures, publishFailures > 0 { s += "publish failures: \(publishFailures)\n" }
        if !input.isEmpty { s += "input: " + input.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + "\n" }
        return s
    }
}
