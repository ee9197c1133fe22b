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
    /// Tightly coupled: there is no state (yet). A range is kept for initialisation; range differences
    /// are not — the engine seeds the filter (see `TrackFilter.update(differences:locators:addresses:)`).
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
/// With interacting models (the default) the four models live in one `InteractingModels` value (C
/// kernel `locus_imm.c`): they interact once per ranging round (`interactionIntervalSeconds`) and each
/// takes the round's ranges on its own in between; the single-model filter uses the Joseph-form
/// kernels of `locus_kalman.h` (both behind `TrackMotion`). Each epoch's fix carries the epoch's
/// quality figures (`TrackEpochQuality`). No heap allocation per measurement as long as the filter is
/// mutated in place (keep one per tag, e.g. in an array indexed by tag; a copied filter copies its
/// small range buffer on the next write).
///
/// Use: `update(correctedRangeMeters:timeSeconds:address:anchor:)` per range (tightly coupled),
/// `update(differences:locators:addresses:)` per epoch of range differences (TDoA, tightly coupled;
/// seeded by the engine, see there) or `update(fix:)` per least-squares fix (loosely coupled), then
/// `closeEpoch(atSeconds:)` once per epoch.
package struct TrackFilter: Sendable {
    /// The parameters (fixed for the life of the filter), held by reference so that the filters of
    /// many tags share one copy (memory per tracked tag).
    let shared: TrackFilterConfiguration.Shared
    /// The parameters (fixed for the life of the filter).
    var configuration: TrackFilterConfiguration { shared.value }
    /// The tag tracked.
    let tag: TagID
    /// The floor the tag is on.
    let floor: FloorID
    /// The known tag height h used by planar range updates, metres.
    let tagHeightMeters: Double

    /// The current state, nil before initialisation (and after a divergence). With interacting
    /// models, their moment-matched combination (computed on demand).
    var state: KalmanState? { isTracking ? motion.combined(shared) : nil }
    /// The motion model(s): interacting models or the single-model baseline.
    var motion = TrackMotion()
    /// Time of `state`, seconds.
    var stateSeconds: Double = 0
    /// Time of the last accepted (or initialising) measurement, seconds.
    var lastUpdateSeconds: Double = -Double.infinity
    /// The state right after the last accepted measurement (reported fixes coast from it); nil without
    /// a state. Also a close seed for an epoch's least-squares solve.
    var meanAtLastUpdate: SIMD4<Double>? { isTracking ? lastMean.vector : nil }
    /// `meanAtLastUpdate`'s value, meaningful while `isTracking` (not an optional: 32 bytes, not 48).
    /// Stored, like `isTracking`: read on an element of an engine's array of filters, a computed
    /// property's getter had the whole 1 KB filter copied out first (`filters[tag].meanAtLastUpdate`).
    package internal(set) var lastMean = Mean(.zero)

    /// `rejectionScore` and `initializationCount` in 32 bits (beside the flag, in one word).
    private var rejections: Int32 = 0
    private var initializations: Int32 = 0
    /// Gate hysteresis score: +1 per gated, −1 per accepted measurement (never below 0); a confirmed
    /// track's round that keeps two or fewer counts only its gated ones (`scoreUncheckedRound`).
    var rejectionScore: Int {
        get { Int(rejections) }
        set { rejections = Int32(clamping: newValue) }
    }
    /// Number of (re-)initialisations so far.
    private(set) var initializationCount: Int {
        get { Int(initializations) }
        set { initializations = Int32(clamping: newValue) }
    }
    /// The last error met (E4005 on divergence), if any.
    var lastError: LocusError? {
        divergedAtSeconds.isNaN ? nil
            : LocusError(.filterDivergence, "tag \(tag): filter state not finite at t = \(divergedAtSeconds) s; re-initialising")
    }
    /// When the state last went non-finite; NaN when it never did (the error is built on demand, and
    /// a time is finite: no optional's extra word).
    private var divergedAtSeconds = Double.nan
    /// μ with nothing learnt: each of the IMM's four models equally likely (also a filter without a state).
    static let uniformModeProbabilities = SIMD4<Double>(repeating: 0.25)
    /// IMM model probabilities μ = (still, steady, manoeuvring, agile) with the likelihoods of the
    /// measurements since the last interaction folded in; (¼, ¼, ¼, ¼) without models.
    /// `mutating` only to read the models in place and let them keep the result for the next
    /// interaction (`InteractingModels.probabilities`); the track is not changed.
    var modeProbabilities: SIMD4<Double> {
        mutating get {
            guard isTracking, configuration.usesInteractingModels else { return Self.uniformModeProbabilities }
            return motion.probabilities
        }
    }

    var buffer = TrackRangeBuffer()
    /// The track's estimate R̂ of the range variance from its innovations (m²; unclamped, may be below 0
    /// for a while), kept across re-initialisations: it describes the ranges, not the track.
    /// `rangeVarianceSquareMeters` is what the ranges are taken with.
    var rangeVarianceEstimate: Double
    /// Time of the epoch that last taught `rangeVarianceEstimate`, seconds (−∞: none yet).
    var rangeVarianceSeconds = -Double.infinity
    /// The current epoch's figures (tightly coupled), restarted by `closeEpoch`.
    var epoch = TrackEpochQuality()
    /// (These two flags sit in the epoch figures' tail padding: the filter is 1,080 bytes, not 1,088.)
    /// Whether there is a state (initialised and not diverged since): `state != nil` without building
    /// the combination (which costs a mixture of the models and, with pending likelihoods, two
    /// exponentials).
    package private(set) var isTracking = false
    /// Whether the round after the one that started the track was taken (as it came when none of it
    /// was gated, else without what the robust solve rejects in it); until then each round of several
    /// ranges is judged as a whole (`updateRound`).
    var isConfirmed = false
    /// What only some filters keep, boxed: the default tightly coupled filter of a live engine sets
    /// neither and carries 8 bytes, not 88 or more (memory per tracked tag) — the quality of the last
    /// least-squares fix taken (loosely coupled only) and an offline pass's journal
    /// (`TrackFilter+Journal.swift`).
    private var extras: TrackFilterExtras?
    private var lastFixQuality: FixQuality {
        get { extras?.fixQuality ?? FixQuality(hdop: 0, pdop: 0, residualRMSMeters: 0, locatorsUsed: 0) }
        set { uniqueExtras().fixQuality = newValue }
    }

    /// The extras, for writing: in place once allocated and not shared; a fresh copy when shared with a
    /// copy of this filter (value semantics: a probe's journal is its own).
    mutating func uniqueExtras() -> TrackFilterExtras {
        if isKnownUniquelyReferenced(&extras), let box = extras { return box }
        let box = extras.map { TrackFilterExtras(copying: $0) } ?? TrackFilterExtras()
        extras = box
        return box
    }

    /// The journal of ranges taken, when one is kept (`startJournal()`): nil on a live filter.
    var journal: [TrackJournalEntry]? { extras?.journal }

    /// A filter with no state yet, on a configuration of its own (the tests'; the engine and the
    /// benchmarks share one: `init(shared:tag:floor:tagHeightMeters:)`).
    init(configuration: TrackFilterConfiguration = .standard, tag: TagID, floor: FloorID,
                 tagHeightMeters: Double = 0) {
        self.init(shared: TrackFilterConfiguration.Shared(configuration), tag: tag, floor: floor, tagHeightMeters: tagHeightMeters)
    }

    /// A filter with no state yet, on a configuration shared with other filters (an engine keeps
    /// one `Shared` for all its tags).
    package init(shared: TrackFilterConfiguration.Shared, tag: TagID, floor: FloorID, tagHeightMeters: Double = 0) {
        self.shared = shared
        rangeVarianceEstimate = shared.value.rangeSigmaMeters * shared.value.rangeSigmaMeters
        self.tag = tag
        self.floor = floor
        self.tagHeightMeters = tagHeightMeters
    }

    /// Predicts the state to time t (no-op before initialisation or for t ≤ the state's time).
    /// x ← F x, P ← F P Fᵀ + Q over Δt = t − t_state, for each model with its own q. With interacting
    /// models, when the last interaction is `interactionIntervalSeconds` or more ago the models first
    /// mix (μ_{i|j} = π_ij μ_i / c_j, c_j = Σ_i π_ij μ_i, x₀ⱼ = Σ_i μ_{i|j} xᵢ,
    /// P₀ⱼ = Σ_i μ_{i|j}(Pᵢ + (xᵢ − x₀ⱼ)(xᵢ − x₀ⱼ)ᵀ), μ ← c; π: stay 1 − p, move p/2 to each other
    /// model, p = 1 − e^(−λΔt) over the time since the last interaction).
    mutating func predict(toSeconds t: Double) {
        guard isTracking, t > stateSeconds else { return }
        guard case .accepted = motion.predict(toSeconds: t, fromSeconds: stateSeconds, shared) else { diverge(at: t); return }
        stateSeconds = t
    }

    /// Sets the state directly (e.g. a prior, or the engine's seed of a difference-only track: see
    /// `update(differences:locators:addresses:)`), as if a measurement had initialised it at time t
    /// (seconds): every model at `initial`, μ uniform, the rejection score 0, one more initialisation.
    mutating func reset(to initial: KalmanState, atSeconds t: Double) {
        isTracking = true
        isConfirmed = false
        motion.reset(to: initial, atSeconds: t, shared)
        stateSeconds = t
        lastUpdateSeconds = t
        lastMean = Mean(initial.x)
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
        update(fix: fix, atSeconds: fix.timeSeconds)
    }

    /// `update(fix:)` with the fix taken as measured at t seconds instead of at its own time (the
    /// smoother's backward pass runs the filter at −t without copying each fix to change its time;
    /// the filter reads a fix's position, covariance and quality, never its velocity).
    @discardableResult
    mutating func update(fix: PositionFix, atSeconds t: Double) -> TrackUpdateOutcome {
        let c = fix.covariance
        guard fix.position.isFinite, t.isFinite, c.isFinite, c.xx > 0, c.yy > 0, c.xx * c.yy > c.xy * c.xy else {
            return .unusable
        }
        var initializing = false
        if !isTracking || t - lastUpdateSeconds > configuration.reinitializeAfterSeconds || t < stateSeconds {
            initializing = true
        } else {
            predict(toSeconds: t)
            if !isTracking { initializing = true }
        }
        if initializing {
            reset(to: prior(x: fix.position.x, y: fix.position.y), atSeconds: t)
        }
        // The gate is tested on the most permissive model (IMM: the manoeuvring one), so that a
        // confident steady model cannot lock the track out during a manoeuvre.
        switch updatePosition(with: fix, atSeconds: t, gate: initializing ? Double.infinity : configuration.fixGateChiSquare) {
        case .accepted:
            lastFixQuality = fix.quality
            return initializing ? .initialized : .accepted
        case .gated:
            rejectionScore += 1
            if rejectionScore >= configuration.fixGateOpenScore {
                // The gate opens: take the fix ungated (the manoeuvring model absorbs the jump).
                guard case .accepted = updatePosition(with: fix, atSeconds: t, gate: .infinity) else { diverge(at: t); return .diverged }
                lastFixQuality = fix.quality
                return .accepted
            }
            return .gated
        default:
            diverge(at: t)
            return .diverged
        }
    }

    /// Position update of the state (every model; gated on the manoeuvring one) with the fix; on
    /// acceptance the measurement counts as the last update, at t seconds.
    private mutating func updatePosition(with fix: PositionFix, atSeconds t: Double, gate: Double) -> KalmanOutcome {
        let c = fix.covariance
        let (outcome, mean) = motion.updatePosition(zx: fix.position.x, zy: fix.position.y, rxx: c.xx, rxy: c.xy, ryy: c.yy,
                                                    gate: gate, shared)
        if case .accepted = outcome { accept(at: t, mean: mean) }
        return outcome
    }

    // MARK: tightly coupled

    /// Tightly coupled EKF update with one range r to the locator `address` at `anchor` (metres), its
    /// bias already removed (r = `Locator.correctedRange`), the tag at height h:
    /// h(x) = √((px−xᵢ)² + (py−yᵢ)² + (h−zᵢ)²), y = r − h(x), S = HPHᵀ + σ_r², gate on ν = y/√S
    /// (asymmetric: NLOS ranges are long), update at the range's own timestamp. Before initialisation
    /// (and after a gap or an opened gate) ranges are buffered until `initializationLocators` distinct
    /// locators give a least-squares position (within `initializationWindowSeconds`, or one round-robin
    /// cycle: `initializeFromBuffer`). The filter's one range entry point (the engine's
    /// per-range path: the locator's position passed on its own, not a whole `Locator`); `anchor`
    /// must be finite (the engine checks every locator once, when it is made).
    /// With a journal kept (`startJournal()`), the range and what became of it are written to it.
    @discardableResult
    package mutating func update(correctedRangeMeters r: Double, timeSeconds t: Double, address: LocatorAddress,
                                 anchor: Point3) -> TrackUpdateOutcome {
        guard extras?.journal != nil else { return take(correctedRangeMeters: r, timeSeconds: t, address: address, anchor: anchor) }
        let before = initializationCount
        let outcome = take(correctedRangeMeters: r, timeSeconds: t, address: address, anchor: anchor)
        record(rangeAtSeconds: t, address: address, outcome: outcome, started: initializationCount != before)
        return outcome
    }

    /// `update(correctedRangeMeters:timeSeconds:address:anchor:)` without the journal.
    @inline(__always)
    private mutating func take(correctedRangeMeters r: Double, timeSeconds t: Double, address: LocatorAddress,
                               anchor: Point3) -> TrackUpdateOutcome {
        guard Self.isUsable(rangeMeters: r, timeSeconds: t) else { return .unusable }
        buffer.insert(address: address, anchor: anchor, rangeMeters: r, timeSeconds: t)
        if startsTrack(atSeconds: t) { return initializeFromBuffer(at: t) }
        // Prediction and update in one kernel call; gated on the most permissive model (IMM:
        // manoeuvring), see `update(fix:)`.
        // An accepted range is counted in the epoch's figures by the update itself.
        let (outcome, mean, predicted) = motion.predictAndUpdateRange(
            toSeconds: t, fromSeconds: stateSeconds, anchor: anchor, tagHeightMeters: tagHeightMeters, rangeMeters: r,
            varianceSquareMeters: rangeVarianceSquareMeters, epoch: &epoch, shared)
        if predicted, case .accepted = outcome {
            stateSeconds = max(stateSeconds, t)
            accept(at: t, mean: mean)
            return .accepted
        }
        return refused(outcome, predicted: predicted, at: t, address: address)
    }

    /// What follows a range's prediction and update that did not end accepted (at t, seconds, from
    /// the locator `address`): a failed prediction drops the track, a gated range counts towards
    /// opening the gate, a diverged update drops the track.
    private mutating func refused(_ outcome: KalmanOutcome, predicted: Bool, at t: Double, address: LocatorAddress) -> TrackUpdateOutcome {
        if !predicted {
            diverge(at: t)
            return initializeFromBuffer(at: t)
        }
        stateSeconds = max(stateSeconds, t)
        switch outcome {
        case .accepted:
            preconditionFailure("TrackFilter.refused: an accepted update")
        case .gated:
            epoch.reject(address)
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

    /// A round's ranges in arrival order — `ranges[k]` (m, bias and offset removed) to the locator
    /// `addresses[k]` at `anchors[k]`, at `times[k]` (s) —: the same as `update(correctedRangeMeters:…)`
    /// for each in turn (the same state, outcomes and epoch figures, bit for bit), with the ranges that
    /// are accepted applied by one kernel call (`locus_imm_update_ranges`) instead of one call each and
    /// their bookkeeping done there. A range that is not accepted (gated, before the track starts, after
    /// a gap, diverged) and the single-model baseline take the per-range path. The round that starts
    /// the track and the round after it are judged as a whole (`updateRound`: a start that its round
    /// gates is taken from the whole round instead; the next round, if any of it is gated, again
    /// without what the robust solve rejects). All four buffers hold the same count. The spans are
    /// read in place.
    package mutating func update(rangesMeters ranges: Span<Double>, timesSeconds times: Span<Double>,
                                 anchors: Span<Point3>, addresses: Span<LocatorAddress>) {
        ranges.withUnsafeBufferPointer { ranges in
            times.withUnsafeBufferPointer { times in
                anchors.withUnsafeBufferPointer { anchors in
                    addresses.withUnsafeBufferPointer { addresses in
                        updateRound(rangesMeters: ranges, timesSeconds: times, anchors: anchors, addresses: addresses)
                    }
                }
            }
        }
    }

    /// `update(rangesMeters:timesSeconds:anchors:addresses:)` over the spans' buffers, once the round was
    /// found not to need judging (`updateRound`): the ranges in turn, the accepted ones in kernel calls.
    /// Returns the number of ranges gated.
    @inline(__always)
    mutating func updateEach(rangesMeters ranges: UnsafeBufferPointer<Double>, timesSeconds times: UnsafeBufferPointer<Double>,
                             anchors: UnsafeBufferPointer<Point3>, addresses: UnsafeBufferPointer<LocatorAddress>) -> Int {
        let n = ranges.count
        precondition(times.count == n && anchors.count == n && addresses.count == n, "TrackFilter.update: buffers of one count")
        var k = 0, gated = 0
        // A journal wants each range's outcome: the per-range path.
        let batches = extras?.journal == nil
        while k < n {
            if isTracking && batches {
                var run = InteractingModels.RangeRun(stateSeconds: stateSeconds, lastUpdateSeconds: lastUpdateSeconds,
                                                     reinitializeAfterSeconds: configuration.reinitializeAfterSeconds,
                                                     rejectionScore: rejectionScore)
                let stop = k + motion.updateRanges(times: UnsafeBufferPointer(rebasing: times[k...]),
                                                   anchors: UnsafeBufferPointer(rebasing: anchors[k...]),
                                                   ranges: UnsafeBufferPointer(rebasing: ranges[k...]),
                                                   tagHeightMeters: tagHeightMeters, varianceSquareMeters: rangeVarianceSquareMeters,
                                                   run: &run, epoch: &epoch, shared)
                if stop > k {
                    // What `update` does per accepted range, in its order: the range kept for a
                    // re-initialisation, the track's times, its mean, the gate's score (the kernel kept
                    // the epoch's sums).
                    for j in k..<stop { buffer.insert(address: addresses[j], anchor: anchors[j], rangeMeters: ranges[j], timeSeconds: times[j]) }
                    stateSeconds = run.stateSeconds
                    lastUpdateSeconds = run.lastUpdateSeconds
                    lastMean = Mean(run.mean)
                    rejectionScore = run.rejectionScore
                    k = stop
                }
                guard k < n else { return gated }
                if let (outcome, predicted) = run.stop {
                    // The kernel ran on range k and did not accept it: `update`'s steps after its kernel call.
                    buffer.insert(address: addresses[k], anchor: anchors[k], rangeMeters: ranges[k], timeSeconds: times[k])
                    if refused(outcome, predicted: predicted, at: times[k], address: addresses[k]) == .gated { gated += 1 }
                    k += 1
                    continue
                }
            }
            if update(correctedRangeMeters: ranges[k], timeSeconds: times[k], address: addresses[k], anchor: anchors[k]) == .gated {
                gated += 1
            }
            k += 1
        }
        return gated
    }

    /// Ends the track without an error (it is to be re-seeded): no state, no last update.
    mutating func dropTrack() {
        isTracking = false
        lastUpdateSeconds = -Double.infinity
    }

    // MARK: output

    /// The filter's fix at time t without changing the filter: the state predicted to t, except that the
    /// mean is extrapolated at most `maximumCoastSeconds` past the last accepted measurement (no drift
    /// through an outage) while the covariance keeps growing as F P Fᵀ + Q. Nil before initialisation.
    func fix(atSeconds t: Double) -> PositionFix? {
        guard let current = state else { return nil }
        return fix(atSeconds: t, current: current)
    }

    /// The fix at the state's own time (nil before initialisation).
    var currentFix: PositionFix? { fix(atSeconds: stateSeconds) }

    /// Ends an epoch at time t: predicts to t (within `maximumCoastSeconds` of the last update) and
    /// returns the fix there with the epoch's quality figures (locators used and rejected, HDOP of
    /// the accepted ranges, residual RMS), then starts the next epoch's figures. Nil (the figures
    /// restarted all the same) when the filter has no state.
    package mutating func closeEpoch(atSeconds t: Double) -> PositionFix? {
        defer { epoch = TrackEpochQuality() }
        if t - lastUpdateSeconds <= configuration.maximumCoastSeconds { predict(toSeconds: t) }
        guard isTracking else { return nil }
        // The round's likelihoods go into μ now: the fix's combination and the next interaction then
        // need no exponentials. At the models' own time (the usual case: the epoch's last range) the
        // fix needs the mean and the position covariance only; later, the whole state is predicted to t.
        let closed: PositionFix
        if t <= stateSeconds, let (mean, a) = motion.settledPosition(shared) {
            closed = fix(atSeconds: t, mean: mean, xx: a.xx, xy: a.xy, yy: a.yy)
        } else {
            closed = fix(atSeconds: t, current: motion.settledCombination(shared))
        }
        learnRangeVariance(atSeconds: t, covariance: closed.covariance)
        return closed
    }

    /// `fix(atSeconds:)` from the current (combined) state.
    @inline(__always)
    private func fix(atSeconds t: Double, current: KalmanState) -> PositionFix {
        var covarianceState = current
        if t > stateSeconds {
            _ = KalmanKernels.predict(&covarianceState, overSeconds: t - stateSeconds, processNoiseDensity: configuration.processNoiseDensity)
        }
        return fix(atSeconds: t, mean: covarianceState.x, xx: covarianceState.p[0], xy: covarianceState.p[1], yy: covarianceState.p[5])
    }

    /// The fix at time t from the state's mean and position covariance there (m²).
    @inline(__always)
    private func fix(atSeconds t: Double, mean stateMean: SIMD4<Double>, xx: Double, xy: Double, yy: Double) -> PositionFix {
        var mean = stateMean
        let coastEnd = lastUpdateSeconds + configuration.maximumCoastSeconds
        if t > coastEnd, let anchor = meanAtLastUpdate {
            // Coast at most `maximumCoastSeconds` past the last update: x = (p + T·v, v) (only the
            // mean is extrapolated; the covariance keeps growing above).
            let coast = configuration.maximumCoastSeconds
            mean = SIMD4(anchor[0] + coast * anchor[2], anchor[1] + coast * anchor[3], anchor[2], anchor[3])
        }
        let quality = configuration.coupling == .tight || epoch.rangesUsed > 0 ? epoch.fixQuality : lastFixQuality
        return PositionFix(timeSeconds: max(t, stateSeconds), tag: tag, floor: floor,
                           position: Point3(x: mean[0], y: mean[1], z: tagHeightMeters),
                           velocity: Vector3(x: mean[2], y: mean[3], z: 0),
                           covariance: SymmetricMatrix3(xx: xx, xy: xy, yy: yy, zz: 0),
                           quality: quality)
    }

    // MARK: internals

    private func prior(x: Double, y: Double) -> KalmanState {
        KalmanState(px: x, py: y, positionSigmaMeters: configuration.initialPositionSigmaMeters,
                    velocitySigmaMetersPerSecond: configuration.initialVelocitySigmaMetersPerSecond)
    }

    private mutating func accept(at t: Double, mean: SIMD4<Double>) {
        lastUpdateSeconds = t
        lastMean = Mean(mean)
        rejectionScore = max(0, rejectionScore - 1)
    }

    mutating func diverge(at t: Double) {
        isTracking = false
        lastUpdateSeconds = -Double.infinity
        divergedAtSeconds = t
    }

    /// Starts the track from the buffered ranges (`TrackRangeBuffer.solve`: the locators heard within
    /// `initializationWindowSeconds` of t, or one round-robin cycle within `initializationCycleSeconds`)
    /// at the solve's time (t, or the cycle's mean time): x₀ = (x, y, 0, 0), P₀ = [[R, 0], [0, σ_v² I]],
    /// R the solve's (x, y) covariance (m²), σ_v = `initialVelocitySigmaMetersPerSecond`. `.buffered`
    /// (and a track older than `reinitializeAfterSeconds` dropped) when the buffer cannot give a position.
    mutating func initializeFromBuffer(at t: Double) -> TrackUpdateOutcome {
        guard let p = buffer.solve(newestSeconds: t, windowSeconds: configuration.initializationWindowSeconds,
                                   cycleSeconds: configuration.initializationCycleSeconds,
                                   tagHeightMeters: tagHeightMeters, minimumLocators: configuration.initializationLocators,
                                   sigmaMeters: configuration.rangeSigmaMeters) else {
            if isTracking && t - lastUpdateSeconds > configuration.reinitializeAfterSeconds {
                isTracking = false
            }
            return .buffered
        }
        let sv = configuration.initialVelocitySigmaMetersPerSecond
        var p0 = SIMD16<Double>(repeating: 0)
        p0[0] = p.cxx; p0[1] = p.cxy; p0[4] = p.cxy; p0[5] = p.cyy; p0[10] = sv * sv; p0[15] = sv * sv
        reset(to: KalmanState(x: SIMD4(p.x, p.y, 0, 0), p: p0), atSeconds: p.timeSeconds)
        return .initialized
    }
}

/// What only some filters keep (see `TrackFilter.extras`): a loosely coupled filter's last fix quality,
/// an offline pass's journal.
final class TrackFilterExtras: @unchecked Sendable {
    // Mutated only through `TrackFilter.uniqueExtras()`, after a uniqueness check (copy on write).
    var fixQuality: FixQuality?
    var journal: [TrackJournalEntry]?
    init() {}
    init(copying other: TrackFilterExtras) {
        fixQuality = other.fixQuality
        journal = other.journal
    }
}
