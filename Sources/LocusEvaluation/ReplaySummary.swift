import Locus
import LocusCore
import LocusIO
import LocusNumerics
import LocusZones

/// The figures `locus replay` reports, as text for people and as the `--json` object (SPEC §5).
package struct ReplaySummary {
    package var fixes: Int
    var ranges: Int
    var tags: Int
    package var skipped: SkipTally
    var diagnostics: EngineDiagnostics
    /// The accuracy against truth: `evaluation`'s, nil without truth.
    let accuracy: AccuracyReport?
    var events: [ZoneEvent.Kind: Int] = [:]
    package var elapsedSeconds: Double
    package var filter: String
    package var smooth: Bool
    /// The truth shift δ, when `--truth-shift` was given with `--truth` (`ReplayJob` sets it; the
    /// other faces have no truth shift).
    var truthShift: ReplayTruthShift? = nil
    /// Per tag, the error CDF and the zone score, with `--truth`.
    package var evaluation: ReplayEvaluation? = nil

    package init(fixes: Int, ranges: Int, tags: Int, skipped: SkipTally, diagnostics: EngineDiagnostics,
                 events: [ZoneEvent.Kind: Int], elapsedSeconds: Double, filter: String, smooth: Bool,
                 evaluation: ReplayEvaluation? = nil) {
        self.fixes = fixes
        self.ranges = ranges
        self.tags = tags
        self.skipped = skipped
        self.diagnostics = diagnostics
        self.accuracy = evaluation?.accuracyReport
        self.events = events
        self.elapsedSeconds = elapsedSeconds
        self.filter = filter
        self.smooth = smooth
        self.evaluation = evaluation
    }

    var fixesPerSecond: Double { elapsedSeconds > 0 ? Double(fixes) / elapsedSeconds : 0 }

    /// `fixes`, `skipped` (reason → count), `events` (enter/exit/dwell → count), `elapsed_s`,
    /// `fixes_per_s`, and with truth `rmse_m`, `p50_m`, `p95_m`, `p99_m`, `max_m`, `per_tag`, `cdf`,
    /// `zone_score` (`ReplayEvaluation`); also `ranges` (rows), `differences` (of them, range
    /// differences the engine was offered; only when there were), `tags`,
    /// `epochs`, `failed_epochs` (code → count), `epochs_before_track` (epochs the causal filter had
    /// no track for yet), `unfiltered_epochs` (epochs given raw fixes although the filter is on; only
    /// when there were: `EngineDiagnostics.unfilteredEpochs`), `rejected_ranges`, `filter`, `smooth`, `compared`; with `--truth` and
    /// `--truth-shift`: `truth_shift_s` (δ, seconds) and `truth_shift_source` (`auto` | `given`).
    package var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("fixes", .integer(fixes)),
            ("ranges", .integer(ranges)),
        ]
        // Of the rows, those that were range differences (TDoA; the key only when there were).
        if diagnostics.differenceRows > 0 { members.append(("differences", .integer(diagnostics.differenceRows))) }
        members += [
            ("tags", .integer(tags)),
            ("epochs", .integer(diagnostics.epochs)),
            ("skipped", .object(skipped.nonZero.map { ($0.reason.rawValue, JSONValue.integer($0.count)) })),
            ("failed_epochs", .object(diagnostics.failedEpochs.map { ($0.code.rawValue, JSONValue.integer($0.count)) })),
            ("epochs_before_track", .integer(diagnostics.epochsBeforeTrack)),
        ]
        // Epochs given raw least-squares fixes although `filter` is "kalman" (the key only when there
        // were: `EngineDiagnostics.unfilteredEpochs`).
        if diagnostics.unfilteredEpochs > 0 { members.append(("unfiltered_epochs", .integer(diagnostics.unfilteredEpochs))) }
        members += [
            ("rejected_ranges", .integer(diagnostics.rejectedRanges)),
            ("events", .object(ZoneEvent.Kind.allCases.sorted { $0.rawValue < $1.rawValue }.map { ($0.rawValue, JSONValue.integer(events[$0] ?? 0)) })),
            ("filter", .string(filter)),
            ("smooth", .bool(smooth)),
            ("elapsed_s", .number(elapsedSeconds, .fixed(4))),
            ("fixes_per_s", .number(fixesPerSecond, .fixed(0))),
        ]
        if let a = accuracy {
            // Figures of nothing compared are not measured: null, never 0.
            func figure(_ v: Double?) -> JSONValue { v.map { .number($0, .fixed(4)) } ?? .null }
            members += [
                ("compared", .integer(a.compared)),
                ("rmse_m", figure(a.measured?.rmseMeters)),
                ("p50_m", figure(a.measured?.p50Meters)),
                ("p95_m", figure(a.measured?.p95Meters)),
                ("max_m", figure(a.measured?.maxMeters)),
            ]
        }
        if let a = accuracy { members.append(("p99_m", a.compared > 0 ? .number(evaluation.flatMap { Quantile.nearestRank(sorted: $0.sortedErrors, 0.99) } ?? 0, .fixed(4)) : .null)) }
        if let shift = truthShift {
            members += [("truth_shift_s", .number(shift.seconds, .fixed(4))), ("truth_shift_source", .string(shift.source.rawValue))]
        }
        if let e = evaluation {
            members += [("per_tag", e.perTagJSON), ("cdf", e.cdfJSON), ("zone_score", e.zoneScoreJSON)]
        }
        return .object(members)
    }

    package func text(tracePath: String, positionsPath: String?) -> String {
        let rows = diagnostics.differenceRows > 0
            ? "\(plural(ranges, "row")) (\(plural(diagnostics.differenceRows, "range difference")))" : plural(ranges, "range row")
        var s = "replay \(tracePath): \(plural(fixes, "fix", "fixes")) from \(rows), \(plural(tags, "tag")), "
        s += "filter \(filter)\(smooth ? " + smoother" : ""), \(DecimalText.string(elapsedSeconds, decimals: 3)) s "
        s += "(\(DecimalText.string(fixesPerSecond, decimals: 0)) fixes/s)\n"
        if skipped.total == 0 {
            s += "skipped rows: none\n"
        } else {
            s += "skipped rows: " + skipped.nonZero.map { r in
                "\(r.reason.rawValue) \(r.count) (first at line \(skipped.firstLine(r.reason)))"
            }.joined(separator: ", ") + "\n"
        }
        if !diagnostics.failedEpochs.isEmpty {
            s += "epochs without a fix: " + diagnostics.failedEpochs.map { "\($0.code.rawValue) \(Self.describe($0.code)) \($0.count)" }
                .joined(separator: ", ") + " of \(diagnostics.epochs)\n"
        }
        if diagnostics.epochsBeforeTrack > 0 {
            s += "epochs before the filter had a track: \(diagnostics.epochsBeforeTrack) of \(diagnostics.epochs) "
            s += "(it starts once enough locators are ranged; with --filter none each epoch is solved alone)\n"
        }
        if let line = unfilteredText { s += line + "\n" }
        if diagnostics.rejectedRanges > 0 { s += "ranges rejected as outliers: \(diagnostics.rejectedRanges)\n" }
        if let a = accuracy, a.measured == nil {
            s += "horizontal error vs truth: not measured (no fix compared)\n"
        } else if let a = accuracy, let f = a.measured {
            s += "horizontal error vs truth (\(plural(a.compared, "fix", "fixes"))): RMSE \(DecimalText.string(f.rmseMeters, decimals: 3)) m, "
            s += "p50 \(DecimalText.string(f.p50Meters, decimals: 3)) m, p95 \(DecimalText.string(f.p95Meters, decimals: 3)) m, "
            s += "max \(DecimalText.string(f.maxMeters, decimals: 3)) m\n"
            if a.uncompared > 0 { s += "  (not compared: \(plural(a.uncompared, "fix", "fixes")) outside the truth's time span)\n" }
        }
        if let shift = truthShift { s += shift.text + "\n" }
        if let e = evaluation { s += e.zoneScoreText + "\n" }
        if !events.isEmpty {
            s += "zone events: " + ZoneEvent.Kind.allCases.map { "\($0.rawValue) \(events[$0] ?? 0)" }.joined(separator: ", ") + "\n"
        }
        if let p = positionsPath { s += "positions written to \(p)\n" }
        return s
    }

    /// The line saying that some epochs got raw fixes although the filter is on, or nil.
    var unfilteredText: String? {
        let n = diagnostics.unfilteredEpochs
        guard n > 0 else { return nil }
        return "\(n) of \(diagnostics.epochs) epochs are raw least-squares fixes, not filtered: "
            + "on floors solved in 3-D the causal filter takes ranges, not range differences"
    }

    static func describe(_ code: LocusErrorCode) -> String {
        switch code {
        case .tooFewRanges: "too few ranges"
        case .degenerateGeometry: "degenerate geometry"
        case .invalidRange: "invalid range"
        case .solverDiverged: "solver diverged"
        default: "failed"
        }
    }
}
