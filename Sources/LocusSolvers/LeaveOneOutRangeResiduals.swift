import LocusCore
import LocusNumerics

/// The held-out figure of `locus calibrate` without truth: how well a site (its locator positions,
/// `biasM` and `biasSlope`) predicts ranges it was not given.
///
/// For each epoch of `data` (one tag, one round of ranging, `SelfCalibrationData`) with m ranges and
/// each range k in it, the tag is solved from the other m − 1 ranges by the engine's own solver
/// (`Trilaterator`: weighted least squares with NLOS rejection, planar at the floor's `tagHeightM`
/// or spatial as the engine chooses), and the left-out range is predicted from that position:
///
///   eₖ = dₖ − ‖p̂₋ₖ − aₖ‖,   dₖ = `Locator.correctedRange(rₖ)` = (rₖ − bₖ)/(1 + sₖ),
///
/// metres. An epoch is scored when m − 1 ≥ D + 1 (D = 2 planar, 3 spatial): the position from the
/// others is itself over-determined, so the solver can still reject one NLOS range among them. A
/// solve that fails (degenerate geometry) scores nothing. The figure is the median of |eₖ| over
/// every scored range (`medianAbsoluteMeters`): a cross-validated prediction error, not an in-sample
/// residual — a wrong bias bₖ shifts eₖ by the error itself, a locator in the wrong place shifts it
/// by the projection of its error on the line of sight, and neither can be absorbed by the position,
/// which never saw range k. The median keeps the NLOS ranges (long by 0.3–2 m, a minority) from
/// deciding it.
package struct LeaveOneOutRangeResiduals: Sendable {
    /// |eₖ| per scored range, metres, in epoch order, and the time of each left-out range, seconds.
    package var absoluteMeters: [Double] = []
    package var timesSeconds: [Double] = []

    /// No ranges scored.
    package init() {}

    /// Ranges scored.
    package var count: Int { absoluteMeters.count }

    /// The median of |eₖ|, metres; nil when nothing was scored.
    package var medianAbsoluteMeters: Double? {
        absoluteMeters.isEmpty ? nil : RobustStatistics.median(absoluteMeters)
    }

    /// Scores `floor` (the site under test: positions, biases, scales) on `data`, whose slots index
    /// `floor.locators`; appends to the figures so far (several floors add up).
    /// - Parameter configuration: the engine's solver settings (σ₀, robustness); the tag height and
    ///   the mode are taken from `floor` as the engine does.
    package mutating func score(floor: Floor, data: SelfCalibrationData,
                                configuration: TrilaterationConfiguration = .standard) {
        var solverConfiguration = configuration
        solverConfiguration.tagHeightMeters = floor.tagHeightMeters
        let positions = floor.locators.map(\.position)
        solverConfiguration.mode = solverConfiguration.resolvedMode(for: positions)
        let dimensions = solverConfiguration.mode == .planar ? 2 : 3
        let solver = Trilaterator(configuration: solverConfiguration)
        var locators: [Point3] = [], ranges: [Double] = []
        for j in 0..<data.epochCount {
            let epoch = data.epochStarts[j]..<data.epochStarts[j + 1]
            guard epoch.count - 1 >= dimensions + 1 else { continue }
            for k in epoch {
                locators.removeAll(keepingCapacity: true)
                ranges.removeAll(keepingCapacity: true)
                for m in epoch where m != k {
                    let l = floor.locators[data.slots[m]]
                    locators.append(l.position)
                    ranges.append(l.correctedRange(data.rangesMeters[m]))
                }
                guard let solution = try? solver.solve(locators: locators, rangesMeters: ranges) else { continue }
                let left = floor.locators[data.slots[k]]
                let e = left.correctedRange(data.rangesMeters[k]) - RangeModel.predicted(from: solution.position, to: left.position)
                if e.isFinite {
                    absoluteMeters.append(abs(e))
                    timesSeconds.append(data.timesSeconds[k])
                }
            }
        }
    }
}
