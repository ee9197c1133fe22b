import LocusCore
import LocusNumerics
import LocusSolvers

/// The calibration without truth judged on data it did not fit — one code path for
/// `SiteCalibration.withoutTruth` (the Swift API) and `locus calibrate` without `--truth`.
///
/// The recording is cut into alternating blocks of time (`HoldoutBlocks`); the bundle adjustment is
/// fitted on the even blocks (with `fixesPositions` with the moves it makes and without them), and
/// each candidate's median leave-one-out residual on the odd blocks is judged against the site as
/// surveyed (`CalibrationValidation`: it must not be worse, and without truth must be shown better).
/// A floor whose rows are range differences only is scored by its arrivals' leave-one-out residuals
/// (`LeaveOneOutRangeResiduals.score`); a floor with both kinds is calibrated, and scored, by its ranges.
extension SiteCalibration {
    /// The recording's halves for the held-out validation: the blocks, each floor's data of the fit
    /// (even) and held-out (odd) blocks, and the rows in each.
    package typealias Halves = (blocks: HoldoutBlocks, fit: [SelfCalibrationData], heldOut: [SelfCalibrationData],
                                fitRows: Int, heldOutRows: Int)

    /// Calibrates every floor of `input` that `data` (per floor, in the site's order) reaches, after
    /// the held-out validation on `halves` (none when nil): flagged locators are moved (with
    /// `options.fixesPositions`) only when the validation accepts the moves; a flag the held-out
    /// blocks do not confirm is refused as `.positions`, with the reason. The calibration is that of
    /// the whole recording; whether it may be used is `validation.accepted`.
    /// - Parameter solver: the trilateration of the scoring (the engine's, `EngineConfiguration.solver`).
    /// - Throws: E4001 when a floor has too few usable epochs; E4002 when LAPACK fails (the message
    ///   names the floor).
    package static func calibrate(site input: Site, data: [SelfCalibrationData], halves: Halves?,
                                  options: Options, solver: TrilaterationConfiguration)
        throws(LocusError) -> (floors: [(floor: Floor, calibration: SelfCalibration)], site: Site, validation: CalibrationValidation?, movedLocators: Bool) {
        let fixPositions = options.fixesPositions
        var validation = halves.map { validate(site: input, halves: $0, options: options, solver: solver) }
        // A move is made only when validated: one the held-out blocks cannot judge is not made (the
        // biases, which the validation does not block when it cannot judge, are still kept).
        let movesLocators = fixPositions && (validation.map(\.acceptsMoves) ?? true)
        let whole = options.configuration(moving: movesLocators)
        var site = input
        var results: [(floor: Floor, calibration: SelfCalibration)] = []
        for (f, floor) in input.floors.enumerated() where data[f].rangeCount > 0 || data[f].differenceCount > 0 {
            let calibration: SelfCalibration
            do {
                calibration = try estimate(floor, data[f], whole)
            } catch {
                throw LocusError(error.code, "floor '\(floor.id)': \(error.message)", context: error.context)
            }
            site.floors[f] = calibration.applied(to: floor)
            results.append((floor, calibration))
        }
        let flagged = results.flatMap { $0.calibration.locators.filter(\.isFlagged).map(\.address.description) }
        if var v = validation, fixPositions, v.refused == nil, !movesLocators, !flagged.isEmpty {
            // Flagged by the whole recording, never judged on held-out blocks: not moved.
            v.refused = .positions
            v.reason = (v.judged ? "the fit blocks alone flag none of \(flagged.joined(separator: ", "))"
                        : "the moves of \(flagged.joined(separator: ", ")) cannot be validated (\(v.reason ?? "not judged"))")
                + ": the locators stay where they were surveyed"
            validation = v
        }
        return (results, site, validation, movesLocators && !flagged.isEmpty)
    }

