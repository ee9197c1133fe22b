import LocusCore

/// What a `SimulationRequest` made: ranges or range differences (the other empty), the truth, and
/// what the difference signals went through (zero for ranges).
package struct SimulationOutput: Sendable {
    /// The ranges, in time order (empty for a difference scenario).
    package var ranges: [RangeMeasurement]
    /// The range differences, in time order (empty for a range scenario).
    package var differences: [RangeDifference]
    /// Each tag's true position, `truthRateHertz` times a second.
    package var truth: [TruthSample]
    /// Blinks or reports, silent ones, dropped and NLOS arrivals, reference stand-ins.
    package var counts: DifferenceSimulationCounts
}
