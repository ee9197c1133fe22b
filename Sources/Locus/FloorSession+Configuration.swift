import LocusCore
import LocusSolvers

extension FloorSession {
    /// How a session positions and delivers. Defaults in `standard`.
    public struct Configuration: Sendable, Hashable {
        /// Output rate per tag, Hz (> 0; default 4).
        public var rateHertz: Double
        /// The floor map the session starts with; nil means the site's floor when it has only one,
        /// and otherwise none until `setFloorMap(_:buildingID:)` (a range that names no floor is then
        /// refused with E3001).
        public var floor: FloorID?
        /// What turns ranges into positions.
        public var positioning: Positioning
        /// Range noise σ assumed by the solver, the filter and the tag-offset estimator, metres
        /// (`locus replay --sigma`; default 0.1).
        public var rangeSigmaMeters: Double
        /// Whether the session keeps what the offline smoother needs (every range and position of
        /// the run: memory grows with it), so that `smoothedPositions()` can smooth the run after
        /// `end()` (`locus replay --smooth`). Live positions and events are causal either way.
        public var smoothing: Bool
        /// Batching and the durable spool.
        public var delivery: DeliveryPolicy
        /// The solver's height model (`locus replay --mode`; default `.automatic`: planar when the
        /// locators are near one height).
        public var mode: TrilaterationMode
        /// How the filter takes ranges (`--coupling`; meaningful with `.kalman`; default `.tight`).
        public var coupling: Coupling
        /// When a per-tag common range offset is estimated (`--tag-offset`; default `.automatic`).
        public var tagOffset: TagOffset

        /// What turns ranges into positions.
        public enum Positioning: Sendable, Hashable {
            /// Raw per-epoch least-squares fixes (`locus replay --filter none`).
            case leastSquares
            /// The causal tracking filter (`locus replay`'s default).
            case kalman
        }

        /// How the filter takes ranges (the C ABI's `enum locus_coupling`).
        public enum Coupling: Sendable, Hashable {
            /// Each range is an update at its own time (any number of ranges per epoch).
            case tight
            /// The epoch's least-squares fix, with its covariance, is the measurement.
            case loose
        }

        /// When a per-tag common range offset (an uncalibrated tag's antenna delay) is estimated
        /// (docs/calibration.md; the C ABI's `LOCUS_OPTION_TAG_OFFSET_*` flags).
        public enum TagOffset: Sendable, Hashable {
            /// On planar floors whose locators carry no bias.
            case automatic
            /// On every planar floor.
            case on
            /// Never.
            case off
        }

        /// A configuration.
        public init(rateHertz: Double = 4, floor: FloorID? = nil, positioning: Positioning = .kalman,
                    rangeSigmaMeters: Double = 0.1, smoothing: Bool = false, delivery: DeliveryPolicy = .standard,
                    mode: TrilaterationMode = .automatic, coupling: Coupling = .tight, tagOffset: TagOffset = .automatic) {
            self.rateHertz = rateHertz
            self.floor = floor
            self.positioning = positioning
            self.rangeSigmaMeters = rangeSigmaMeters
            self.smoothing = smoothing
            self.delivery = delivery
            self.mode = mode
            self.coupling = coupling
            self.tagOffset = tagOffset
        }

        /// The engine options these settings stand for (the value every face builds its engine from).
        var engineOptions: EngineOptions {
            let offset: EngineOptions.TagOffset = switch tagOffset {
            case .automatic: .automatic
            case .on: .on
            case .off: .off
            }
            return EngineOptions(rateHertz: rateHertz, sigmaMeters: rangeSigmaMeters,
                                 filter: positioning == .leastSquares ? .none : .kalman,
                                 coupling: coupling == .loose ? .loose : .tight, mode: mode, tagOffset: offset, smooth: smoothing)
        }

        /// 4 Hz, the site's floor when it has one (else no floor map yet), the causal filter tightly
        /// coupled, σ 0.1 m, the solver's mode by the locators' heights, the tag offset on uncalibrated
        /// planar floors, no smoothing, batches of 300 positions or 60 s in memory — `locus replay`'s defaults.
        public static let standard = Configuration()
    }
}
