import LocusCore
import LocusSolvers

/// How the positioning engine runs. Configuration only (no state); defaults in `standard`.
package struct EngineConfiguration: Sendable {
    /// Output rate per tag, Hz: epochs are cut at 1/rate (SPEC §5 default 4 Hz).
    package var rateHertz: Double
    /// The floor for rows that name none; nil means the site's first floor.
    package var defaultFloor: FloorID?
    /// Solver settings; the tag height is taken per floor.
    package var solver: TrilaterationConfiguration

    package init(rateHertz: Double = 4, defaultFloor: FloorID? = nil, solver: TrilaterationConfiguration = .standard) {
        self.rateHertz = rateHertz
        self.defaultFloor = defaultFloor
        self.solver = solver
    }

    /// 4 Hz, first floor, the solver's standard settings (robust, automatic planar/spatial).
    package static let standard = EngineConfiguration()
}
