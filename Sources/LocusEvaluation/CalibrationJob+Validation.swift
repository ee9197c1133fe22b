import Locus
import LocusCore
import LocusIO
import LocusSolvers

/// The held-out validation of `locus calibrate --truth` (`CalibrationValidation`): the recording cut into
/// alternating blocks (`HoldoutBlocks`), the calibration fitted on the even blocks by the same code
/// as the whole recording's, the site as surveyed and the calibrated site replayed on the odd blocks
/// and compared with truth. Without truth the validation is the library's (`SiteCalibration.calibrate`).
extension CalibrationJob {
    /// The engine's options for scoring: `locus replay`'s defaults (4 Hz, σ 0.1 m, the causal
    /// filter, the online tag offset on uncalibrated planar floors), with `--floor`.
    var scoringOptions: EngineOptions { EngineOptions(defaultFloor: defaultFloor) }

    /// The engine's fixes of `trace` on `site` (the engine of `locus replay`, `EngineDriver.replay`) compared
    /// with `truth` at their time: horizontal RMSE and median.
    /// - Throws: E3002 for an unknown default floor; the driver's errors.
    /// Also each compared fix's time and horizontal error (metres), for the per-block figures.
    func heldOutAccuracy(site: Site, trace: RangeTrace, truth: GroundTruth) throws(LocusError)
        -> (report: AccuracyReport, errors: [(t: Double, value: Double)]) {
        var driver = try EngineDriver(site: site, configuration: EngineConfiguration(scoringOptions))
        let output = try driver.replay(trace)
        var accumulator = AccuracyReport.Accumulator()
        var errors: [(t: Double, value: Double)] = []
        for fix in output.fixes {
            let p = truth.position(tag: fix.tag, at: fix.timeSeconds)
            accumulator.add(fix, truth: p)
            if let p {
                let dx = fix.position.x - p.x, dy = fix.position.y - p.y
                errors.append((fix.timeSeconds, (dx * dx + dy * dy).squareRoot()))
            }
        }
        return (accumulator.report, errors)
    }

    /// √(Σe²/n).
    static func rootMeanSquare(_ values: [Double]) -> Double { (values.reduce(0) { $0 + $1 * $1 } / Double(values.count)).squareRoot() }

    /// With truth: the calibration fitted on the fit blocks; both sites replayed on the held-out
    /// blocks; the RMSE against truth judged. Never throws: what fails is "not judged", with the reason.
    func validateWithTruth(trace: RangeTrace, truth: GroundTruth, site input: Site, defaultFloor: Int,
                           configuration: RangeCalibrationConfiguration) -> CalibrationValidation {
        let split = HoldoutBlocks(trace: trace, blockSeconds: holdoutBlockSeconds)
        let (fit, heldOut) = split.split(trace)
        var v = CalibrationValidation(blocks: split, fitRows: fit.rows.count, heldOutRows: heldOut.rows.count, metric: .rmse)
        guard split.heldOutBlocks >= CalibrationValidation.minimumHeldOutBlocks else {
            v.notJudged(CalibrationValidation.tooShort(split))
            return v
        }
        do {
            let fitted = try fitWithTruth(trace: fit, truth: truth, site: input, defaultFloor: defaultFloor,
                                          configuration: configuration, say: { _ in })
            guard !fitted.results.isEmpty else {
                v.notJudged("no row of the fit blocks has truth at its time")
                return v
            }
            let (before, beforeErrors) = try heldOutAccuracy(site: input, trace: heldOut, truth: truth)
            let (after, afterErrors) = try heldOutAccuracy(site: fitted.site, trace: heldOut, truth: truth)
            v.scored = before.compared
            guard min(before.compared, after.compared) >= CalibrationValidation.minimumScored,
                  let surveyed = before.measured, let calibrated = after.measured else {
                v.notJudged("not enough held-out data: \(plural(min(before.compared, after.compared), "fix", "fixes")) compared with truth "
                            + "on the held-out blocks, \(CalibrationValidation.minimumScored) needed")
                return v
            }
            v.surveyedMedian = surveyed.p50Meters
            v.calibratedMedian = calibrated.p50Meters
            v.judge(surveyed: surveyed.rmseMeters, calibrated: calibrated.rmseMeters,
                    blocks: CalibrationValidation.blockFigures(beforeErrors, afterErrors, split: split, figure: Self.rootMeanSquare))
        } catch {
            v.notJudged("the fit blocks alone do not calibrate: \(error.message)")
        }
        return v
    }

    /// Says what the validation refused or could not judge; the exit status it calls for: 1 when
    /// `outPath` was asked for and not written (a script must not go on with an old or missing
    /// file), else 0.
    static func refusalVerdict(_ v: CalibrationValidation, outPath: String?, say: (String) -> Void) -> Int32 {
        let prefix = "locus calibrate: "
        switch v.refused {
        case .calibration?, .unproven?:
            guard let out = outPath else {
                say(prefix + "warning: held-out validation: \(v.reason ?? "refused") — not worth writing\n")
                return 0
            }
            say(prefix + "error: held-out validation: \(v.reason ?? "refused"): \(out) not written "
                + "(written anyway without the validation: --holdout-block 0, LOCUS_CALIBRATE_NO_HOLDOUT in C, "
                + "holdout_block=0 in Python; docs/calibration.md)\n")
            return 1
        case .positions?:
            say(prefix + "warning: held-out validation: \(v.reason ?? "position moves refused")\n")
            return 0
        case nil:
            if !v.judged, v.metric != nil, let reason = v.reason {
                say(prefix + "warning: held-out validation not judged: \(reason); the calibration is not blocked\n")
            } else if v.judged, let reason = v.reason {
                say(prefix + "warning: held-out validation: \(reason)\n")
            }
            return 0
        }
    }
}
