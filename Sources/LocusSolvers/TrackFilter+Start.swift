import LocusCore
import LocusNumerics

// The start of a tightly coupled track: from which ranges, at what time, and when a start is refused.
extension TrackFilter {
    /// Seeds the track from a least-squares fix at the fix's time (the engine's fix of a difference
    /// epoch: see `update(differences:locators:addresses:)`): `reset(to:atSeconds:)` with
    /// x₀ = (x, y, 0, 0) and P₀ = [[R, 0], [0, σ_v² I]], R the fix's (x, y) covariance block (m²),
    /// σ_v = `initialVelocitySigmaMetersPerSecond`. Returns false, and changes nothing, when the fix's
    /// position, time or covariance is not usable (not finite, R not positive definite).
    @discardableResult
    package mutating func reset(toFix fix: PositionFix) -> Bool {
        let c = fix.covariance, t = fix.timeSeconds
        guard fix.position.isFinite, t.isFinite, c.isFinite, c.xx > 0, c.yy > 0, c.xx * c.yy > c.xy * c.xy else { return false }
        let sv = configuration.initialVelocitySigmaMetersPerSecond
        var p0 = SIMD16<Double>(repeating: 0)
        p0[0] = c.xx; p0[1] = c.xy; p0[4] = c.xy; p0[5] = c.yy; p0[10] = sv * sv; p0[15] = sv * sv
        reset(to: KalmanState(x: SIMD4(fix.position.x, fix.position.y, 0, 0), p: p0), atSeconds: t)
        return true
    }

    /// Whether a range r (m) at t (s) can enter the filter: finite, r ≥ 0 — plain compares, which NaN
    /// fails.
    @inline(__always)
    static func isUsable(rangeMeters r: Double, timeSeconds t: Double) -> Bool {
        r >= 0 && r <= .greatestFiniteMagnitude && abs(t) <= .greatestFiniteMagnitude
    }

    /// True when a range at t seconds (re-)starts the track instead of updating it: no state yet (or
    /// diverged), more than `reinitializeAfterSeconds` since the last accepted measurement, or a
    /// range older than the state.
    @inline(__always)
    func startsTrack(atSeconds t: Double) -> Bool {
        !isTracking || t - lastUpdateSeconds > configuration.reinitializeAfterSeconds || t < stateSeconds
    }

    /// Whether a round of `count` ranges whose first is at t seconds is judged as a whole
    /// (`updateRound`): it has more than one range, the track starts at it or is not yet confirmed, and
    /// `judgesStartingRounds` is on.
    @inline(__always)
    func judgesRound(count: Int, firstSeconds t: Double) -> Bool {
        count > 1 && (!isConfirmed || startsTrack(atSeconds: t)) && configuration.judgesStartingRounds
    }

