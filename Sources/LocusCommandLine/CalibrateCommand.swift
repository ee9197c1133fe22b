import Foundation
import Locus
import LocusCore
import LocusEvaluation
import LocusIO
import LocusSolvers

/// `locus calibrate`: each locator's range bias and noise from a recording with known positions,
/// and the site with `biasM` filled in (SPEC §5).
enum CalibrateCommand: LocusCommand {
    /// The option table (drives parsing and `--help`).
    static let spec = CommandSpec(
        name: "calibrate",
        summary: "Estimate each locator's range bias (biasM) and noise: from ranges at known positions (--truth), or from the ranges alone.",
        options: [
            .value("site", "SITE", "Site JSON (SPEC §1); its biasM values are ignored: biases are estimated from the raw ranges.", required: true),
            .value("trace", "TRACE", "Trace CSV (SPEC §2): ranges t,anchor,range_m[,tag][,floor], or range differences "
                   + "t,tag,anchor_a,anchor_b,tdoa_m[,floor] (only differences of biases are observable from them, their mean is kept "
                   + "at the site's; a floor with both kinds is calibrated from its ranges: docs/tdoa.md).",
                   required: true),
            .value("truth", "TRUTH", "Truth CSV t,[tag,]x,y[,z]: where each tag was (interpolated linearly in time). Without it the biases are estimated from the ranges alone, jointly with the tag's path, and every locator's surveyed position is checked."),
            .value("out", "SITE_OUT", "Write the site with the estimated biasM (and biasSlope with --slope); locators without enough samples keep theirs."),
            .value("floor", "ID", "Floor for rows without a floor column (default: the site's first floor)."),
            .value("estimator", "KIND", "tukey: Huber then Tukey bisquare M-estimate, one LAPACKE least squares over all locators per pass (default); huber: the Huber stage only; median: per-locator median.",
                   choices: ["tukey", "huber", "median"]),
            .flag("slope", "Fit error = b + s·distance per locator (tukey/huber): --out writes biasM = b, the intercept (the error at distance 0), and biasSlope = s; the table's bias_m column is the fit at the mean distance, icept_m is b."),
            .value("height", "SOURCE", "Tag height for the true distance: auto (the floor's tagHeightM on planar floors, the truth's z otherwise, default), floor, or truth.",
                   choices: ["auto", "floor", "truth"]),
            .value("min-samples", "N", "Samples a locator needs to be estimated (default 10 with --truth, 50 ranges without)."),
            .flag("fix-positions", "Without --truth: --out also moves each flagged locator to its fitted position, when the held-out validation accepts the move."),
            .value("holdout-block", "SECONDS", "Held-out validation: the recording is cut into alternating blocks of SECONDS (default 10); the calibration fitted on the even blocks must not make the odd blocks worse (by more than 2 %, consistently) than the site as surveyed, or it is refused; without --truth it must also be shown better there (lower, consistently across the blocks), or nothing is written. 0 turns the validation off."),
            .flag("json", "Print the summary as one JSON object."),
        ],
        discussion: """
        With --truth, for every range row with truth at its time: e = r − ‖p_truth(t) − aᵢ‖. Per locator
        the bias b̂ᵢ is the robust M-estimate of e (or its median), σ̂ᵢ = 1.4826·MAD of the residuals.
        Without --truth: a bundle adjustment fits every epoch's tag position and the locators' biases
        (and scales with --slope) to the ranges alone, with robust weights; it reports each bias ± 1σ,
        the range noise, whether the recording determines it (a locator heard rarely or left loose keeps
        its value, with a warning naming it; a common offset the geometry does not separate is said, the
        biases then relative; a collinear tag path calibrates nothing), and checks each locator's
        surveyed position: one the data put away from it beyond the noise is flagged ("fits 0.500 ± 0.012 m
        from its surveyed position: surveyed (20.000, 0.000), fitted (19.700, 0.400) m (Δx -0.300, Δy
        +0.400 m)"). Rows whose tag is a locator's address and that range
        from a fixed place are used as ranges between locators. On a floor whose rows are range
        differences only, the same adjustment runs on the differences (a nuisance offset per blink): it
        reports the biases relative (their mean held at the site's), the noise σ per arrival, and for
        each locator whether the recording can check its surveyed position ("checkable (± 0.006 m
        along (1.00, 0.04), …)" or "not checkable"), flagging one only where it is checkable. The
        method and the figures on real data are in docs/calibration.md.
        Held-out validation: the calibration is first fitted on the recording's even blocks of
        --holdout-block seconds, and the site as surveyed and the calibrated site are scored on the
        odd blocks — with --truth by the horizontal RMSE of the engine's fixes (locus replay's
        defaults) against truth, without by the median absolute leave-one-out range residual (each
        range predicted from the position solved from the others of its round; for range
        differences each arrival of a blink predicted from the others, the blink's offset
        eliminated, which needs blinks of 5 locators planar, 6 spatial). The report says
        "calibrated vs as surveyed on held-out blocks: X → Y". A calibration worse by more than
        2 %, consistently across the held-out blocks (mean per-block change above 2 standard
        errors), is refused: nothing is written (exit 1 when --out was given, 0 otherwise). Without
        --truth a calibration must also be shown better: lower on the held-out blocks, and the
        per-block differences (m) more than 2 standard errors below 0; otherwise it is "not shown
        better" (refused "unproven") and, the same way, nothing is written. With
        --fix-positions a locator is moved only when the move beats the biases alone by more than
        2 % on the held-out blocks and, without truth, the other half of the recording makes the
        same move; otherwise it stays where it was surveyed and the biases alone are judged. Too
        little held-out data (fewer than 2 held-out blocks, or 100 fixes/ranges scored) is said and
        does not block the biases (moves are then not made) — except from range differences whose
        blinks leave no arrival to predict (4 locators planar, 5 in 3-D): without truth those are not
        written. --json: "validation" {blocks,
        block_s, held_out_rows, metric, surveyed, calibrated, change, block_change,
        block_difference_m, positions, accepted, refused, reason, written, …}; --holdout-block 0: null.
        Exit codes: 0 success, 1 failure at run time (e.g. an unwritable --out, or an --out the
        held-out validation refused), 2 usage error or
        invalid input (including no row with truth, or a slope the samples do not determine).
        """)

