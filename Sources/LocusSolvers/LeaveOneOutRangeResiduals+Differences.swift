import LocusCore
import LocusNumerics

/// The held-out figure of `locus calibrate` without truth on range differences (TDoA): how well a
/// site predicts an arrival it was not given.
///
/// A blink's n arrivals are pseudo-ranges (`DifferenceSelfCalibrationData`): yᵢ = ‖p − aᵢ‖ + bᵢ + τ + εᵢ,
/// the reference's y = 0, the others its differences, τ the blink's unknown offset, εᵢ independent.
/// For each arrival k the tag is solved from the other n − 1 by the engine's own difference solver
/// (`DifferenceSolver`: generalised least squares with NLOS rejection over locators; the others
/// re-referenced to the first of them, which is exact: a difference of pseudo-ranges), the offset
/// is taken from those arrivals at that position, τ̂ = mean over the arrivals the solver kept of
/// (yᵢ − bᵢ − ‖p̂ − aᵢ‖), and the left-out arrival is predicted:
///
///   eₖ = (yₖ − bₖ) − ‖p̂₋ₖ − aₖ‖ − τ̂₋ₖ,
///
/// metres. τ is eliminated per left-out arrival, so a wrong bias bₖ shifts eₖ by its error less the
/// mean error of the others' (only differences of biases are observable), and neither the position
/// nor the offset saw arrival k. A blink is scored when n − 1 ≥ D + 2 (D = 2 planar, 3 spatial: the
/// coordinates and τ, plus one arrival to spare for the solver to reject one NLOS arrival). Each
/// eₖ is timed at its blink. The figure is the median of |eₖ|, as for ranges (the two kinds add up
/// in one figure when a site has floors of each).
extension LeaveOneOutRangeResiduals {
    /// Scores `floor` (the site under test: positions and `biasM`; a scale does not apply to a
    /// difference) on the range differences of `data` (none: nothing scored); appends to the
    /// figures so far. `score(floor:data:configuration:)` calls it for data without ranges.
    /// - Parameter configuration: the engine's solver settings (σ, robustness); the tag height and
    ///   the mode are taken from `floor` as the engine does.
    mutating func scoreDifferences(floor: Floor, data: SelfCalibrationData, configuration: TrilaterationConfiguration) {
        guard let blinks = data.differences else { return }
        let (solverConfiguration, dimensions) = Self.settings(for: floor, configuration)
        let solver = DifferenceSolver(configuration: solverConfiguration)
        var workspace = DifferenceWorkspace()
        var locators: [Point3] = [], corrected: [Double] = [], pairs: [DifferencePair] = []
        Self.forEachLeftOut(groupStarts: blinks.blinkStarts, othersAtLeast: dimensions + 2) { j, blink, k in
            locators.removeAll(keepingCapacity: true)
            corrected.removeAll(keepingCapacity: true)
            pairs.removeAll(keepingCapacity: true)
            for m in blink where m != k {
                let l = floor.locators[blinks.slots[m]]
                locators.append(l.position)
                corrected.append(blinks.pseudoRangesMeters[m] - l.biasMeters)
            }
            let time = blinks.blinkTimes[j]
            for i in 1..<locators.count {
                pairs.append(DifferencePair(reference: 0, locator: i, differenceMeters: corrected[i] - corrected[0], timeSeconds: time))
            }
            guard let solution = try? solver.solve(locators: locators, pairs: pairs, workspace: &workspace) else { return }
            var offsetSum = 0.0, kept = 0
            for i in locators.indices where !solution.isRejected(index: i) {
                offsetSum += corrected[i] - RangeModel.predicted(from: solution.position, to: locators[i])
                kept += 1
            }
            guard kept > 0 else { return }
            let left = floor.locators[blinks.slots[k]]
            record((blinks.pseudoRangesMeters[k] - left.biasMeters) - RangeModel.predicted(from: solution.position, to: left.position)
                   - offsetSum / Double(kept), atSeconds: time)
        }
    }
}
