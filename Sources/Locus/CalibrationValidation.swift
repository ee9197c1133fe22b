import LocusCore
import LocusIO

/// The held-out validation of a calibration (`SiteCalibration.withoutTruth`, `locus calibrate`): the calibration fitted on the recording's even
/// blocks of time (`HoldoutBlocks`), the site as surveyed and the calibrated site scored on its odd
/// blocks, and the verdict that decides whether the calibration of the whole recording is written.
///
/// Figures (metres, lower is better): with truth the horizontal RMSE of the engine's fixes against
/// truth (`rmse_m`; `locus replay`'s engine with its default options, fed the held-out rows), without
/// truth the median absolute leave-one-out range residual (`median_abs_residual_m`,
/// `LeaveOneOutRangeResiduals`; for range differences an arrival's, the blink's offset eliminated).
/// change = calibrated/surveyed − 1.
///
/// Rule: a candidate is refused as worse when calibrated > surveyed·(1 + `tolerance`) (consistently
/// across the blocks, or by more than `inconsistentTolerance`). With truth it is accepted otherwise:
/// its biases are measured against known distances, and the validation guards against a model that
/// does not hold out. Without truth it must also be *shown better* (`shownBetter`): calibrated <
/// surveyed, and the paired per-block differences calibrated − surveyed (metres) averaging more than
/// two standard errors below 0; else it is *unproven* and not written either — the fit trades biases
/// against the tag's path, and only data it did not fit can say which way it went (Bielefeld
/// walk-m1l, 4 locators, an 89 s walk: −24.7 % pooled but −0.024 ± 0.016 m per block, and against
/// truth 0.163 → 0.186 m; every CUHK-SZ run: −0.10 to −0.18 m per block, at least 10 standard errors
/// below 0). With
/// `--fix-positions` the candidate with the fitted moves is judged first; when it fails, the biases
/// alone (positions as surveyed) are judged, and the moves are refused. When the biases fail too,
/// nothing is written. Fewer than `minimumScored` fixes compared (ranges predicted) on the held-out
/// blocks, fewer than 2 held-out blocks with rows, or a fit that the fit blocks alone cannot make:
/// not judged, and the calibration is not blocked (docs/calibration.md says why).
public struct CalibrationValidation: Sendable {
    /// What the held-out blocks are scored by.
    public enum Metric: String, Sendable {
        /// Horizontal RMSE of the engine's fixes against truth, metres.
        case rmse = "rmse_m"
        /// Median |leave-one-out range residual|, metres.
        case medianAbsoluteResidual = "median_abs_residual_m"
    }

    /// What was refused.
    public enum Refusal: String, Sendable {
        /// The fitted locator moves (`--fix-positions`); the biases alone validated and are written.
        case positions
        /// The whole calibration, worse on the held-out blocks: nothing is written.
        case calibration
        /// The whole calibration, not shown better on the held-out blocks (`shownBetter`): nothing is
        /// written, the site stays as surveyed.
        case unproven
    }

    /// Relative worsening of the held-out figure still accepted (2 %: docs/calibration.md).
    public static let tolerance = 0.02
    /// The most a calibration that is not consistently worse across the held-out blocks may still
    /// cost (6 %, three tolerances): the fit noise of a site that was already right reads about one
    /// tolerance (+2.3 %, the hall fixture), while a heavy-tailed block figure widens the standard
    /// error so much that a run made twice as bad (Hanyang los-b-case4 with its late 2-D truth, +105.7 %,
    /// per block +47 ± 28 %) would pass the blocks' test alone.
    public static let inconsistentTolerance = 3 * tolerance
    /// Scored items (fixes compared with truth, or ranges predicted) the held-out blocks need.
    public static let minimumScored = 100
    /// Held-out blocks with rows needed.
    public static let minimumHeldOutBlocks = 2

