import LocusCore
import LocusNumerics
#if canImport(Glibc)
import Glibc
#endif

/// What one measurement did to a track.
package enum TrackUpdateOutcome: Sendable, Hashable {
    /// The measurement updated the state.
    case accepted
    /// The measurement failed the innovation gate; the state is unchanged.
    case gated
    /// Tightly coupled: kept for initialisation; there is no state yet.
    case buffered
    /// The track was (re-)initialised at this measurement: first measurement, after a long gap, or
    /// after the gate opened (re-acquisition).
    case initialized
    /// The numbers went non-finite: the track was dropped and will re-initialise (`lastError` is E4005).
    case diverged
    /// The measurement could not be used (unknown geometry, tag on the locator, invalid range).
    case unusable
}

/// A causal constant-velocity Kalman filter for one tag: white-noise acceleration (density q, m²/s³),
/// variable time steps, ranges (tightly coupled EKF) or least-squares fixes (loosely coupled) as
/// measurements, an innovation gate with open/close hysteresis, and re-initialisation after long gaps.
///
/// State x = (px, py, vx, vy) (m, m/s), covariance P (4×4). Prediction over Δt:
/// x ← F x, P ← F P Fᵀ + Q with F = [[I, Δt·I], [0, I]], Q = q·[[Δt³/3·I, Δt²/2·I], [Δt²/2·I, Δt·I]].
/// Updates are Joseph-form (C kernels in `CLocusKernels`); no heap allocation per measurement as long
/// as the filter is mutated in place (keep one per tag, e.g. in an array indexed by tag; a copied filter
/// copies its small range buffer on the next write).
package struct TrackFilter: Sendable {
    /// The parameters (fixed for the life of the filter), held by reference so that the filters of
    /// many tags share one copy (memory per tracked tag).
    private let shared: TrackFilterConfiguration.Shared
    /// The parameters (fixed for the life of the filter).
    package var configuration: TrackFilterConfiguration { shared.value }
    /// The tag tracked.
    package let tag: TagID
    /// The floor the tag is on.
    package let floor: FloorID
    /// The known tag height h used by planar range updates, metres.
    package let tagHeightMeters: Double

    /// The current state, nil before initialisation (and after a divergence).
    package private(set) var state: KalmanState?
    /// Time of `state`, seconds.
    package private(set) var stateSeconds: Double = 0
    /// Time of the last accepted (or initialising) measurement, seconds.
    package private(set) var lastUpdateSeconds: Double = -Double.infinity
    /// The state right after the last accepted measurement (reported fixes coast from it).
    private var meanAtLastUpdate: SIMD4<Double>?
    /// Gate hysteresis score: +1 per gated, −1 per accepted measurement (never below 0).
    package private(set) var rejectionScore = 0
    /// The last error met (E4005 on divergence), if any.
    package var lastError: LocusError? {
        divergedAtSeconds.map { t in LocusError(.filterDivergence, "tag \(tag): filter state not finite at t = \(t) s; re-initialising") }
    }
    /// When the state last went non-finite (the error is built on demand: memory per tag).
    private var divergedAtSeconds: Double?
    /// Number of (re-)initialisations so far.
    package private(set) var initializationCount = 0
    /// IMM: the models' states (0 standing still, 1 steady walking, 2 manoeuvring).
    private var modes = (KalmanState(x: .zero, p: .zero), KalmanState(x: .zero, p: .zero), KalmanState(x: .zero, p: .zero))
    /// IMM model probabilities μ = (still, steady, manoeuvring) (the fourth lane is unused, 0).
    package private(set) var modeProbabilities = SIMD4<Double>(1.0 / 3, 1.0 / 3, 1.0 / 3, 0)

    private var buffer = TrackRangeBuffer()
    // Per-epoch quality figures since the last `takeFix`: accepted ranges, Σ HᵀH, Σ y², rejected locators.
    private var epochUsed = 0
    private var epochA00 = 0.0, epochA01 = 0.0, epochA11 = 0.0
    private var epochResidualSquares = 0.0
    private var epochRejected = LocatorList()
    private var lastFixQuality = FixQuality(hdop: 0, pdop: 0, residualRMSMeters: 0, locatorsUsed: 0)

    /// A filter with no state yet.
    package init(configuration: TrackFilterConfiguration = .standard, tag: TagID, floor: FloorID,
                 tagHeightMeters: Double = 0) {
        self.init(shared: TrackFilterConfiguration.Shared(configuration), tag: tag, floor: floor, tagHeightMeters: tagHeightMeters)
    }

    /// A filter with no state yet, on a configuration shared with other filters (an engine keeps
    /// one `Shared` for all its tags).
    package init(shared: TrackFilterConfiguration.Shared, tag: TagID, floor: FloorID, tagHeightMeters: Double = 0) {
        self.shared = shared
        self.tag = tag
        self.floor = floor
        self.tagHeightMeters = tagHeightMeters
    }

    /// Predicts the state to time t (no-op before initialisation or for t ≤ the state's time).
    /// x ← F x, P ← F P Fᵀ + Q over Δt = t − t_state.
    /// With interacting models: mixing (μ_{i|j} = π_ij μ_i / c_j, c_j = Σ_i π_ij μ_i, x₀ⱼ = Σ_i μ_{i|j} xᵢ,
    /// P₀ⱼ = Σ_i μ_{i|j}(Pᵢ + (xᵢ − x₀ⱼ)(xᵢ − x₀ⱼ)ᵀ)), prediction of each model with its q, μ ← c, and the
    /// combined state x = Σ μⱼ xⱼ, P = Σ μⱼ (Pⱼ + (xⱼ − x)(xⱼ − x)ᵀ).
    package mutating func predict(toSeconds t: Double) {
        guard var s = state, t > stateSeconds else { return }
        let dt = t - stateSeconds
        if configuration.usesInteractingModels {
            // Markov chain: stay with 1 − p, move to each other model with p/2.
            let p = 1 - exp(-configuration.modeSwitchesPerSecond * dt)
            let mu = modeProbabilities
            let c = (1 - p) * mu + (0.5 * p) * (SIMD4(repeating: mu.sum()) - mu)
            let stay = 1 - p, move = 0.5 * p
            func weights(_ j: Int) -> SIMD4<Double> {
                var w = SIMD4<Double>(move * mu[0], move * mu[1], move * mu[2], 0)
                w[j] = stay * mu[j]
                return w / max(c[j], 1e-300)
            }
            var a = Self.mix(modes, weights: weights(0))
            var b = Self.mix(modes, weights: weights(1))
            var m = Self.mix(modes, weights: weights(2))
            let oa = KalmanKernels.predictStill(&a, overSeconds: dt, positionNoiseDensity: configuration.stillPositionNoiseDensity,
                                                velocityVarianceSquareMetersPerSecondSquared:
                                                    configuration.stillVelocitySigmaMetersPerSecond * configuration.stillVelocitySigmaMetersPerSecond)
            let ob = KalmanKernels.predict(&b, overSeconds: dt, processNoiseDensity: configuration.lowProcessNoiseDensity)
            let om = KalmanKernels.predict(&m, overSeconds: dt, processNoiseDensity: configuration.highProcessNoiseDensity)
            guard oa == .accepted, ob == .accepted, om == .accepted else { diverge(at: t); return }
            modes = (a, b, m)
            modeProbabilities = c / c.sum()
            state = Self.mix(modes, weights: modeProbabilities)
            stateSeconds = t
            return
        }
        switch KalmanKernels.predict(&s, overSeconds: dt, processNoiseDensity: configuration.processNoiseDensity) {
        case .accepted:
            state = s
            stateSeconds = t
        default:
            diverge(at: t)
        }
    }

    /// A Gaussian mixture Σ wᵢ N(xᵢ, Pᵢ) (weights summing to 1) moment-matched to one Gaussian:
    /// x = Σ wᵢ xᵢ, P = Σ wᵢ (Pᵢ + (xᵢ − x)(xᵢ − x)ᵀ).
    static func mix(_ m: (KalmanState, KalmanState, KalmanState), weights w: SIMD4<Double>) -> KalmanState {
        let x = w[0] * m.0.x + w[1] * m.1.x + w[2] * m.2.x
        let d0 = m.0.x - x, d1 = m.1.x - x, d2 = m.2.x - x
        var p = w[0] * m.0.p + w[1] * m.1.p + w[2] * m.2.p
        for r in 0..<4 {
            for c in 0..<4 { p[4 * r + c] += w[0] * d0[r] * d0[c] + w[1] * d1[r] * d1[c] + w[2] * d2[r] * d2[c] }
        }
        return KalmanState(x: x, p: p)
    }

    /// IMM measurement step after the combined state passed the gate: update every model with
    /// `update` (which returns the likelihood N(y; 0, S) up to a common constant, or nil on failure),
    /// μⱼ ← μⱼ Lⱼ / Σ μᵢ Lᵢ, and recombine.
    private mutating func updateModes(at t: Double, _ update: (inout KalmanState) -> Double?) -> Bool {
        var a = modes.0, b = modes.1, m = modes.2
        guard let la = update(&a), let lb = update(&b), let lm = update(&m) else { return false }
        let weighted = modeProbabilities * SIMD4(la, lb, lm, 0)
        let total = weighted.sum()
        if total > 1e-300, total.isFinite {
            modeProbabilities = (weighted / total).replacing(with: 1e-9, where: weighted / total .< 1e-9)
            modeProbabilities[3] = 0
            modeProbabilities /= modeProbabilities.sum()
        }
        modes = (a, b, m)
        state = Self.mix(modes, weights: modeProbabilities)
        return true
    }

    /// Sets the state directly (e.g. a prior), as if a measurement had initialised it at time t.
    package mutating func reset(to initial: KalmanState, atSeconds t: Double) {
        state = initial
        modes = (initial, initial, initial)
        modeProbabilities = SIMD4<Double>(1.0 / 3, 1.0 / 3, 1.0 / 3, 0)
        stateSeconds = t
        lastUpdateSeconds = t
        meanAtLastUpdate = initial.x
        rejectionScore = 0
        initializationCount += 1
    }

    // MARK: loosely coupled

    /// Loosely coupled update with a least-squares fix z = (x, y) of covariance R (the fix's xy block):
    /// predict to the fix time, then gate on NIS = yᵀS⁻¹y ≤ χ², then update (Joseph form).
    /// The first fix, a fix after a gap longer than `reinitializeAfterSeconds`, or the fix that brings
    /// the rejection score to `gateOpenScore` (re)initialises the track at the fix:
    /// x₀ = (z, 0), P₀ = diag(σ_p², σ_p², σ_v², σ_v²), followed by the update with z.
    @discardableResult
    package mutating func update(fix: PositionFix) -> TrackUpdateOutcome {
        let t = fix.timeSeconds
        let c = fix.covariance
        guard fix.position.isFinite, t.isFinite, c.isFinite, c.xx > 0, c.yy > 0, c.xx * c.yy > c.xy * c.xy else {
            return .unusable
        }
        var initializing = false
        if state == nil || t - lastUpdateSeconds > configuration.reinitializeAfterSeconds || t < stateSeconds {
            initializing = true
        } else {
            predict(toSeconds: t)
            if state == nil { initializing = true }
        }
        if initializing {
            reset(to: prior(x: fix.position.x, y: fix.position.y), atSeconds: t)
        }
        // The gate is tested on the most permissive model (IMM: the manoeuvring one), so that a
        // confident steady model cannot lock the track out during a manoeuvre.
        guard var s = configuration.usesInteractingModels ? modes.2 : state else { return .unusable }
        var innovation = KalmanInnovation()
        let gate = initializing ? Double.infinity : configuration.fixGateChiSquare
        switch KalmanKernels.updatePosition(&s, zx: fix.position.x, zy: fix.position.y, rxx: c.xx, rxy: c.xy, ryy: c.yy,
                                            gate: gate, innovation: &innovation) {
        case .accepted:
            state = s
            guard updateModes(with: fix) else { diverge(at: t); return .diverged }
            accept(at: t)
            lastFixQuality = fix.quality
            return initializing ? .initialized : .accepted
        case .gated:
            rejectionScore += 1
            if rejectionScore >= configuration.fixGateOpenScore {
                // The gate opens: take the fix ungated (the manoeuvring model absorbs the jump).
                return updateOpen(fix: fix)
            }
            return .gated
        default:
            diverge(at: t)
            return .diverged
        }
    }

    private mutating func updateOpen(fix: PositionFix) -> TrackUpdateOutcome {
        guard var s = state else { return .unusable }
        let c = fix.covariance, t = fix.timeSeconds
        var innovation = KalmanInnovation()
        guard KalmanKernels.updatePosition(&s, zx: fix.position.x, zy: fix.position.y, rxx: c.xx, rxy: c.xy, ryy: c.yy,
                                           gate: .infinity, innovation: &innovation) == .accepted else {
            diverge(at: t)
            return .diverged
        }
        state = s
        guard updateModes(with: fix) else { diverge(at: t); return .diverged }
        accept(at: t)
        lastFixQuality = fix.quality
        return .accepted
    }

    /// IMM: updates every model with the fix (ungated; the combined state already passed or
    /// opened the gate) and recombines. True when there are no interacting models.
    private mutating func updateModes(with fix: PositionFix) -> Bool {
        guard configuration.usesInteractingModels else { return true }
        let c = fix.covariance
        return updateModes(at: fix.timeSeconds) { m in
            var i = KalmanInnovation()
            guard KalmanKernels.updatePosition(&m, zx: fix.position.x, zy: fix.position.y, rxx: c.xx, rxy: c.xy,
                                               ryy: c.yy, gate: .infinity, innovation: &i) == .accepted else { return nil }
            return exp(-0.5 * i.statistic) / i.innovationVariance.squareRoot()
        }
    }

    // MARK: tightly coupled

    /// Tightly coupled EKF update with one range to `locator` (its bias removed, tag at height h):
    /// h(x) = √((px−xᵢ)² + (py−yᵢ)² + (h−zᵢ)²), y = r − bᵢ − h(x), S = HPHᵀ + σ_r², gate on ν = y/√S
    /// (asymmetric: NLOS ranges are long), Joseph-form update at the range's own timestamp.
    /// Before initialisation (and after a gap or an opened gate) ranges are buffered until
    /// `initializationLocators` distinct locators give a least-squares position.
    @discardableResult
    package mutating func update(range: RangeMeasurement, locator: Locator) -> TrackUpdateOutcome {
        let t = range.timeSeconds
        let r = locator.correctedRange(range.rangeMeters)
        guard t.isFinite, r.isFinite, r >= 0, locator.position.isFinite else { return .unusable }
        buffer.insert(.init(address: locator.address, anchor: locator.position, rangeMeters: r, timeSeconds: t))
        if state == nil || t - lastUpdateSeconds > configuration.reinitializeAfterSeconds || t < stateSeconds {
            return initializeFromBuffer(at: t)
        }
        predict(toSeconds: t)
        guard state != nil else { return initializeFromBuffer(at: t) }
        // Gate on the most permissive model (IMM: manoeuvring), see `update(fix:)`.
        var s = configuration.usesInteractingModels ? modes.2 : (state ?? modes.2)
        var innovation = KalmanInnovation()
        let sigma = configuration.rangeSigmaMeters
        let outcome = KalmanKernels.updateRange(&s, anchor: locator.position, tagHeightMeters: tagHeightMeters,
                                                rangeMeters: r, varianceSquareMeters: sigma * sigma,
                                                gateLong: configuration.rangeGateLongSigmas,
                                                gateShort: configuration.rangeGateShortSigmas, innovation: &innovation)
        switch outcome {
        case .accepted:
            state = s
            if configuration.usesInteractingModels {
                let h = tagHeightMeters, anchor = locator.position, v = sigma * sigma
                let ok = updateModes(at: t) { m in
                    var i = KalmanInnovation()
                    guard KalmanKernels.updateRange(&m, anchor: anchor, tagHeightMeters: h, rangeMeters: r,
                                                    varianceSquareMeters: v, gateLong: .infinity, gateShort: .infinity,
                                                    innovation: &i) == .accepted else { return nil }
                    return exp(-0.5 * i.statistic * i.statistic) / i.innovationVariance.squareRoot()
                }
                guard ok, let combined = state else { diverge(at: t); return .diverged }
                s = combined
            } else {
                state = s
            }
            accept(at: t)
            let dx = s.x[0] - locator.position.x, dy = s.x[1] - locator.position.y, dz = tagHeightMeters - locator.position.z
            let rho2 = max(1e-12, dx * dx + dy * dy + dz * dz)
            epochUsed += 1
            epochA00 += dx * dx / rho2; epochA01 += dx * dy / rho2; epochA11 += dy * dy / rho2
            epochResidualSquares += innovation.residualMeters * innovation.residualMeters
            return .accepted
        case .gated:
            epochRejected.append(locator.address)
            rejectionScore += 1
            if rejectionScore >= configuration.gateOpenScore {
                let o = initializeFromBuffer(at: t)
                return o == .buffered ? .gated : o
            }
            return .gated
        case .invalidArgument:
            return .unusable
        default:
            diverge(at: t)
            return .diverged
        }
    }

    // MARK: output

    /// The filter's fix at time t without changing the filter: the state predicted to t, except that the
    /// mean is extrapolated at most `maximumCoastSeconds` past the last accepted measurement (no drift
    /// through an outage) while the covariance keeps growing as F P Fᵀ + Q. Nil before initialisation.
    package func fix(atSeconds t: Double) -> PositionFix? {
        guard let current = state else { return nil }
        var covarianceState = current
        if t > stateSeconds {
            _ = KalmanKernels.predict(&covarianceState, overSeconds: t - stateSeconds, processNoiseDensity: configuration.processNoiseDensity)
        }
        var mean = covarianceState
        let coastEnd = lastUpdateSeconds + configuration.maximumCoastSeconds
        if t > coastEnd, let anchor = meanAtLastUpdate {
            // Coast at most `maximumCoastSeconds` past the last update: x = (p + T·v, v) (only the
            // mean is extrapolated; the covariance keeps growing above).
            let coast = configuration.maximumCoastSeconds
            mean.x = SIMD4(anchor[0] + coast * anchor[2], anchor[1] + coast * anchor[3], anchor[2], anchor[3])
        }
        return makeFix(time: max(t, stateSeconds), mean: mean, covariance: covarianceState)
    }

    /// The fix at the state's own time (nil before initialisation).
    package var currentFix: PositionFix? { fix(atSeconds: stateSeconds) }

    /// Predicts to t, returns the fix there and starts a new epoch for the quality figures
    /// (locators used and rejected, HDOP of the accepted ranges, residual RMS).
    package mutating func takeFix(atSeconds t: Double) -> PositionFix? {
        if t - lastUpdateSeconds <= configuration.maximumCoastSeconds { predict(toSeconds: t) }
        let f = fix(atSeconds: t)
        epochUsed = 0
        epochA00 = 0; epochA01 = 0; epochA11 = 0
        epochResidualSquares = 0
        epochRejected = LocatorList()
        return f
    }

    // MARK: internals

    private func prior(x: Double, y: Double) -> KalmanState {
        KalmanState(px: x, py: y, positionSigmaMeters: configuration.initialPositionSigmaMeters,
                    velocitySigmaMetersPerSecond: configuration.initialVelocitySigmaMetersPerSecond)
    }

    private mutating func accept(at t: Double) {
        lastUpdateSeconds = t
        meanAtLastUpdate = state?.x
        rejectionScore = max(0, rejectionScore - 1)
    }

    private mutating func diverge(at t: Double) {
        state = nil
        meanAtLastUpdate = nil
        lastUpdateSeconds = -Double.infinity
        divergedAtSeconds = t
    }

    private mutating func initializeFromBuffer(at t: Double) -> TrackUpdateOutcome {
        guard let p = buffer.solve(newestSeconds: t, windowSeconds: configuration.initializationWindowSeconds,
                                   tagHeightMeters: tagHeightMeters, minimumLocators: configuration.initializationLocators,
                                   sigmaMeters: configuration.rangeSigmaMeters) else {
            if state != nil && t - lastUpdateSeconds > configuration.reinitializeAfterSeconds {
                state = nil
                meanAtLastUpdate = nil
            }
            return .buffered
        }
        let sv = configuration.initialVelocitySigmaMetersPerSecond
        var p0 = SIMD16<Double>(repeating: 0)
        p0[0] = p.cxx; p0[1] = p.cxy; p0[4] = p.cxy; p0[5] = p.cyy; p0[10] = sv * sv; p0[15] = sv * sv
        reset(to: KalmanState(x: SIMD4(p.x, p.y, 0, 0), p: p0), atSeconds: t)
        return .initialized
    }

    private func makeFix(time t: Double, mean: KalmanState, covariance: KalmanState) -> PositionFix {
        var quality = lastFixQuality
        if configuration.coupling == .tight || epochUsed > 0 {
            let det = epochA00 * epochA11 - epochA01 * epochA01
            let hdop = det > 1e-12 ? ((epochA00 + epochA11) / det).squareRoot() : 0
            quality = FixQuality(hdop: hdop, pdop: hdop,
                                 residualRMSMeters: epochUsed > 0 ? (epochResidualSquares / Double(epochUsed)).squareRoot() : 0,
                                 locatorsUsed: epochUsed, rejected: epochRejected)
        }
        return PositionFix(timeSeconds: t, tag: tag, floor: floor,
                           position: Point3(x: mean.x[0], y: mean.x[1], z: tagHeightMeters),
                           velocity: Vector3(x: mean.x[2], y: mean.x[3], z: 0),
                           covariance: SymmetricMatrix3(xx: covariance[0, 0], xy: covariance[0, 1], yy: covariance[1, 1], zz: 0),
                           quality: quality)
    }
}
