import LocusNumerics

/// Parameters of the tracking filter and the smoother (state apart: see `TrackFilter`).
package struct TrackFilterConfiguration: Sendable, Hashable {
    /// How measurements enter the filter.
    package enum Coupling: Sendable, Hashable {
        /// Each range is an EKF update at its own timestamp (works with any number of ranges per epoch).
        case tight
        /// Least-squares fixes with their covariance are the measurements.
        case loose
    }

    /// The default measurement form (chosen by the figures in docs/tracking.md).
    package var coupling: Coupling
    /// White-noise acceleration density q of the constant-velocity model, m²/s³ (single-model filter,
    /// and the smoother when no mode history is available).
    var processNoiseDensity: Double
    /// Interacting multiple models: a standing-still model (velocity zero) and three constant-velocity
    /// models, "steady" (q_low), "manoeuvring" (q_high) and "agile" (q_agile, between them), mixed by an
    /// IMM with Markov switching; false runs the single constant-velocity model with q.
    var usesInteractingModels: Bool
    /// q of the steady model (walking straight, standing), m²/s³.
    var lowProcessNoiseDensity: Double
    /// q of the manoeuvring model (turns, starts, stops), m²/s³.
    var highProcessNoiseDensity: Double
    /// q of the agile model, m²/s³: motion that keeps changing without sharp manoeuvres — a robot
    /// turning every few seconds in a maze, a walker weaving (issue #42: on the real recordings the
    /// steady model lagged through such turns while the manoeuvring one was too noisy to win;
    /// docs/tracking.md, "Four models").
    var agileProcessNoiseDensity: Double
    /// Position random-walk density of the standing-still model, m²/s.
    var stillPositionNoiseDensity: Double
    /// Velocity σ of the standing-still model (its velocity is zero), m/s.
    var stillVelocitySigmaMetersPerSecond: Double
    /// Mode switching rate λ of the IMM's Markov chain: P(switch within Δt) = 1 − e^(−λΔt), 1/s.
    var modeSwitchesPerSecond: Double
    /// The IMM's models interact (mix) at most once per this many seconds, at the first measurement
    /// past it — once per ranging round at 4 Hz; in between each model takes the round's ranges on
    /// its own and their likelihoods are folded into μ at the next interaction, seconds.
    var interactionIntervalSeconds: Double
    /// The smoother scales the IMM-weighted q by this (it sees both sides of a manoeuvre, so it needs
    /// less process noise than the causal filter; 0.25 measured best with smoothed mode
    /// probabilities, docs/tracking.md).
    var smootherProcessNoiseScale: Double
    /// Mode switching rate of the IMM passes (forward and backward) that drive the smoother's per-step
    /// q, 1/s (the causal filter uses `modeSwitchesPerSecond`, tuned for NEES consistency; 0.2
    /// measured best offline).
    var smootherModeSwitchesPerSecond: Double
    /// The smoother's qₖ uses the smoothed mode probabilities averaged over the nodes within this
    /// many seconds of node k (either side): a manoeuvre's q then covers its whole extent, not only the
    /// instants where its model wins, seconds (1 measured best: 0.125–3 tried, docs/tracking.md).
    var smootherModeWindowSeconds: Double
    /// Range noise σ_r used in tightly coupled updates, metres: the most the filter assumes. With
    /// `rangeVarianceTimeConstantSeconds` > 0 each track takes the variance its own innovations show when
    /// that is smaller (`TrackFilter.rangeVarianceSquareMeters`).
    package var rangeSigmaMeters: Double
    /// Time constant τ of each track's estimate of the range variance from its innovations, seconds
    /// (issue #42, "a filter that earns its keep"): every epoch with ranges gives the sample
    /// s = (Σ yₖ² − tr(P A)) / n over its n accepted ranges (yₖ the innovation, A = Σ HₖᵀHₖ, P the
    /// position covariance at the epoch's fix), blended as R̂ ← R̂ + (1 − e^(−Δt/τ))(s − R̂) over the Δt
    /// since the last one — a rate in seconds, the same for a 4 Hz and a 100 Hz stream. The ranges are then
    /// taken with R = min(σ_r², max((f σ_r)², R̂)), f = `rangeSigmaFloorFraction`. 0 keeps R = σ_r².
    /// Why (docs/tracking.md, "Real recordings"): on real recordings the range error is largely slow, so
    /// the innovations scatter less than σ_r while the filter, crediting every range as independent,
    /// smooths over a span that depends on the range rate; 2 s measured best of 2, 5, 10 and 30 s.
    var rangeVarianceTimeConstantSeconds: Double
    /// The filter's range σ is never taken below this fraction of σ_r (m/m).
    var rangeSigmaFloorFraction: Double
    /// An epoch teaches the range-variance estimate only while the tag has heard at least this many
    /// locators within τ: with fewer (a 4-locator floor: x, y and the tag's range offset leave one
    /// redundant range a round) a locator's slow error goes into the position and the innovations
    /// understate R (the CUHK-SZ 4-locator subsets got worse with it, fast corners 0.0998 → 0.1019 m, and their
    /// smoother fell above causal). The per-locator bias estimator's bound (epochs of ≥ 6 ranges).
    var rangeVarianceMinimumLocators: Int
    /// Range gate, long side: a range whose normalised innovation ν = y/√S exceeds this is rejected by the
    /// single-model filter and the 3-D track (NLOS makes ranges long, so this side is tight); the IMM takes
    /// it up to `rangeGateShortSigmas` with its variance raised so that ν = 1.5 (`locus_measurement_soft_excess`,
    /// docs/tracking.md "Real recordings").
    var rangeGateLongSigmas: Double
    /// Range gate, short side: ν < −this is rejected (the IMM: |ν| > this, either side).
    var rangeGateShortSigmas: Double
    /// Fix gate: a fix whose NIS = yᵀS⁻¹y exceeds this χ²(2) quantile is rejected (13.82 = 99.9 %).
    var fixGateChiSquare: Double
    /// Hysteresis: the rejection score rises by 1 per gated measurement and falls by 1 per accepted one;
    /// at this score the gate opens and the track is re-acquired from the latest measurements.
    /// Counted in ranges: 8, a whole round of 8 locators net of accepted ranges, so that one round whose
    /// ranges run long together (real recordings: errors correlated across a round, 100 Hz rounds) does
    /// not throw the track away; 6 (under one round) re-acquired the CUHK-SZ fast tags 1 and 2 from one
    /// noisy least-squares fix (docs/tracking.md, "Real recordings").
    var gateOpenScore: Int
    /// The same for loosely coupled fixes, counted in fixes: each fix already passed the robust
    /// solver's outlier rejection, so two gated fixes in a row (0.5 s at 4 Hz) mean the tag really
    /// moved unlike the model (a sharp turn) and the gate opens.
    var fixGateOpenScore: Int
    /// After this long without an accepted measurement the track is re-initialised, seconds.
    package var reinitializeAfterSeconds: Double
    /// Reported fixes extrapolate the mean at most this far past the last accepted measurement
    /// (the covariance keeps growing), seconds.
    var maximumCoastSeconds: Double
    /// Prior σ of the position at initialisation from a fix, metres.
    var initialPositionSigmaMeters: Double
    /// Prior σ of the velocity at initialisation, m/s.
    var initialVelocitySigmaMetersPerSecond: Double
    /// Tightly coupled initialisation: distinct locators needed within the window.
    var initializationLocators: Int
    /// Tightly coupled initialisation: ranges older than this (relative to the newest) are ignored, seconds.
    var initializationWindowSeconds: Double
    /// Tightly coupled initialisation when fewer than `initializationLocators` locators were heard
    /// within `initializationWindowSeconds`: the newest range of each of that many most recently heard
    /// locators within this longer window, taken at their mean time (a tag that ranges to one locator
    /// at a time, in turn: one round-robin cycle; `TrackRangeBuffer.solve`), seconds; 0 turns it off.
    var initializationCycleSeconds: Double
    /// Tightly coupled: a round of several ranges that starts the track, and the round after it, are
    /// judged as a whole against the robust least-squares solve of the round (`TrackFilter.updateRound`);
    /// false takes them one range at a time like every later round.
    var judgesStartingRounds: Bool
    /// Tightly coupled: a confirmed track whose round refuses ranges that fit its mirror image across a
    /// line of locators bounding the round (a corridor's row, a room's wall) is mirrored there
    /// (`TrackFilter.mirrorIfReflectionFits`); false never mirrors.
    var mirrorsAcrossLocatorLines = true
    /// Tightly coupled: a confirmed track's round that refused ranges and kept at most two (nothing left
    /// to check the track) counts only its refusals towards `gateOpenScore`
    /// (`TrackFilter.scoreUncheckedRound`); false: every accepted range counts against them.
    var gateCountsUncheckedRounds = true
    /// A range-difference group at most this much older than the track's time is applied at the track's
    /// time, without prediction (a hybrid tag's ranges may have carried the track past a blink whose
    /// difference epoch closed later); an older one drops the track for re-seeding
    /// (`TrackFilter.update(differences:locators:addresses:)`), seconds.
    var differenceLatenessSeconds: Double
    /// Floors solved in 3-D (`SpatialTrack`): white-noise acceleration density q_h of the 3-D
    /// constant-velocity model on each horizontal axis, m²/s³ (docs/tracking.md, "Spatial floors").
    var spatialProcessNoiseDensity: Double = 0.5
    /// Floors solved in 3-D: the density q_v on the vertical axis, m²/s³.
    var spatialVerticalProcessNoiseDensity: Double = 0.5
    /// Floors solved in 3-D: σ_h of the height prior, metres (0: none). Where the ranges leave the
    /// tag's height less certain than σ_h (P_zz > σ_h²: nearly horizontal lines of sight, e.g. anchors
    /// at one height far from the tag), each epoch's state takes z = the floor's `tagHeightM` with
    /// variance σ_h² (docs/tracking.md, "Spatial floors").
    var spatialHeightPriorSigmaMeters: Double = 0.5
    /// Floors solved in 3-D: after this many epochs in a row each with a refused range the track drops
    /// and is re-seeded from the epoch's least-squares fix (0: never). With 4 locators in 3-D a track can
    /// drift in height where the lines of sight hold little of it (the tag at the low locators' height)
    /// and then refuse one locator's ranges every epoch while accepting the other three: the per-range
    /// score (`gateOpenScore`) falls by 3 for each 1 it rises and never opens the gate (docs/tracking.md,
    /// "Spatial floors").
    var spatialGateOpenEpochs: Int = 8

    /// Creates a configuration; every argument defaults to the value of `standard`.
    package init(coupling: Coupling = .tight, processNoiseDensity: Double = 0.2, usesInteractingModels: Bool = true,
                 lowProcessNoiseDensity: Double = 0.001, highProcessNoiseDensity: Double = 1.0,
                 agileProcessNoiseDensity: Double = 0.05,
                 stillPositionNoiseDensity: Double = 1e-5, stillVelocitySigmaMetersPerSecond: Double = 0.02,
                 modeSwitchesPerSecond: Double = 0.05, interactionIntervalSeconds: Double = 0.1, smootherProcessNoiseScale: Double = 0.25,
                 smootherModeSwitchesPerSecond: Double = 0.2, smootherModeWindowSeconds: Double = 1.0, rangeSigmaMeters: Double = 0.1,
                 rangeVarianceTimeConstantSeconds: Double = 2.0, rangeSigmaFloorFraction: Double = 0.25,
                 rangeVarianceMinimumLocators: Int = 6,
                 rangeGateLongSigmas: Double = 2.5, rangeGateShortSigmas: Double = 4.0, fixGateChiSquare: Double = 13.82,
                 gateOpenScore: Int = 8, fixGateOpenScore: Int = 2, reinitializeAfterSeconds: Double = 2.0, maximumCoastSeconds: Double = 1.0,
                 initialPositionSigmaMeters: Double = 10, initialVelocitySigmaMetersPerSecond: Double = 1.5,
                 initializationLocators: Int = 4, initializationWindowSeconds: Double = 0.3,
                 initializationCycleSeconds: Double = 1.0, judgesStartingRounds: Bool = true, differenceLatenessSeconds: Double = 0.1) {
        self.coupling = coupling
        self.processNoiseDensity = processNoiseDensity
        self.usesInteractingModels = usesInteractingModels
        self.lowProcessNoiseDensity = lowProcessNoiseDensity
        self.highProcessNoiseDensity = highProcessNoiseDensity
        self.agileProcessNoiseDensity = agileProcessNoiseDensity
        self.modeSwitchesPerSecond = modeSwitchesPerSecond
        self.interactionIntervalSeconds = interactionIntervalSeconds
        self.stillPositionNoiseDensity = stillPositionNoiseDensity
        self.smootherProcessNoiseScale = smootherProcessNoiseScale
        self.smootherModeSwitchesPerSecond = smootherModeSwitchesPerSecond
        self.smootherModeWindowSeconds = smootherModeWindowSeconds
        self.stillVelocitySigmaMetersPerSecond = stillVelocitySigmaMetersPerSecond
        self.rangeSigmaMeters = rangeSigmaMeters
        self.rangeVarianceTimeConstantSeconds = rangeVarianceTimeConstantSeconds
        self.rangeSigmaFloorFraction = rangeSigmaFloorFraction
        self.rangeVarianceMinimumLocators = rangeVarianceMinimumLocators
        self.rangeGateLongSigmas = rangeGateLongSigmas
        self.rangeGateShortSigmas = rangeGateShortSigmas
        self.fixGateChiSquare = fixGateChiSquare
        self.gateOpenScore = gateOpenScore
        self.fixGateOpenScore = fixGateOpenScore
        self.reinitializeAfterSeconds = reinitializeAfterSeconds
        self.maximumCoastSeconds = maximumCoastSeconds
        self.initialPositionSigmaMeters = initialPositionSigmaMeters
        self.initialVelocitySigmaMetersPerSecond = initialVelocitySigmaMetersPerSecond
        self.initializationLocators = initializationLocators
        self.initializationWindowSeconds = initializationWindowSeconds
        self.initializationCycleSeconds = initializationCycleSeconds
        self.judgesStartingRounds = judgesStartingRounds
        self.differenceLatenessSeconds = differenceLatenessSeconds
    }

    /// The tuned defaults (figures in docs/tracking.md).
    package static let standard = TrackFilterConfiguration()
}

extension TrackFilterConfiguration {
    /// An immutable configuration held by reference, so that the filters of many tags share one
    /// copy instead of carrying the whole configuration (some 190 bytes) each.
    package final class Shared: Sendable {
        let value: TrackFilterConfiguration
        /// The IMM kernel's parameters, derived once.
        let interactingModels: InteractingModelsParameters
        package init(_ value: TrackFilterConfiguration) {
            self.value = value
            interactingModels = InteractingModelsParameters(
                stillPositionNoiseDensity: value.stillPositionNoiseDensity,
                stillVelocityVarianceSquareMetersPerSecondSquared: value.stillVelocitySigmaMetersPerSecond * value.stillVelocitySigmaMetersPerSecond,
                steadyProcessNoiseDensity: value.lowProcessNoiseDensity, manoeuvreProcessNoiseDensity: value.highProcessNoiseDensity,
                agileProcessNoiseDensity: value.agileProcessNoiseDensity, modeSwitchesPerSecond: value.modeSwitchesPerSecond, interactionIntervalSeconds: value.interactionIntervalSeconds)
        }
    }
}
