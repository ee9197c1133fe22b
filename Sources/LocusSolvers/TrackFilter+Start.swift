import LocusCore
import LocusNumerics

// The start of a tightly coupled track: from which ranges, at what time, and when a start is refused.
extension TrackFilter {
    /// True when a range at t seconds (re-)starts the track instead of updating it: no state yet (or
    /// diverged), more than `reinitializeAfterSeconds` since the last accepted measurement, or a
    /// range older than the state.
    @inline(__always)
    func startsTrack(atSeconds t: Double) -> Bool {
        !isTracking || t - lastUpdateSeconds > configuration.reinitializeAfterSeconds || t < stateSeconds
    }

    /// The ranges k..<n of a round (the buffers of `update(rangesMeters:timesSeconds:anchors:addresses:)`)
    /// when the track starts at range k: they are taken one by one, as always (the track starts as soon
    /// as `initializationLocators` locators give a position, the rest of the round are EKF updates) —
    /// unless one of the round's later ranges is then gated: the start disagrees with its own round
    /// (e.g. four locators in a near-line with one NLOS range among them give the mirror position, and
    /// the next ranges read metres off it). The track then starts instead from the whole round at its
    /// last range's time: every range in the buffer, solved by the robust `Trilaterator`, which now has
    /// the redundancy to reject the NLOS range. Returns the index after the round (n). Runs only at a
    /// track's start (it copies the filter).
    mutating func startTrack(rangesMeters ranges: UnsafeBufferPointer<Double>, timesSeconds times: UnsafeBufferPointer<Double>,
                             anchors: UnsafeBufferPointer<Point3>, addresses: UnsafeBufferPointer<LocatorAddress>,
                             from k: Int) -> Int {
        let n = ranges.count
        var probe = self
        var started = false, refuted = false
        for j in k..<n {
            let outcome = probe.update(correctedRangeMeters: ranges[j], timeSeconds: times[j], address: addresses[j], anchor: anchors[j])
            if outcome == .initialized {
                started = true
            } else if started, outcome == .gated {
                refuted = true
            }
        }
        if refuted {
            var whole = self
            for j in k..<n where ranges[j] >= 0 && ranges[j] <= .greatestFiniteMagnitude && abs(times[j]) <= .greatestFiniteMagnitude {
                whole.buffer.insert(address: addresses[j], anchor: anchors[j], rangeMeters: ranges[j], timeSeconds: times[j])
            }
            if whole.initializeFromBuffer(at: times[n - 1]) == .initialized {
                self = whole
                return n
            }
        }
        self = probe
        return n
    }
}
