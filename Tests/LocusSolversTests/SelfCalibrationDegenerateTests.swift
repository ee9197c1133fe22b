@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSimulation
@testable import LocusSolvers
import LocusTestSupport
import Testing

/// The bundle adjustment where a recording determines nothing: every bias kept (no free parameter
/// left), and no crash. The diverging case is the real Hanyang fixture (`CalibrateDivergenceTests`).
@Suite("Calibration without truth: nothing left to fit")
struct SelfCalibrationDegenerateTests {
    init() { LapackThreads.useOneThreadUnlessConfigured() }

    @Test("every parameter fixed: the uncertainty is a 1×1 zero system (nothing determined, σ 0 for what is fixed), not a precondition failure")
    func noFreeParameter() throws {
        let floor = SelfCalibrationTests.hall()
        let recording = SimulatedRecording.simulate(floor: floor, durationSeconds: 20, seed: 3)
        var solver = SelfCalibrationSolver(data: SelfCalibrationData(measurements: recording.ranges, floor: floor),
                                           anchors: floor.locators.map(\.position), planar: true, tagHeight: floor.tagHeightMeters,
                                           initialBias: floor.locators.map(\.biasMeters), configuration: .standard)
        for i in floor.locators.indices { solver.parameters.freeBias[i] = false }
        try solver.solve(limit: 5)
        let uncertainty = try solver.uncertainty()
        #expect(uncertainty.parameters.isEmpty)
        #expect(uncertainty.standardDeviation([(.bias(0), 1)]) == 0)
    }
}
