import LocusCore
import LocusNumerics

/// Each locator's bias, its noise σ per arrival and a check of its surveyed position from range
/// differences (TDoA) alone: the bundle adjustment of `DifferenceSelfCalibrationSolver` over the
/// recording's blinks, in the report of `SelfCalibration` (`measurement` = `.differences`).
///
/// **What is identifiable.** A difference sees b_B − b_A: a bias common to every locator moves
/// into every blink's offset τⱼ and is never observable. The gauge: the mean of the estimated biases
/// is held at the site's (`commonOffsetSeparable` false, said in a warning). Each bias relative to
/// the others is estimated with its σ; one the recording leaves looser than `observableSDMeters`
/// keeps the site's value. A locator's position correction δᵢ (its clock offset bᵢ playing the
/// range bias's part) is judged by the range version's survey check, one implementation
/// (`SelfCalibration.surveyCheck`, `surveyTest`: which directions a blink's offset and a reference
/// leave observable is said there): checkable where the honest σ from the blinks' time blocks is ≤
/// `surveyCheckableSDMeters`, flagged on Hotelling's T² there (p < `surveyAlpha` and ≥
/// `surveyMinimumEffectMeters`), "not checkable" when the other arrivals do not over-determine a
/// blink (D + 2 of them) in half its blinks; a flagged locator is moved along its checkable
/// directions only.
enum DifferenceSelfCalibration {
    /// Calibrates `floor`'s locators from `data` (slots index `floor.locators`).
    /// - Parameter planar: positions in x, y at the floor's tag height (else x, y, z).
    /// - Throws: `E4001` (tooFewRanges) when fewer than D + 2 locators (4 planar, 5 spatial) have
    ///   `minimumRanges` arrivals, or fewer than 10 blinks hold more than D + 1 arrivals; `E4004`
    ///   when the adjustment diverges (`SelfCalibration.solveToConvergence`); `E4002` when LAPACK fails.
    static func estimate(floor: Floor, data: DifferenceSelfCalibrationData, planar: Bool,
                         configuration: SelfCalibrationConfiguration = .standard) throws(LocusError) -> SelfCalibration {
        let n = floor.locators.count, dims = planar ? 2 : 3
        var solver = DifferenceSelfCalibrationSolver(data: data, anchors: floor.locators.map(\.position), planar: planar,
                                                     tagHeight: floor.tagHeightMeters, initialBias: floor.locators.map(\.biasMeters),
                                                     configuration: configuration)
        var counts = [Int](repeating: 0, count: n)
        for slot in data.slots { counts[slot] += 1 }
        let heard = counts.filter { $0 >= configuration.minimumRanges }.count
        guard heard >= dims + 2 else {
            throw LocusError(.tooFewRanges, "\(heard) locators are heard in \(configuration.minimumRanges) or more arrivals: calibrating "
                             + "from range differences needs at least \(dims + 2) (\(planar ? "planar" : "spatial"): the tag's "
                             + "\(dims) coordinates, the blink's offset and one arrival more)")
        }
        let usable = (0..<data.blinkCount).filter(solver.isUsable)
        guard usable.count >= 10 else {
            throw LocusError(.tooFewRanges, "\(usable.count) blinks hold more than \(dims + 1) arrivals (\(dims) differences): "
                             + "at least 10 are needed to calibrate from range differences without truth")
        }
        var notes = [String?](repeating: nil, count: n)
        var warnings: [String] = []
        for i in 0..<n where counts[i] < configuration.minimumRanges {
            solver.parameters.freeBias[i] = false
            notes[i] = "heard in \(counts[i]) arrivals (fewer than \(configuration.minimumRanges)): its bias is kept"
        }
        // The gauge: only differences of biases are observable.
        let free = (0..<n).filter { solver.parameters.freeBias[$0] }
        let siteMean = free.reduce(0.0) { $0 + floor.locators[$1].biasMeters } / Double(free.count)
        solver.parameters.meanBiasPrior = siteMean
        warnings.append("from range differences only differences of biases are observable: the biases are relative, their mean "
                        + "held at the site's (\(SelfCalibration.metres(siteMean)) m)")
        try SelfCalibration.solveToConvergence(&solver)
        let spread = SelfCalibrationSolver.pathSpread(positions: solver.positions, epochs: usable)
        if spread.minor < configuration.collinearSpreadMeters {
            warnings.append("the tag path is nearly collinear (\(SelfCalibration.metres(spread.minor)) m across, "
                            + "\(SelfCalibration.metres(spread.major)) m along): walk across the floor for a sturdier calibration")
        }
        var uncertainty = try uncertainty(of: solver)
        var refit = false
        for i in free {
            let sd = uncertainty.standardDeviation([(.bias(i), 1)])
            guard sd > configuration.observableSDMeters else { continue }
            solver.parameters.freeBias[i] = false
            solver.parameters.bias[i] = floor.locators[i].biasMeters
            notes[i] = "its bias is not determined by this recording (σ " + (sd.isFinite ? "\(SelfCalibration.metres(sd)) m" : "unbounded") + "): kept"
            refit = true
        }
        if refit {
            let kept = (0..<n).filter { solver.parameters.freeBias[$0] }
            solver.parameters.meanBiasPrior = kept.isEmpty ? nil : kept.reduce(0.0) { $0 + floor.locators[$1].biasMeters } / Double(kept.count)
            try SelfCalibration.solveToConvergence(&solver)
            uncertainty = try Self.uncertainty(of: solver)
        }

        // Survey check, one locator at a time on its checkable directions: the block test of the range
        // version (`SelfCalibration.surveyCheck`, `surveyTest`), the blink's offset among its unknowns.
        var checks = [SelfCalibrationPositionCheck?](repeating: nil, count: n)
        var offsets = [Vector3?](repeating: nil, count: n), offsetSDs = [Double?](repeating: nil, count: n)
        var flagged = [Bool](repeating: false, count: n)
        let surveyed = solver
        if configuration.checksSurvey {
            // At most n − (D + 2) flagged: the unflagged locators hold the frame and each blink.
            let outcome = try SelfCalibration.surveyCheck(&solver, floor: floor, planar: planar, maximumFlagged: max(0, n - dims - 2),
                                                          notes: &notes)
            (checks, offsets, offsetSDs, flagged) = (outcome.checks, outcome.offsets, outcome.offsetSDs, outcome.flagged)
            for k in 0..<n where !solver.parameters.freeBias[k] && counts[k] > 0 {
                checks[k] = SelfCalibrationPositionCheck(directions: [], sdMeters: [], thresholdMeters: configuration.surveyCheckableSDMeters)
            }
            for k in 0..<n where !flagged[k] {
                if let c = checks[k], !c.checkable, notes[k] == nil { notes[k] = "its surveyed position is \(c.summary)" }
            }
            // The biases for the positions as surveyed, unless the corrections are to be written (then
            // those fitted with the flagged locators' corrections, the scales restarted from their median).
            if !configuration.fixesPositions { solver = surveyed }
            uncertainty = try Self.uncertainty(of: solver)
        }

        var figures = (counts: [Int](repeating: 0, count: n), rms: 0.0, outliers: 0)
        var sum = 0.0, kept = 0
        for j in usable {
            for m in data.blinkStarts[j]..<data.blinkStarts[j + 1] {
                let i = data.slots[m]
                figures.counts[i] += 1
                let e = solver.residual(m, blink: j)
                if abs(e / solver.sigma[i]) < configuration.tukeyThreshold { sum += e * e; kept += 1 } else { figures.outliers += 1 }
            }
        }
        figures.rms = kept > 0 ? (sum / Double(kept)).squareRoot() : 0
        let estimated = (0..<n).filter { solver.parameters.freeBias[$0] }
        let meanSD = uncertainty.standardDeviation(estimated.map { (.bias($0), 1 / Double(max(1, estimated.count))) })
        let locators = (0..<n).map { i -> SelfCalibratedLocator in
            let fitted = solver.parameters.freeBias[i]
            return SelfCalibratedLocator(
                address: floor.locators[i].address, rangeCount: figures.counts[i], biasMeters: fitted ? solver.parameters.bias[i] : nil,
                biasSDMeters: fitted ? uncertainty.standardDeviation([(.bias(i), 1)]) : nil, slope: nil, slopeSD: nil,
                noiseMeters: figures.counts[i] > 0 ? solver.sigma[i] : nil, isObservable: fitted,
                positionOffset: offsets[i], positionOffsetSDMeters: offsetSDs[i], isFlagged: flagged[i], note: notes[i],
                positionCheck: checks[i])
        }
        return SelfCalibration(floor: floor.id, locators: locators, commonOffsetSeparable: false, commonOffsetSDMeters: meanSD,
                               residualRMSMeters: figures.rms, outlierCount: figures.outliers, epochs: usable.count,
                               iterations: solver.iterations, pathSpreadMeters: spread, tagDelayMeters: nil, warnings: warnings,
                               configuration: configuration, measurement: .differences, differenceCount: data.differenceCount)
    }

    /// The covariance of the solver's free parameters (`SelfCalibrationSolver.Uncertainty`).
    static func uncertainty(of solver: DifferenceSelfCalibrationSolver) throws(LocusError) -> SelfCalibrationSolver.Uncertainty {
        let (s, _, columns) = solver.reducedSystem()
        let eigen = try SymmetricEigen(columns.list.isEmpty ? [0] : s, size: max(1, columns.list.count))
        return SelfCalibrationSolver.Uncertainty(parameters: columns.list, eigen: eigen, threshold: solver.configuration.rankThreshold)
    }

}