    public internal(set) var blocks: Int
    public internal(set) var blockSeconds: Double
    public internal(set) var heldOutBlocks: Int
    public internal(set) var fitRows: Int
    public internal(set) var heldOutRows: Int
    /// nil when no metric applies (no usable row).
    public internal(set) var metric: Metric?
    /// Without truth, what the residuals are of, in words: "range", or "arrival" where range
    /// differences alone were scored (a blink's arrivals, `scoreDifferences`).
    public internal(set) var residualNoun = "range"
    /// Fixes compared (with truth) or ranges or arrivals predicted (without), for the site as surveyed.
    public var scored = 0
    /// The held-out figure of the site as surveyed and of the calibration judged last (the one written
    /// when accepted: biases alone after refused moves), metres.
    public internal(set) var surveyed: Double?
    public internal(set) var calibrated: Double?
    /// With truth: the median horizontal errors, metres.
    public var surveyedMedian: Double?
    public var calibratedMedian: Double?
    /// With `--fix-positions`, when the fit blocks moved locators: their addresses and the figure
    /// with the moves.
    public internal(set) var moved: [String] = []
    public internal(set) var withMoves: Double?
    /// …and then the figure of the biases alone (positions as surveyed), metres.
    public internal(set) var calibratedBiasesOnly: Double?
    /// Without truth, with moves: whether the other fold (fitted on the held-out blocks, scored on
    /// the fit blocks) moves the same locators and they beat its biases alone there too; what it moved.
    public internal(set) var movesReproduced: Bool?
    public internal(set) var reverseMoved: [String] = []
    /// Per held-out block the relative change calibrated/surveyed − 1 of the candidate judged: its
    /// mean over the blocks and the standard error of that mean (nil with fewer than 2 blocks).
    public internal(set) var blockChange: (mean: Double, standardError: Double)?
    /// Per held-out block the difference calibrated − surveyed of the candidate judged, metres: its
    /// mean and the standard error of that mean (nil with fewer than 2 blocks).
    public internal(set) var blockDifference: (mean: Double, standardError: Double)?
    /// Whether the figures were compared (enough held-out data, a fit on the fit blocks).
    public internal(set) var judged = false
    public internal(set) var refused: Refusal?
    /// Why it was not judged, or what was refused, in words.
    public internal(set) var reason: String?
    /// Whether `--out` was written (set by `locus calibrate`; false from `SiteCalibration`).
    public var written = false

    /// Not yet judged, over `blocks` holding `fitRows` and `heldOutRows` rows.
    package init(blocks split: HoldoutBlocks, fitRows: Int, heldOutRows: Int, metric: Metric?) {
        blocks = split.blocks
        blockSeconds = split.blockSeconds
        heldOutBlocks = split.heldOutBlocks
        self.fitRows = fitRows
        self.heldOutRows = heldOutRows
        self.metric = metric
    }

    /// Whether the calibration may be written (not judged counts as accepted: it does not block).
    public var accepted: Bool { refused != .calibration && refused != .unproven }

    /// Whether the moves of `--fix-positions` validated (false when none were judged).
    public var acceptsMoves: Bool { judged && !moved.isEmpty && withMoves != nil && refused == nil }

    /// candidate/reference − 1.
    public static func change(_ reference: Double?, _ candidate: Double?) -> Double? {
        guard let reference, let candidate, reference > 0 else { return nil }
        return candidate / reference - 1
    }

    /// Whether `candidate` is within the tolerance of `reference`.
    static func passes(_ reference: Double, _ candidate: Double) -> Bool { candidate <= reference * (1 + tolerance) }

    /// Marks it not judged, saying why.
    package mutating func notJudged(_ why: String) {
        judged = false
        refused = nil
        reason = why
    }

    /// Marks it not judged and, since without truth a calibration must be shown better, unproven:
    /// nothing is written. For a recording whose geometry lets nothing held out be predicted and
    /// whose fit is known to go wrong there (range differences from 4 locators planar, 5 in 3-D:
    /// docs/calibration.md, "Held-out validation").
    mutating func unprovable(_ why: String) {
        judged = false
        refused = .unproven
        reason = why
    }

