import LocusCore
import LocusNumerics

/// The causal filter of a tag on a floor solved in 3-D (spatial floors, issue #42): one 3-D
/// constant-velocity EKF, tightly coupled, beside the planar `TrackFilter`.
///
/// State x = (px, py, pz, vx, vy, vz) (m, m/s), covariance P (6×6), `SpatialKalmanState` (C kernels
/// `locus_kalman3.h`). Over Δt: x ← F x, P ← F P Fᵀ + Q, F = [[I₃, Δt·I₃], [0, I₃]], Q per axis
/// q_a·[[Δt³/3, Δt²/2], [Δt²/2, Δt]] with q_h = `spatialProcessNoiseDensity` on x and y and
/// q_v = `spatialVerticalProcessNoiseDensity` on z (m²/s³: white-noise acceleration, walks, carts and
/// flights alike). Each range r (m, biases removed) is one scalar EKF update at its own time through
/// the range model `locus_measurement_range.h` with the state's own z: h = ρ = ‖p − a‖,
/// H = [(p − a)/ρ, 0], y = r − ρ, S = H P Hᵀ + σ_r², ν = y/√S: refused when |ν| > γ_short, taken with
/// its variance raised so that ν = 1.5 when γ_long < ν ≤ γ_short (the planar IMM's soft long side: NLOS
/// ranges run long, and so do ranges with an unknown locator bias), Joseph-form update.
///
/// Initialisation contract (as the planar track's `TrackFilter.reset(toFix:)`): the engine seeds the
/// track from the epoch's least-squares fix, x₀ = (p, 0), P₀ = [[R, 0], [0, σ_v² I₃]] with R the fix's
/// 3×3 position covariance (m²) and σ_v = `initialVelocitySigmaMetersPerSecond`. The track drops (to be
/// re-seeded) after `reinitializeAfterSeconds` without an accepted range, when the gate's rejection
/// score (+1 per gated range, −1 per accepted one) reaches `gateOpenScore`, after
/// `spatialGateOpenEpochs` epochs in a row that each refused a range (`countEpochRefusals`), or when a
/// step is not finite.
/// 336 bytes of state inline; no allocation and no LAPACK call per range or fix.
package struct SpatialTrack: Sendable {
    /// The parameters (shared by every tag of an engine).
    let shared: TrackFilterConfiguration.Shared
    var configuration: TrackFilterConfiguration { shared.value }
    /// The state (meaningful while `isTracking`).
    private(set) var state = SpatialKalmanState()
    /// Whether there is a state (seeded, not dropped since).
    package private(set) var isTracking = false
    /// Time of `state`, seconds.
    private(set) var stateSeconds = 0.0
    /// Time of the last accepted range (or the seed), seconds.
    private(set) var lastUpdateSeconds = -Double.infinity
    /// Position and velocity right after the last accepted range: reported fixes coast from them at
    /// most `maximumCoastSeconds`.
    private var lastPosition = Point3(x: 0, y: 0, z: 0)
    private var lastVelocity = Vector3.zero
    /// Gate hysteresis: +1 per gated range, −1 per accepted one (never below 0).
    private(set) var rejectionScore = 0
    /// Whether a range was refused since the last epoch's end, and epochs in a row that refused one
    /// (`countEpochRefusals`, `spatialGateOpenEpochs`).
    private var refusedThisEpoch = false
    private(set) var refusingEpochs: Int32 = 0
    /// The current epoch's figures (locators used and gated, HDOP of the accepted ranges' horizontal
    /// lines of sight, residual RMS), restarted by `closeEpoch`.
    private var epoch = TrackEpochQuality()

    /// A track with no state yet.
    package init(shared: TrackFilterConfiguration.Shared) {
        self.shared = shared
    }

    /// Whether a range at t (seconds) can update the track: it has a state and t is within
    /// `reinitializeAfterSeconds` of the last accepted range and not before the state.
    func accepts(atSeconds t: Double) -> Bool {
        isTracking && t - lastUpdateSeconds <= configuration.reinitializeAfterSeconds && t >= stateSeconds - configuration.reinitializeAfterSeconds
    }

    /// Seeds the track from a least-squares fix (the contract above). Returns false, and changes
    /// nothing, when the fix's position, time or covariance is not usable (not finite, R not
    /// positive definite).
    @discardableResult
    package mutating func reset(toFix fix: PositionFix) -> Bool {
        let c = fix.covariance, t = fix.timeSeconds
        // R positive definite: the leading minors of [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]] positive.
        let m2 = c.xx * c.yy - c.xy * c.xy
        let m3 = c.xx * (c.yy * c.zz - c.yz * c.yz) - c.xy * (c.xy * c.zz - c.yz * c.xz) + c.xz * (c.xy * c.yz - c.yy * c.xz)
        guard fix.position.isFinite, t.isFinite, c.isFinite, c.xx > 0, m2 > 0, m3 > 0 else { return false }
        let sv = configuration.initialVelocitySigmaMetersPerSecond
        state = SpatialKalmanState(position: fix.position, covariance: c, velocityVarianceSquareMetersPerSecondSquared: sv * sv)
        isTracking = true
        stateSeconds = t
        lastUpdateSeconds = t
        lastPosition = fix.position
        lastVelocity = .zero
        rejectionScore = 0
        refusedThisEpoch = false
        refusingEpochs = 0
        return true
    }

    /// Ends the track (to be re-seeded).
    package mutating func dropTrack() {
        isTracking = false
        lastUpdateSeconds = -Double.infinity
    }

    /// An epoch's ranges as the engine closes a 3-D epoch: `rangesMeters[k]` (m, biases removed) to the
    /// locator `addresses[k]` at `anchors[k]`, measured at `timesSeconds[k]` (s), each in turn through
    /// `update(rangeMeters:timeSeconds:address:anchor:)` when the track accepts the first one's time
    /// (`accepts(atSeconds:)`); otherwise — no range, no track, or one too old for this epoch (a gap
    /// past `reinitializeAfterSeconds`) — the track drops, to be re-seeded (`reset(toFix:)`); then the
    /// epoch's refusals are counted (`countEpochRefusals`: a run of `spatialGateOpenEpochs` refusing
    /// epochs drops it too). All four spans hold the same count; read in place, nothing allocated.
    @discardableResult
    package mutating func update(rangesMeters ranges: Span<Double>, timesSeconds times: Span<Double>,
                                 anchors: Span<Point3>, addresses: Span<LocatorAddress>) -> Point3? {
        let n = ranges.count
        precondition(times.count == n && anchors.count == n && addresses.count == n, "SpatialTrack.update: spans of one count")
        guard n > 0, accepts(atSeconds: times[0]) else {
            dropTrack()
            return nil
        }
        for k in 0..<n {
            update(rangeMeters: ranges[k], timeSeconds: times[k], address: addresses[k], anchor: anchors[k])
        }
        countEpochRefusals()
        return isTracking ? state.position : nil
    }

    /// One range r (m, biases removed) to the locator `address` at `anchor` (m, finite), measured at
    /// t (s): predicted to t when later than the state (else applied at the state's time), then the
    /// gated EKF update. `.buffered` without a state (or when t is out of reach: the track drops),
    /// `.gated` when refused (at `gateOpenScore` the track drops: the engine re-seeds it),
    /// `.diverged` when a step was not finite (dropped), `.unusable` for a bad range.
    @discardableResult
    mutating func update(rangeMeters r: Double, timeSeconds t: Double, address: LocatorAddress, anchor: Point3) -> TrackUpdateOutcome {
        guard r >= 0, r <= .greatestFiniteMagnitude, abs(t) <= .greatestFiniteMagnitude else { return .unusable }
        guard accepts(atSeconds: t) else { dropTrack(); return .buffered }
        let c = configuration
        if t > stateSeconds {
            guard state.predict(overSeconds: t - stateSeconds, horizontalDensity: c.spatialProcessNoiseDensity,
                                verticalDensity: c.spatialVerticalProcessNoiseDensity) == .accepted else { dropTrack(); return .diverged }
            stateSeconds = t
        }
        var innovation = KalmanInnovation()
        switch state.updateRange(anchor: anchor, rangeMeters: r, varianceSquareMeters: c.rangeSigmaMeters * c.rangeSigmaMeters,
                                 gateLong: c.rangeGateLongSigmas, gateShort: c.rangeGateShortSigmas, innovation: &innovation) {
        case .accepted:
            let p = state.position
            lastUpdateSeconds = max(lastUpdateSeconds, t)
            lastPosition = p
            lastVelocity = state.velocity
            rejectionScore = max(0, rejectionScore - 1)
            let dx = p.x - anchor.x, dy = p.y - anchor.y, dz = p.z - anchor.z
            epoch.accept(residualMeters: innovation.residualMeters, dx: dx, dy: dy, rho2: RangeModel.squared(dx: dx, dy: dy, dz: dz))
            return .accepted
        case .gated:
            epoch.reject(address)
            rejectionScore += 1
            refusedThisEpoch = true
            if rejectionScore >= c.gateOpenScore { dropTrack() }
            return .gated
        case .invalidArgument:
            return .unusable
        default:
            dropTrack()
            return .diverged
        }
    }

    /// The state (its time `stateTimeSeconds`), for the smoother.
    var filteredState: SpatialKalmanState { state }
    var stateTimeSeconds: Double { stateSeconds }
    var lastAcceptedSeconds: Double { lastUpdateSeconds }

    /// The state predicted to t (the state itself for t ≤ its time), nil without a state or when the
    /// prediction is not finite. The track is not changed.
    func stateAt(_ t: Double) -> SpatialKalmanState? {
        guard isTracking else { return nil }
        guard t > stateSeconds else { return state }
        var s = state
        let c = configuration
        guard s.predict(overSeconds: t - stateSeconds, horizontalDensity: c.spatialProcessNoiseDensity,
                        verticalDensity: c.spatialVerticalProcessNoiseDensity) == .accepted else { return nil }
        return s
    }

    /// Moves the state to t (when later, and within `maximumCoastSeconds` of the last accepted range)
    /// and gives it the height prior there: when σ_h = `spatialHeightPriorSigmaMeters` > 0 and
    /// P_zz > σ_h² (the ranges hold z less tightly than the prior would), the height update with
    /// z = h₀ (m, the floor's tag height) and variance σ_h². Applied once per epoch, at its end: the
    /// prior bounds z where the geometry leaves it free (P_zz then settles near σ_h²) and is idle where
    /// the ranges determine z. Returns the state; nil without a state or beyond the coast.
    mutating func settle(atSeconds t: Double, tagHeightMeters h0: Double) -> SpatialKalmanState? {
        let c = configuration
        guard isTracking, t - lastUpdateSeconds <= c.maximumCoastSeconds, let moved = stateAt(t) else { return nil }
        state = moved
        stateSeconds = max(stateSeconds, t)
        let sigma = c.spatialHeightPriorSigmaMeters
        if sigma > 0, state.positionCovariance.zz > sigma * sigma {
            var held = state
            if held.updateHeight(heightMeters: h0, varianceSquareMeters: sigma * sigma) == .accepted { state = held }
        }
        return state
    }

    /// Ends an epoch's ranges: the epoch counts as refusing when any of its ranges was refused, and at
    /// `spatialGateOpenEpochs` such epochs in a row the track drops (the engine then seeds it from this
    /// epoch's least-squares fix); an epoch that refused nothing ends the run. Called once an epoch,
    /// after its ranges and before its fix: by `update(rangesMeters:…)` for the causal engine, and by the
    /// smoother's forward pass at each output time.
    mutating func countEpochRefusals() {
        refusingEpochs = refusedThisEpoch ? refusingEpochs &+ 1 : 0
        refusedThisEpoch = false
        let limit = configuration.spatialGateOpenEpochs
        if isTracking, limit > 0, Int(refusingEpochs) >= limit { dropTrack() }
    }

    /// Ends an epoch at t (s): the track settled at t (`settle`: predicted there, the height prior)
    /// — or, past `maximumCoastSeconds` of the last accepted range, the mean extrapolated at most that
    /// far, the covariance growing on — and its fix there (of tag `tag` on `floor`, tags carried at
    /// `tagHeightMeters`) with the epoch's quality figures; then the figures restart. Nil without a
    /// state.
    package mutating func closeEpoch(atSeconds t: Double, tag: TagID, floor: FloorID, tagHeightMeters: Double) -> PositionFix? {
        defer { epoch = TrackEpochQuality() }
        let c = configuration
        var position: Point3, velocity: Vector3, covariance: SymmetricMatrix3
        if let settled = settle(atSeconds: t, tagHeightMeters: tagHeightMeters) {
            position = settled.position; velocity = settled.velocity; covariance = settled.positionCovariance
        } else {
            guard let reported = stateAt(t) else { return nil }
            let coast = c.maximumCoastSeconds
            position = Point3(x: lastPosition.x + coast * lastVelocity.x, y: lastPosition.y + coast * lastVelocity.y,
                              z: lastPosition.z + coast * lastVelocity.z)
            velocity = lastVelocity
            covariance = reported.positionCovariance
        }
        let quality = epoch.fixQuality
        return PositionFix(timeSeconds: max(t, stateSeconds), tag: tag, floor: floor, position: position, velocity: velocity,
                           covariance: covariance, quality: quality)
    }
}