    /// Parses the options into a `CalibrationJob`, runs it, prints the summary.
    /// - Throws: as `CalibrationJob.run`, and E1001 for a malformed option.
    static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32 {
        let minimumSamples = arguments.string("min-samples") == nil ? nil : try arguments.integer("min-samples", default: 10, in: 1...Int.max)
        let job = CalibrationJob(
            sitePath: arguments.string("site") ?? "", tracePath: arguments.string("trace") ?? "",
            truthPath: arguments.string("truth"), outPath: arguments.string("out"),
            defaultFloor: arguments.string("floor").map { FloorID($0) },
            estimator: arguments.string("estimator").map { RangeCalibrationConfiguration.Estimator(rawValue: $0) ?? .tukey },
            fitsSlope: arguments.flag("slope"),
            height: CalibrationJob.HeightSource(rawValue: arguments.string("height") ?? "auto") ?? .auto,
            minimumSamples: minimumSamples, fixesPositions: arguments.flag("fix-positions"),
            holdoutBlockSeconds: try arguments.double("holdout-block", default: HoldoutBlocks.defaultBlockSeconds, in: 0...86_400))
        let started = Date()
        var outcome = try job.run(say: console.err)
        outcome.summary?.recordElapsed(Date().timeIntervalSince(started))
        if let summary = outcome.summary {
            console.out(arguments.flag("json") ? JSONWriter(style: .compact).string(summary.json) + "\n" : summary.text)
        }
        outcome.verdict.forEach(console.err)
        return outcome.status
    }
}