    /// A round's ranges (the buffers of `update(rangesMeters:timesSeconds:anchors:addresses:)`). Once the
    /// track is confirmed, they are taken in turn (`updateEach`). Until then the round is judged as a
    /// whole: it is taken in turn as always, and kept if none of its ranges is gated. Otherwise:
    /// - the round that starts the track (as soon as `initializationLocators` locators give a position,
    ///   the round's other ranges EKF updates) does not keep that start: the track starts instead from
    ///   the whole round at its last range's time (every buffered range of the window, solved by the
    ///   robust `Trilaterator`, which has the round's redundancy to reject an NLOS range). Four locators
    ///   in a near-line with one NLOS range give the mirror position, and the round's next ranges read
    ///   metres off it;
    /// - the next round, met by a track whose velocity is still unknown (σ_v =
    ///   `initialVelocitySigmaMetersPerSecond`, so that an NLOS range early in the round can pull it off
    ///   and have the round's later ranges gated), is taken again without the ranges that the robust
    ///   `Trilaterator` rejects in it (none rejected: kept as taken), and confirms the track.
    /// Runs only while the track is young (it copies the filter).
    mutating func updateRound(rangesMeters ranges: UnsafeBufferPointer<Double>, timesSeconds times: UnsafeBufferPointer<Double>,
                              anchors: UnsafeBufferPointer<Point3>, addresses: UnsafeBufferPointer<LocatorAddress>) {
        let n = ranges.count
        guard n > 0, judgesRound(count: n, firstSeconds: times[0]) else {
            let mark = roundMark
            let gated = updateEach(rangesMeters: ranges, timesSeconds: times, anchors: anchors, addresses: addresses)
            if gated >= 2 && configuration.mirrorsAcrossLocatorLines {
                mirrorIfReflectionFits(rangesMeters: ranges, timesSeconds: times, anchors: anchors, addresses: addresses, gated: gated)
            }
            if gated > 0 { scoreUncheckedRound(since: mark, gated: gated, lastSeconds: times[n - 1], lastAddress: addresses[n - 1]) }
            return
        }
        let starts = startsTrack(atSeconds: times[0])
        var probe = self
        let gated = probe.updateEach(rangesMeters: ranges, timesSeconds: times, anchors: anchors, addresses: addresses)
        let restarted = probe.initializationCount != initializationCount
        if gated == 0 || (!starts && restarted) {
            // Kept; confirmed when the round neither started nor restarted the track.
            if !starts && !restarted && probe.isTracking { probe.isConfirmed = true }
            self = probe
            return
        }
        let usable = (0..<n).filter { Self.isUsable(rangeMeters: ranges[$0], timeSeconds: times[$0]) }
        if starts {
            var whole = self
            for j in usable { whole.buffer.insert(address: addresses[j], anchor: anchors[j], rangeMeters: ranges[j], timeSeconds: times[j]) }
            if whole.initializeFromBuffer(at: times[n - 1]) == .initialized {
                whole.record(rangeAtSeconds: times[n - 1], address: addresses[n - 1], outcome: .initialized, started: true)
                self = whole
            } else {
                self = probe
            }
            return
        }
        // The round after the start, some of it gated: again without what the robust solve rejects.
        let solver = TrackRangeBuffer.solver(tagHeightMeters: tagHeightMeters, sigmaMeters: configuration.rangeSigmaMeters)
        guard let solution = try? solver.solve(locators: usable.map { anchors[$0] }, rangesMeters: usable.map { ranges[$0] }),
              solution.rejectedCount > 0 else {
            probe.isConfirmed = true
            self = probe
            return
        }
        let kept = usable.indices.filter { !solution.isRejected(index: $0) }.map { usable[$0] }
        let r = kept.map { ranges[$0] }, t = kept.map { times[$0] }, a = kept.map { anchors[$0] }, d = kept.map { addresses[$0] }
        r.withUnsafeBufferPointer { r in t.withUnsafeBufferPointer { t in
            a.withUnsafeBufferPointer { a in d.withUnsafeBufferPointer { d in
                _ = updateEach(rangesMeters: r, timesSeconds: t, anchors: a, addresses: d)
            } }
        } }
        isConfirmed = true
    }

    /// One round-robin cycle of the tag's ranges for its range offset (Locus' `TagRangeOffsetEstimator`,
    /// "Round robin"): the latest range of each locator heard within the cycle window
    /// (`initializationCycleSeconds`) before the last accepted measurement, at most `locators.count`,
    /// each carried to that time along its line of sight by the tracked velocity from the tracked
    /// position (`lastMean`; `TrackRangeBuffer.gatherCycle`), h the tag height (m). Written to `locators`
    /// and `ranges` from index 0; returns their count and that time (`lastUpdateSeconds`, s). The track
    /// itself is not changed (`mutating` only to read the buffer in place); nothing allocated.
    package mutating func gatherCycle(tagHeightMeters h: Double, locators: inout MutableSpan<Point3>,
                                      ranges: inout MutableSpan<Double>) -> (count: Int, timeSeconds: Double) {
        let mean = lastMean, t = lastUpdateSeconds
        let n = buffer.gatherCycle(newestSeconds: t, cycleSeconds: configuration.initializationCycleSeconds,
                                   position: Point2(x: mean.px, y: mean.py), velocity: Point2(x: mean.vx, y: mean.vy),
                                   tagHeightMeters: h, locators: &locators, ranges: &ranges)
        return (n, t)
    }
}
