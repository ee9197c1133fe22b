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
    /// `floor.locators`; appends to the figures so far (several floors add up). Data without ranges
    /// is scored by its range differences, a blink's arrivals (`scoreDifferences`); a floor with both
    /// kinds by its ranges, as it is calibrated.
    /// - Parameter configuration: the engine's solver settings (σ₀, robustness); the tag height and
    ///   the mode are taken from `floor` as the engine does.
    package mutating func score(floor: Floor, data: SelfCalibrationData,
                                configuration: TrilaterationConfiguration = .standard) {
        guard data.rangeCount > 0 else {
            scoreDifferences(floor: floor, data: data, configuration: configuration)
            return
        }
        let (solverConfiguration, dimensions) = Self.settings(for: floor, configuration)
        let solver = Trilaterator(configuration: solverConfiguration)
        var locators: [Point3] = [], ranges: [Double] = []
        Self.forEachLeftOut(groupStarts: data.epochStarts, othersAtLeast: dimensions + 1) { _, epoch, k in
            locators.removeAll(keepingCapacity: true)
            ranges.removeAll(keepingCapacity: true)
            for m in epoch where m != k {
                let l = floor.locators[data.slots[m]]
                locators.append(l.position)
                ranges.append(l.correctedRange(data.rangesMeters[m]))
            }
            guard let solution = try? solver.solve(locators: locators, rangesMeters: ranges) else { return }
            let left = floor.locators[data.slots[k]]
            record(left.correctedRange(data.rangesMeters[k]) - RangeModel.predicted(from: solution.position, to: left.position),
                   atSeconds: data.timesSeconds[k])
        }
    }

    /// The engine's solver settings for `floor` from `configuration`: its tag height and the mode the
    /// engine resolves for its locators; and that mode's coordinates (2 planar, 3 spatial).
    static func settings(for floor: Floor, _ configuration: TrilaterationConfiguration)
        -> (configuration: TrilaterationConfiguration, dimensions: Int) {
        var c = configuration
        c.tagHeightMeters = floor.tagHeightMeters
        c.mode = c.resolvedMode(for: floor.locators.map(\.position))
        return (c, c.mode == .planar ? 2 : 3)
    }

    /// Calls `body(g, group, k)` for every member k of every group g of `starts` (group g is
    /// `starts[g]..<starts[g + 1]`) that has at least `minimum` other members.
    static func forEachLeftOut(groupStarts starts: [Int], othersAtLeast minimum: Int, _ body: (Int, Range<Int>, Int) -> Void) {
        for g in 0..<max(0, starts.count - 1) {
            let group = starts[g]..<starts[g + 1]
            guard group.count - 1 >= minimum else { continue }
            for k in group { body(g, group, k) }
        }
    }

    /// Appends one left-out prediction's |e| (metres) and its time, when finite.
    mutating func record(_ e: Double, atSeconds t: Double) {
        guard e.isFinite else { return }
        absoluteMeters.append(abs(e))
        timesSeconds.append(t)
    }
}
