import LocusCore

/// A bundle adjustment the survey check's loop runs on (`SelfCalibration.surveyCheck`): the test of
/// one locator (`SurveyTestable`), which parameters are free, the directions of a correction held at
/// the survey, and its solve.
protocol SurveyCheckable: SurveyTestable {
    /// Which parameters are free, and the directions (locator, unit vector) along which a locator's
    /// correction δ is held at 0 (`heldOffsetDirections`, a 1 mm pseudo-observation v·δ = 0): the
    /// directions of a flagged locator that are not checkable.
    var parameters: SelfCalibrationParameters { get set }
    mutating func solve(limit: Int) throws(LocusError)
    /// The largest change of a global parameter, and of the tag positions, in the last step (metres;
    /// `SelfCalibration.solveToConvergence` judges divergence by it).
    var lastMove: (parameters: Double, positions: Double) { get }
    /// Before the flagged locators' fit to convergence (differences: the scales restarted from their median).
    mutating func prepareFinalSurveyFit()
}

/// What the survey check found, per locator.
struct SurveyCheckOutcome {
    var checks: [SelfCalibrationPositionCheck?]
    var offsets: [Vector3?]
    var offsetSDs: [Double?]
    var flagged: [Bool]
}

extension SelfCalibration {
    /// The survey check on `solver` (ranges or differences, one loop): each locator with a free bias
    /// in turn gets its correction δ freed for `surveyTrialSteps` steps and judged by the block test
    /// (`surveyTest`); of the flagged ones, the one whose freed δ lowers the fit's weighted squares most
    /// (δᵀF⁻¹δ, F the formal covariance: the likelihood's verdict on which single locator explains the
    /// residuals, not the p-values, whose effective degrees of freedom differ between locators) keeps its
    /// correction and the others are checked again, at most `maximumFlagged` in all (n − 3 from
    /// ranges, n − D − 2 from differences: the unflagged locators hold the frame and each epoch).
    ///
    /// **What a flagged locator is moved by.** Only along its checkable directions: along a direction
    /// whose honest σ exceeds `surveyCheckableSDMeters` the fitted component is not determined (along
    /// the tags' lines of sight it trades against the bias — a corner displaced 0.3 m along one wall
    /// fitted anything from 0.03 to 0.27 m wrong there), so δ is held at 0 along it (the locator stays
    /// as surveyed in that direction and its bias takes the rest) and the fitted component is reported,
    /// with its σ, as left as surveyed (`SelfCalibrationPositionCheck.remainder`). The flagged
    /// locators' corrections are then fitted to convergence; `solver` ends with them.
    /// - Parameters:
    ///   - notes: per locator; a flagged locator's note is written (where it fits, what was moved, what left).
    /// - Throws: `E4002` when LAPACK fails.
    static func surveyCheck<S: SurveyCheckable>(_ solver: inout S, floor: Floor, planar: Bool, maximumFlagged: Int,
                                                notes: inout [String?]) throws(LocusError) -> SurveyCheckOutcome {
        let n = floor.locators.count, configuration = solver.configuration
        var out = SurveyCheckOutcome(checks: Array(repeating: nil, count: n), offsets: Array(repeating: nil, count: n),
                                     offsetSDs: Array(repeating: nil, count: n), flagged: Array(repeating: false, count: n))
        // One pass at least (every locator's check is reported; with `maximumFlagged` 0 the redundancy
        // rule leaves none checkable: n ≤ D + 1 from ranges, n ≤ D + 2 from differences).
        var passes = 0
        while passes == 0 || out.flagged.filter({ $0 }).count < maximumFlagged {
            passes += 1
            var best: (locator: Int, gain: Double, solver: S)?
            for k in 0..<n where solver.parameters.freeBias[k] && !out.flagged[k] {
                var trial = solver
                trial.parameters.freeOffset[k] = true
                try trial.solve(limit: configuration.surveyTrialSteps)
                let check = try trial.surveyTest(locator: k)
                out.checks[k] = check
                out.offsets[k] = Vector3(x: trial.parameters.offset[3 * k], y: trial.parameters.offset[3 * k + 1], z: trial.parameters.offset[3 * k + 2])
                out.offsetSDs[k] = check.sdMeters.last
                guard let test = check.test, test.flagged else { continue }
                if best.map({ test.formalGain > $0.gain }) ?? true { best = (k, test.formalGain, trial) }
            }
            guard let found = best, out.flagged.filter({ $0 }).count < maximumFlagged else { break }
            let k = found.locator
            out.flagged[k] = true
            solver = found.solver
            // The directions that are not checkable: held at the survey, their fitted share reported.
            if var check = out.checks[k], let d = out.offsets[k] {
                var remainder: [SelfCalibrationPositionCheck.Remainder] = []
                for (v, sd) in zip(check.directions, check.sdMeters) where !(sd <= check.thresholdMeters) {
                    solver.parameters.heldOffsetDirections.append((k, v))
                    remainder.append(.init(direction: v, fittedMeters: v.x * d.x + v.y * d.y + v.z * d.z, sdMeters: sd))
                }
                check.remainder = remainder
                out.checks[k] = check
            }
        }
        guard out.flagged.contains(true) else { return out }
        // The flagged locators' corrections fitted to convergence (each trial took a few steps), held
        // along their directions that are not checkable.
        solver.prepareFinalSurveyFit()
        try solver.solve(limit: configuration.maximumIterations)
        func metres(_ v: Double) -> String { Self.metres(v) }
        func signed(_ v: Double) -> String { (v >= 0 ? "+" : "") + metres(v) }
        func place(_ v: Point3) -> String {
            planar ? "(\(metres(v.x)), \(metres(v.y)))" : "(\(metres(v.x)), \(metres(v.y)), \(metres(v.z)))"
        }
        for k in 0..<n where out.flagged[k] {
            let d = Vector3(x: solver.parameters.offset[3 * k], y: solver.parameters.offset[3 * k + 1], z: solver.parameters.offset[3 * k + 2])
            out.offsets[k] = d
            let length = (d.x * d.x + d.y * d.y + d.z * d.z).squareRoot()
            // Both places, and the offset as signed components: an offset printed as a bare "(x, y)"
            // reads as a position.
            let p = floor.locators[k].position
            let q = Point3(x: p.x + d.x, y: p.y + d.y, z: p.z + d.z)
            let offset = "Δx \(signed(d.x)), Δy \(signed(d.y))" + (planar ? "" : ", Δz \(signed(d.z))")
            let held = !(out.checks[k]?.remainder?.isEmpty ?? true)
            notes[k] = "fits \(metres(length)) m from its surveyed position\(held ? " along its checkable directions" : ""): "
                + "surveyed \(place(p)), fitted \(place(q)) m (\(offset) m); position \(out.checks[k]?.summary ?? "")"
        }
        return out
    }
}

