import LocusCore

extension ZoneJudge {
    /// The state of one (tag, zone) pair that is counting or inside. A counting pair's (c, t₋) and an
    /// inside pair's (t_enter, k) are never needed at once (entering starts k at 1 and t_enter at the
    /// detection that made c reach `inCount`), so they share two words: 40 bytes a pair, not 64.
    struct PairState: Sendable {
        var tag: Int32 = 0
        var zone: Int32 = 0
        var generation: UInt32 = 0
        var isInUse = false
        var isInside = false
        /// Counting: t₋, the previous detection; inside: t_enter.
        private var since = 0.0
        /// Inside: t_last, the latest detection.
        var lastDetectionSeconds = 0.0
        /// Counting: c, the detections counted; inside: k, the next dwell's index.
        private var number = 1

        init() {}

        init(tag: Int32, zone: Int32, isInUse: Bool, generation: UInt32) {
            self.tag = tag
            self.zone = zone
            self.isInUse = isInUse
            self.generation = generation
            number = 0
        }

        /// Counting: c.
        var count: Int {
            get { assert(!isInside, "PairState: an inside pair has no count"); return number }
            set { number = newValue }
        }
        /// Counting: t₋.
        var previousDetectionSeconds: Double {
            get { assert(!isInside, "PairState: an inside pair has no previous detection"); return since }
            set { since = newValue }
        }
        /// Inside: t_enter.
        var enterSeconds: Double {
            get { assert(isInside, "PairState: a counting pair has no entry time"); return since }
            set { since = newValue }
        }
        /// Inside: k, the index of the next dwell event (at t_enter + k·T_dwell).
        var nextDwellIndex: Int {
            get { assert(isInside, "PairState: a counting pair has no dwell index"); return number }
            set { number = newValue }
        }
    }
}
