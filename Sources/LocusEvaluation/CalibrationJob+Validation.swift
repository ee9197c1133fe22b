import Locus
import LocusCore
import LocusIO
import LocusNumerics
import LocusSolvers

/// The held-out validation of `locus calibrate` (`CalibrationValidation`): the recording cut into
/// alternating blocks (`HoldoutBlocks`), the calibration fitted on the even blocks by the same code
/// as the whole recording's, the site as surveyed and the calibrated site scored on the odd blocks.
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

    /// Per held-out block with at least 10 items in both, the figures (surveyed, candidate):
    /// `figure` of each block's values (RMSE, or the median).
    static func blockFigures(_ surveyed: [(t: Double, value: Double)], _ candidate: [(t: Double, value: Double)],
                             split: HoldoutBlocks, figure: ([Double]) -> Double) -> [(Double, Double)] {
        func grouped(_ items: [(t: Double, value: Double)]) -> [Int: [Double]] {
            var out: [Int: [Double]] = [:]
            for item in items { out[split.block(of: item.t), default: []].append(item.value) }
            return out
        }
        let a = grouped(surveyed), b = grouped(candidate)
        return a.keys.sorted().compactMap { k in
            guard let x = a[k], let y = b[k], x.count >= 10, y.count >= 10 else { return nil }
            return (figure(x), figure(y))
        }
    }

    /// √(Σe²/n).
    static func rootMeanSquare(_ values: [Double]) -> Double { (values.reduce(0) { $0 + $1 * $1 } / Double(values.count)).squareRoot() }

    /// With truth: the calibration fitted on the fit blocks; both sites replayed on the held-out
    /// blocks; the RMSE against truth judged. Never throws: what fails is "not judged", with the reason.
    func validateWithTruth(trace: RangeTrace, truth: GroundTruth, site input: Site, defaultFloor: Int,
                           configuration: RangeCalibrationConfiguration) -> CalibrationValidation {
        let split = HoldoutBlocks(trace: trace, blockSeconds: holdoutBlockSeconds)
        var v = CalibrationValidation(blocks: split, metric: .rmse)
        guard split.heldOutBlocks >= CalibrationValidation.minimumHeldOutBlocks else {
            v.notJudged(Self.tooShort(split))
            return v
        }
        do {
            let fitted = try fitWithTruth(trace: split.fit, truth: truth, site: input, defaultFloor: defaultFloor,
                                          configuration: configuration, say: { _ in })
            guard !fitted.results.isEmpty else {
                v.notJudged("no row of the fit blocks has truth at its time")
                return v
            }
            let (before, beforeErrors) = try heldOutAccuracy(site: input, trace: split.heldOut, truth: truth)
            let (after, afterErrors) = try heldOutAccuracy(site: fitted.site, trace: split.heldOut, truth: truth)
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
                    blocks: Self.blockFigures(beforeErrors, afterErrors, split: split, figure: Self.rootMeanSquare))
        } catch {
            v.notJudged("the fit blocks alone do not calibrate: \(error.message)")
        }
        return v
    }

    /// Without truth: the bundle adjustment on the fit blocks (with `--fix-positions` with the moves
    /// it makes and without them), each candidate's median leave-one-out range residual on the
    /// held-out blocks judged against the site as surveyed; with moves, the other fold too (fitted on
    /// the held-out blocks, scored on the fit blocks): a move must be reproducible. A floor whose rows
    /// are range differences only is scored by its arrivals' leave-one-out residuals (the blink's
    /// offset eliminated per left-out arrival, `scoreDifferences`); a floor with both kinds is
    /// calibrated, and scored, by its ranges. The bundle adjustment's settings are the job's
    /// (`fitsSlope`, `minimumSamples`, `fixesPositions`). Never throws.
    func validateWithoutTruth(trace: RangeTrace, site input: Site, defaultFloor: Int) -> CalibrationValidation {
        let split = HoldoutBlocks(trace: trace, blockSeconds: holdoutBlockSeconds)
        let fitData = Self.selfCalibrationData(trace: split.fit, site: input, defaultFloor: defaultFloor).data
        let heldData = Self.selfCalibrationData(trace: split.heldOut, site: input, defaultFloor: defaultFloor).data
        /// Floors calibrated by their ranges, and floors of range differences only (either half).
        let ranged = input.floors.indices.filter { fitData[$0].rangeCount > 0 || heldData[$0].rangeCount > 0 }
        let differenced = input.floors.indices.filter { !ranged.contains($0) && (fitData[$0].differenceCount > 0 || heldData[$0].differenceCount > 0) }
        let measured = ranged + differenced
        /// Whether floor `f` of `data` holds what it is calibrated and scored by: its ranges on a
        /// floor with ranges, its differences on the others.
        func holdsMeasurements(_ f: Int, _ data: [SelfCalibrationData]) -> Bool {
            ranged.contains(f) ? data[f].rangeCount > 0 : data[f].differenceCount > 0
        }
        guard !measured.isEmpty else {
            var v = CalibrationValidation(blocks: split, metric: nil)
            v.notJudged("no usable range row")
            return v
        }
        var v = CalibrationValidation(blocks: split, metric: .medianAbsoluteResidual)
        if ranged.isEmpty { v.residualNoun = "arrival" }
        guard split.heldOutBlocks >= CalibrationValidation.minimumHeldOutBlocks else {
            v.notJudged(Self.tooShort(split))
            return v
        }
        let solver = EngineConfiguration(scoringOptions).solver
        /// The median leave-one-out residual of `site` on `data` (per floor: ranges, or range differences).
        func score(_ site: Site, on data: [SelfCalibrationData]) -> LeaveOneOutRangeResiduals {
            var residuals = LeaveOneOutRangeResiduals()
            for f in measured where holdsMeasurements(f, data) { residuals.score(floor: site.floors[f], data: data[f], configuration: solver) }
            return residuals
        }
        let before = score(input, on: heldData)
        v.scored = before.count
        guard before.count >= CalibrationValidation.minimumScored, let reference = before.medianAbsoluteMeters else {
            if before.count == 0, ranged.contains(where: { heldData[$0].rangeCount > 0 }) {
                // Epochs of one redundant range at most (4 locators in 3-D, 3 in 2-D): no range is
                // predicted by the others, so nothing truth-free judges the site (docs/calibration.md,
                // "Four locators in 3-D": on the Hanyang runs 2 of the 3 written were worse).
                v.notJudged("not enough held-out data: no held-out epoch holds two ranges more than the tag has coordinates "
                            + "(4 locators in 3-D, 3 in 2-D), so no range is predicted by the others and nothing here tells "
                            + "whether the calibrated site is better; check it with --truth before relying on it")
            } else if before.count == 0, differenced.contains(where: { heldData[$0].differenceCount > 0 }) {
                // Blinks of one redundant arrival at most (4 locators in 2-D, 5 in 3-D): nothing held
                // out is predicted, and such a fit trades the biases against the tag's path — the
                // Bielefeld walks' ranges as differences calibrate 0.169 → 0.306 m and 0.146 → 0.339 m
                // against truth; simulated, 1–5 % better or 16 % worse. Unlike ranges (4 locators in
                // 3-D: 72 simulated runs better, none worse), it is not written.
                v.unprovable("no held-out blink holds two arrivals more than the tag has coordinates and the blink an offset "
                             + "(6 locators in 3-D, 5 in 2-D), so no arrival is predicted by the others; from range differences such a "
                             + "fit trades the biases against the tag's path, and without truth it must be shown better: calibrate with --truth")
            } else {
                v.notJudged("not enough held-out data: \(plural(before.count, "range")) predicted on the held-out blocks, "
                            + "\(CalibrationValidation.minimumScored) needed")
            }
            return v
        }
        /// The calibration fitted on `data`: the site, and the locators it moved.
        func fit(moving: Bool, on data: [SelfCalibrationData]) throws(LocusError) -> (site: Site, moved: [String]) {
            let c = SelfCalibrationConfiguration(fitsSlope: fitsSlope, minimumRanges: minimumSamples ?? 50, fixesPositions: moving)
            var site = input, moved: [String] = []
            for f in measured where holdsMeasurements(f, data) {
                let floor = input.floors[f]
                let planar = TrilaterationConfiguration.standard.resolvedMode(for: floor.locators.map(\.position)) == .planar
                let calibration = try SelfCalibration.estimate(floor: floor, data: data[f], planar: planar, configuration: c)
                site.floors[f] = calibration.applied(to: floor)
                if moving { moved += calibration.locators.filter(\.isFlagged).map { $0.address.description } }
            }
            return (site, moved)
        }
        do {
            var biasesOnly: Site?
            if fixesPositions {
                let candidate = try fit(moving: true, on: fitData)
                if candidate.moved.isEmpty {
                    biasesOnly = candidate.site
                } else {
                    v.moved = candidate.moved
                    v.withMoves = score(candidate.site, on: heldData).medianAbsoluteMeters
                    // The other fold: fitted on the held-out blocks, scored on the fit blocks. A move
                    // is reproducible when that fit moves the same locators and they beat its biases
                    // alone there too.
                    let reverse = try fit(moving: true, on: heldData)
                    let reverseBiases = try fit(moving: false, on: heldData).site
                    if Set(reverse.moved) == Set(candidate.moved), let m = score(reverse.site, on: fitData).medianAbsoluteMeters,
                       let b = score(reverseBiases, on: fitData).medianAbsoluteMeters {
                        v.movesReproduced = m <= b * (1 - CalibrationValidation.tolerance)
                    } else {
                        v.movesReproduced = false
                    }
                    v.reverseMoved = reverse.moved
                }
            }
            let site: Site
            if let biasesOnly { site = biasesOnly } else { site = try fit(moving: false, on: fitData).site }
            let scored = score(site, on: heldData)
            guard let calibrated = scored.medianAbsoluteMeters else {
                v.notJudged("the calibrated site predicts no held-out range")
                return v
            }
            func items(_ r: LeaveOneOutRangeResiduals) -> [(t: Double, value: Double)] {
                zip(r.timesSeconds, r.absoluteMeters).map { ($0, $1) }
            }
            v.judge(surveyed: reference, calibrated: calibrated,
                    blocks: Self.blockFigures(items(before), items(scored), split: split, figure: RobustStatistics.median))
        } catch {
            v.notJudged("the fit blocks alone do not calibrate: \(error.message)")
        }
        return v
    }

    /// The reason for a recording too short for two held-out blocks.
    private static func tooShort(_ split: HoldoutBlocks) -> String {
        "not enough held-out data: \(plural(split.heldOutBlocks, "held-out block")) with rows "
            + "(\(CalibrationValidation.minimumHeldOutBlocks) needed; the recording spans \(plural(split.blocks, "block")) "
            + "of \(DecimalText.string(split.blockSeconds, decimals: 1)) s)"
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
