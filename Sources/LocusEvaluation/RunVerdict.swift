#if canImport(Glibc)
import Glibc
#endif
import Locus
import LocusCore

/// The honest-result rules of the commands that read a recording (`replay`, `zones`, `calibrate`):
/// a run that yields nothing fails (exit 1) with the likely cause, a run that skipped more than half
/// its rows says so, and a comparison with truth that compared nothing fails rather than report 0.
package enum RunVerdict {
    /// The likely cause of the skips, from the reason with the most rows.
    static func hint(_ skipped: SkipTally) -> String {
        guard let top = skipped.nonZero.max(by: { $0.count < $1.count }) else { return "" }
        switch top.reason {
        case .unknownAnchor: return "does this trace belong to this site? Its anchors are not the floor's locators"
        case .unknownFloor: return "do the rows' floor ids match the site's floors? (--floor sets the floor of rows without one)"
        case .timeBackwards: return "rows go backwards in time for their tag: is t one clock, in seconds?"
        case .clockJump: return "a tag's clock jumps far forward: is t in seconds?"
        case .missingField, .unparseableNumber, .invalidAnchor: return "is this a range trace (t,anchor,range_m, SPEC §2)?"
        case .nonFinite, .negativeRange, .rangeTooLong: return "are the ranges in metres?"
        case .lateRange: return "rounds come faster than --rate: is the rate the tags' round rate?"
        case .futureTime: return "rows are stamped ahead of the stream's clock: do the senders share one clock?"
        case .tagLimit: return "more tags than --max-tags: raise it, or lower --tag-idle"
        case .invalidTag: return "tag ids must be UTF-8 without control characters, at most 128 bytes"
        case .sameLocator: return "a difference row names one locator as both anchor_a and anchor_b"
        case .differenceTooLong: return "differences beyond the locators' distance: is tdoa_m in metres, and d(tag, B) − d(tag, A)?"
        }
    }

    /// The skip counts as "reason count, …".
    static func counts(_ skipped: SkipTally) -> String {
        skipped.nonZero.map { "\($0.reason.rawValue) \($0.count)" }.joined(separator: ", ")
    }

    /// Applies the rules to a finished run and says them through `say` (the command line's stderr); the exit status.
    /// - Parameters:
    ///   - results: what the run produced (fixes, events judged, samples used), with its noun.
    ///   - rows: data rows read; `skipped` those skipped, by reason.
    ///   - failure: why rows that were kept still gave nothing (e.g. the engine's failed epochs).
    ///   - compared: with truth, how many results were compared (nil without truth).
    package static func check(command: String, input: String, results: Int, noun: (String, String), rows: Int, skipped: SkipTally,
                      failure: String? = nil, compared: Int? = nil, say: (String) -> Void) -> Int32 {
        let prefix = "locus \(command): "
        guard rows > 0 else {
            say(prefix + "error: no \(noun.1): \(input) holds no data rows\n")
            return 1
        }
        guard results > 0 else {
            if skipped.total >= rows {
                say(prefix + "error: no \(noun.1): every row skipped (\(counts(skipped))) — \(hint(skipped))\n")
            } else {
                let kept = rows - skipped.total
                say(prefix + "error: no \(noun.1) from \(plural(kept, "usable row"))" + (failure.map { ": " + $0 } ?? "")
                            + (skipped.total > 0 ? " (skipped: \(counts(skipped)) — \(hint(skipped)))" : "") + "\n")
            }
            return 1
        }
        if skipped.total * 2 > rows {
            say(prefix + "warning: \(skipped.total) of \(rows) rows skipped (\(counts(skipped))) — \(hint(skipped))\n")
        }
        if let compared, compared == 0 {
            say(prefix + "error: truth covers 0 of the \(plural(results, noun.0, noun.1)): check that trace and truth share tags and clock\n")
            return 1
        }
        return 0
    }

    /// Why an engine's kept rows gave no fix (`ranges`: the ranges the epochs held; `raw`: solved by
    /// least squares alone, `--filter none`).
    static func engineFailure(_ d: EngineDiagnostics, ranges: Int, raw: Bool) -> String? {
        if d.epochs == 0 { return nil }
        var parts = d.failedEpochs.map { "\($0.code.rawValue) \(ReplaySummary.describe($0.code)) \($0.count)" }
        if d.epochsBeforeTrack > 0 { parts.append("before the filter had a track \(d.epochsBeforeTrack)") }
        var text = "\(plural(d.epochs, "epoch")), none solved (" + parts.joined(separator: ", ") + ")"
        // Epochs of one range each, too few for a fix: hardware that ranges to one locator at a time.
        let tooFew = d.failedEpochs.first { $0.code == .tooFewRanges }?.count ?? 0
        if raw, tooFew * 2 > d.epochs, ranges * 2 < d.epochs * 3 {
            text += " — about one range an epoch: if the tags range to one locator at a time (a round robin), the default "
                  + "filter tracks them, or a lower --rate (e.g. 2) makes each epoch a whole polling cycle"
        }
        return text
    }
}

extension ReplaySummary {
    /// The run's exit status under `RunVerdict`'s rules (messages on stderr).
    /// A run with epochs given raw fixes although the filter is on says so first, as a warning.
    package func verdict(command: String, input: String, say: (String) -> Void) -> Int32 {
        if let line = unfilteredText { say("locus \(command): warning: \(line)\n") }
        return RunVerdict.check(command: command, input: input, results: fixes, noun: ("fix", "fixes"), rows: ranges, skipped: skipped,
                         failure: RunVerdict.engineFailure(diagnostics, ranges: ranges, raw: filter == EngineOptions.Filter.none.rawValue), compared: accuracy?.compared, say: say)
    }
}

/// The number of cores online (`ReplayJob`'s default: `--jobs`).
enum ProcessorCount {
    static var online: Int {
        #if canImport(Glibc)
        return max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #else
        return 1
        #endif
    }
}
