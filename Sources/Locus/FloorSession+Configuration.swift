import LocusCore

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

        /// What turns ranges into positions.
        public enum Positioning: Sendable, Hashable {
            /// Raw per-epoch least-squares fixes (`locus replay --filter none`).
            case leastSquares
            /// The causal tracking filter (`locus replay`'s default).
            case kalman
        }

        /// A configuration.
        public init(rateHertz: Double = 4, floor: FloorID? = nil, positioning: Positioning = .kalman,
                    rangeSigmaMeters: Double = 0.1, smoothing: Bool = false, delivery: DeliveryPolicy = .standard) {
            self.rateHertz = rateHertz
            self.floor = floor
            self.positioning = positioning
            self.rangeSigmaMeters = rangeSigmaMeters
            self.smoothing = smoothing
            self.delivery = delivery
        }

        /// The engine options these settings stand for (the value every face builds its engine from).
        var engineOptions: EngineOptions {
            EngineOptions(rateHertz: rateHertz, sigmaMeters: rangeSigmaMeters,
                          filter: positioning == .leastSquares ? .none : .kalman, smooth: smoothing)
        }

        /// 4 Hz, the site's floor when it has one (else no floor map yet), the causal filter, σ 0.1 m,
        /// no smoothing, batches of 300 positions or 60 s in memory.
        public static let standard = Configuration()
    }
}