    /// The bundle adjustment of one floor, planar or spatial as the engine solves its locators.
    private static func estimate(_ floor: Floor, _ data: SelfCalibrationData, _ configuration: SelfCalibrationConfiguration)
        throws(LocusError) -> SelfCalibration {
        let planar = TrilaterationConfiguration.standard.resolvedMode(for: floor.locators.map(\.position)) == .planar
        return try SelfCalibration.estimate(floor: floor, data: data, planar: planar, configuration: configuration)
    }

    /// The held-out validation without truth (above). Never throws: what fails is "not judged", with the reason.
    static func validate(site input: Site, halves: Halves, options: Options,
                         solver: TrilaterationConfiguration) -> CalibrationValidation {
        let split = halves.blocks
        let fitData = halves.fit, heldData = halves.heldOut
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
            var v = CalibrationValidation(blocks: split, fitRows: halves.fitRows, heldOutRows: halves.heldOutRows, metric: nil)
            v.notJudged("no usable range row")
            return v
        }
        var v = CalibrationValidation(blocks: split, fitRows: halves.fitRows, heldOutRows: halves.heldOutRows, metric: .medianAbsoluteResidual)
        if ranged.isEmpty { v.residualNoun = "arrival" }
        // Too little held out to judge (a short recording): without truth the calibration must be
        // shown better, so it is unproven — libRSF's 30 s, written unjudged until 2026-12-07, read
        // 0.1419 → 0.1420 m against truth (0.1452 → 0.1490 at --rate 2).
        let unprovenReason = "; without truth a calibration must be shown better: record longer, or write it unjudged with "
            + "--holdout-block 0 (holdoutBlockSeconds nil in Swift)"
        guard split.heldOutBlocks >= CalibrationValidation.minimumHeldOutBlocks else {
            v.unprovable(CalibrationValidation.tooShort(split) + unprovenReason)
            return v
        }
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
                v.unprovable("not enough held-out data: \(plural(before.count, v.residualNoun)) predicted on the held-out blocks, "
                             + "\(CalibrationValidation.minimumScored) needed" + unprovenReason)
            }
            return v
        }
        /// The calibration fitted on `data`: the site, and the locators it moved.
        func fit(moving: Bool, on data: [SelfCalibrationData]) throws(LocusError) -> (site: Site, moved: [String]) {
            let c = options.configuration(moving: moving)
            var site = input, moved: [String] = []
            for f in measured where holdsMeasurements(f, data) {
                let calibration = try estimate(input.floors[f], data[f], c)
                site.floors[f] = calibration.applied(to: input.floors[f])
                if moving { moved += calibration.locators.filter(\.isFlagged).map { $0.address.description } }
            }
            return (site, moved)
        }
        do {
            var biasesOnly: Site?
            if options.fixesPositions {
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
                    blocks: CalibrationValidation.blockFigures(items(before), items(scored), split: split, figure: RobustStatistics.median))
        } catch {
            v.notJudged("the fit blocks alone do not calibrate: \(error.message)")
        }
        return v
    }
}

extension SiteCalibration.Options {
    /// The bundle adjustment's settings: these options, positions moved when `moving`.
    func configuration(moving: Bool) -> SelfCalibrationConfiguration {
        SelfCalibrationConfiguration(fitsSlope: fitsSlope, minimumRanges: minimumRanges, fixesPositions: moving)
    }
}

extension CalibrationValidation {
    /// Per held-out block with at least 10 items in both, the figures (surveyed, candidate):
    /// `figure` of each block's values (RMSE, or the median).
    package static func blockFigures(_ surveyed: [(t: Double, value: Double)], _ candidate: [(t: Double, value: Double)],
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

    /// The reason for a recording too short for two held-out blocks.
    package static func tooShort(_ split: HoldoutBlocks) -> String {
        "not enough held-out data: \(plural(split.heldOutBlocks, "held-out block")) with rows "
            + "(\(minimumHeldOutBlocks) needed; the recording spans \(plural(split.blocks, "block")) "
            + "of \(DecimalText.string(split.blockSeconds, decimals: 1)) s)"
    }
}