    /// Judges the calibration: `candidate` the biases fitted with the positions as surveyed, and
    /// (with `--fix-positions`, when the fit blocks moved locators) `withMoves` the fit with the
    /// moves; `reference` the site as surveyed. The moves are accepted when their figure passes
    /// against the site as surveyed **and** beats the biases alone by more than the tolerance
    /// (withMoves ≤ candidate·(1 − tolerance): a move must earn its place — a locator truly off
    /// lowers the figure by far more, while moves that trade against the biases, which the
    /// ranges see hardly at all, leave it where it was) **and**, without truth, is reproducible
    /// (`movesReproduced`); else the biases alone are judged.
    /// - Parameter blocks: for each held-out block, the figures (surveyed, candidate) of the biases
    ///   alone: a calibration worse beyond the tolerance, but by at most `inconsistentTolerance`, is
    ///   refused only when the worsening holds across the blocks (their mean change more than two
    ///   standard errors above 0), not when one block's noise makes it; beyond it, always. Without
    ///   truth they also decide whether it is shown better (`shownBetter`; else `.unproven`).
    package mutating func judge(surveyed reference: Double, calibrated candidate: Double, blocks: [(Double, Double)]) {
        judged = true
        blockChange = Self.meanChange(blocks)
        blockDifference = Self.meanDifference(blocks)
        surveyed = reference
        calibratedBiasesOnly = moved.isEmpty ? nil : candidate
        let movesHelp = withMoves.map { Self.passes(reference, $0) && $0 <= candidate * (1 - Self.tolerance) } ?? false
        if !moved.isEmpty, movesHelp, movesReproduced ?? true, let m = withMoves, shownBetter(reference, m) {
            calibrated = m
            refused = nil
            return
        }
        calibrated = candidate
        if Self.passes(reference, candidate) {
            if !shownBetter(reference, candidate) {
                refused = .unproven
                reason = "the calibration is not shown better on the held-out blocks (\(metricName) \(Self.metres(reference)) → "
                    + "\(Self.metres(candidate)) m, \(Self.percent(Self.change(reference, candidate)))"
                    + (blockDifference.map { "; per block \(Self.signedMetres($0.mean)) ± \(Self.metres($0.standardError)) m" } ?? "")
                    + "): without truth it must be, the site stays as surveyed"
            } else if !moved.isEmpty {
                refused = .positions
                let list = moved.joined(separator: ", ")
                if movesHelp {
                    reason = "moving \(list) is not reproducible: fitted on the held-out blocks instead, the adjustment moves "
                        + (reverseMoved.isEmpty ? "none" : reverseMoved.joined(separator: ", "))
                        + (Set(reverseMoved) == Set(moved) ? " but that move does not beat its biases alone on the fit blocks" : "")
                        + "; the locators stay where they were surveyed"
                } else {
                    let m = withMoves.map { "\(Self.metres($0)) m (\(Self.percent(Self.change(reference, $0))))" } ?? "no figure"
                    reason = "moving \(list) gives the held-out \(metricName) \(m), against "
                        + "\(Self.metres(candidate)) m (\(Self.percent(Self.change(reference, candidate)))) for the biases alone: the move does not "
                        + "improve on the biases alone by more than \(Self.percentMagnitude(Self.tolerance)), the locators stay where they were surveyed"
                }
            }
        } else if blocksDisagree, let b = blockChange, candidate <= reference * (1 + Self.inconsistentTolerance) {
            if metric != .rmse { refused = .unproven }
            reason = "the held-out \(metricName) is \(Self.percent(Self.change(reference, candidate))), beyond the "
                + "\(Self.percentMagnitude(Self.tolerance)) tolerance, but not consistently across the held-out blocks (per-block change "
                + "\(Self.percent(b.mean)) ± \(Self.percentMagnitude(b.standardError))): "
                + (metric == .rmse ? "not refused" : "not shown better, the site stays as surveyed")
        } else {
            refused = .calibration
            reason = "the calibration makes the held-out \(metricName) worse (\(Self.metres(reference)) → \(Self.metres(candidate)) m, "
                + "\(Self.percent(Self.change(reference, candidate))), beyond the \(Self.percentMagnitude(Self.tolerance)) tolerance"
                + (blocksDisagree ? " and beyond the \(Self.percentMagnitude(Self.inconsistentTolerance)) any calibration may cost where the held-out "
                    + "blocks disagree)" : ")")
                + (moved.isEmpty ? "" : ", with or without moving \(moved.joined(separator: ", "))")
        }
    }

    /// Whether `candidate` may be written as far as proof goes: with truth always (it must only not be
    /// worse); without, when it is lower than `reference` and (with per-block figures) the blocks'
    /// mean difference is more than two standard errors below 0.
    private func shownBetter(_ reference: Double, _ candidate: Double) -> Bool {
        guard metric != .rmse else { return true }
        return candidate < reference && (blockDifference.map { $0.mean + 2 * $0.standardError < 0 } ?? true)
    }

    /// Whether the held-out blocks do not show the worsening consistently: their mean change is within
    /// two standard errors of 0 (false with fewer than 2 blocks).
    private var blocksDisagree: Bool { blockChange.map { $0.mean - 2 * $0.standardError <= 0 } ?? false }

    /// The mean of the per-block changes candidate/surveyed − 1 and its standard error s/√n (nil
    /// with fewer than 2 blocks).
    static func meanChange(_ blocks: [(Double, Double)]) -> (mean: Double, standardError: Double)? {
        meanAndStandardError(blocks.compactMap { $0.0 > 0 ? $0.1 / $0.0 - 1 : nil })
    }

    /// The mean of the per-block differences candidate − surveyed (metres) and its standard error
    /// s/√n (nil with fewer than 2 blocks).
    static func meanDifference(_ blocks: [(Double, Double)]) -> (mean: Double, standardError: Double)? {
        meanAndStandardError(blocks.map { $0.1 - $0.0 })
    }

    /// The mean of `values` and its standard error s/√n, s the sample standard deviation (nil with
    /// fewer than 2 values).
    private static func meanAndStandardError(_ values: [Double]) -> (mean: Double, standardError: Double)? {
        guard values.count >= 2 else { return nil }
        let n = Double(values.count)
        let mean = values.reduce(0, +) / n
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (n - 1)
        return (mean, (variance / n).squareRoot())
    }