extension SelfCalibrationSolver: SurveyCheckable {
    mutating func prepareFinalSurveyFit() {}
}

extension DifferenceSelfCalibrationSolver: SurveyCheckable {
    var surveyEpochCount: Int { data.blinkCount }
    func surveyEpochTime(_ j: Int) -> Double { data.blinkTimes[j] }
    func surveyEpochPlace(_ j: Int) -> (x: Double, y: Double) { (positions[3 * j], positions[3 * j + 1]) }
    func surveyEpoch(_ j: Int, hears k: Int) -> (count: Int, hears: Bool) {
        let range = data.blinkStarts[j]..<data.blinkStarts[j + 1]
        return (range.count, range.contains { data.slots[$0] == k })
    }
    var surveyEpochUnknowns: Int { dimensions + 1 }
    var surveyEpochWord: String { "blinks" }
    func surveySystem(locator k: Int, blockOf: [Int], blockCount: Int)
        -> (s: [Double], count: Int, offsetColumns: [Int], blockRHS: [[Double]], blockS: [[Double]]) {
        let (s, _, columns, blockRHS, blockS) = reducedSystem(blockOf: blockOf, blockCount: blockCount)
        return (s, columns.list.count, (0..<dimensions).map { columns.offset[3 * k + $0] }, blockRHS, blockS)
    }
    /// The scales restarted from their median (a wrong model's shrunken scale is not carried on).
    mutating func prepareFinalSurveyFit() { resetScales() }
}