    /// The metric in words.
    private var metricName: String {
        switch metric {
        case .rmse?: "RMSE against truth"
        case .medianAbsoluteResidual?: "median \(residualNoun) residual"
        case nil: "figure"
        }
    }

    private static func metres(_ value: Double) -> String { DecimalText.string(value, decimals: 4) }

    /// Signed metres with 4 decimals ("−0.0240").
    private static func signedMetres(_ value: Double) -> String { (value < 0 ? "−" : "+") + metres(abs(value)) }

    /// A signed percentage with one decimal ("−12.3 %").
    private static func percent(_ value: Double?) -> String {
        guard let value else { return "-" }
        let text = DecimalText.string(abs(value) * 100, decimals: 1)
        return (value < 0 ? "−" : "+") + text + " %"
    }

    /// A percentage without sign ("2.0 %").
    private static func percentMagnitude(_ value: Double) -> String { DecimalText.string(abs(value) * 100, decimals: 1) + " %" }

    /// The `validation` object of `--json` (docs/calibration.md, "Held-out validation").
    package var json: JSONValue {
        func m(_ value: Double?) -> JSONValue { value.map { .number($0, .fixed(4)) } ?? .null }
        var members: [(String, JSONValue)] = [
            ("blocks", .integer(blocks)),
            ("block_s", .number(blockSeconds, .shortest)),
            ("held_out_blocks", .integer(heldOutBlocks)),
            ("fit_rows", .integer(fitRows)),
            ("held_out_rows", .integer(heldOutRows)),
            ("metric", metric.map { .string($0.rawValue) } ?? .null),
            ("scored", .integer(scored)),
            ("surveyed", m(surveyed)),
            ("calibrated", m(calibrated)),
            ("change", Self.change(surveyed, calibrated).map { .number($0, .fixed(4)) } ?? .null),
            ("tolerance", .number(Self.tolerance, .shortest)),
            ("inconsistent_tolerance", .number(Self.inconsistentTolerance, .shortest)),
            ("block_change", blockChange.map { .object([("mean", .number($0.mean, .fixed(4))), ("se", .number($0.standardError, .fixed(4)))]) } ?? .null),
            ("block_difference_m", blockDifference.map { .object([("mean", .number($0.mean, .fixed(4))), ("se", .number($0.standardError, .fixed(4)))]) } ?? .null),
        ]
        if metric == .rmse {
            members.append(("surveyed_p50_m", m(surveyedMedian)))
            members.append(("calibrated_p50_m", m(calibratedMedian)))
        }
        members.append(("positions", moved.isEmpty ? .null : .object([
            ("moved", .array(moved.map { .string($0) })),
            ("calibrated", m(withMoves)),
            ("change", Self.change(surveyed, withMoves).map { .number($0, .fixed(4)) } ?? .null),
            ("biases_only", m(calibratedBiasesOnly)),
            ("reproduced", movesReproduced.map { .bool($0) } ?? .null),
            ("accepted", .bool(acceptsMoves)),
        ])))
        members.append(("judged", .bool(judged)))
        members.append(("accepted", .bool(accepted)))
        members.append(("refused", refused.map { .string($0.rawValue) } ?? .null))
        members.append(("reason", reason.map { .string($0) } ?? .null))
        members.append(("written", .bool(written)))
        return .object(members)
    }

    /// The one line of the text report.
    public var text: String {
        var s = "held-out validation (\(heldOutBlocks) of \(plural(blocks, "block")) × \(DecimalText.string(blockSeconds, decimals: 1)) s, "
            + "\(plural(heldOutRows, "held-out row"))): "
        guard judged, let before = surveyed, let after = calibrated else {
            return s + "not judged: \(reason ?? "no figure")"
                + (refused == .positions ? "" : refused == .unproven ? ": nothing written" : " (the calibration is not blocked)") + "\n"
        }
        let unit = metric == .rmse ? "RMSE" : "median |\(residualNoun) residual|"
        s += "calibrated vs as surveyed on held-out blocks: \(unit) \(Self.metres(before)) → \(Self.metres(after)) m "
            + "(\(Self.percent(Self.change(before, after))))"
        if !moved.isEmpty, let m = withMoves {
            s += acceptsMoves ? "" : "; with the moves of \(moved.joined(separator: ", ")) \(Self.metres(m)) m (\(Self.percent(Self.change(before, m))))"
        }
        switch refused {
        case nil: s += acceptsMoves ? " with \(moved.joined(separator: ", ")) moved: accepted" : ": accepted"
        case .positions?: s += ": biases accepted, position moves refused"
        case .calibration?: s += ": refused, nothing written"
        case .unproven?: s += ": not shown better, nothing written"
        }
        return s + "\n"
    }
}
