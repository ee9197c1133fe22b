import LocusCore
import LocusNumerics

/// The motion model behind a `TrackFilter`, one interface over two implementations chosen by
/// `TrackFilterConfiguration.usesInteractingModels`:
/// - the **interacting models** (default): standing still, steady walking and manoeuvring, mixed once
///   per ranging round (`InteractingModels`, C kernel `locus_imm.h`, 600 bytes inline);
/// - the **single-model baseline**: one constant-velocity filter with density q (`SingleModelTrack`).
///
/// Both are predicted to a measurement's own time and updated in Joseph or symmetric form by the C
/// kernels; a result that is not finite is not committed (the outcome says so).
struct TrackMotion: Sendable {
    private var models = InteractingModels()
    private var single = SingleModelTrack()

    /// No state yet (`reset` first).
    init() {}

    /// Every model at `state` at time t.
    mutating func reset(to state: KalmanState, atSeconds t: Double, _ shared: TrackFilterConfiguration.Shared) {
        if shared.value.usesInteractingModels { models.reset(to: state, atSeconds: t) } else { single.reset(to: state) }
    }

    /// Predicts from `fromSeconds` to t (> `fromSeconds`): x ← F x, P ← F P Fᵀ + Q per model (IMM:
    /// interaction first when due).
    mutating func predict(toSeconds t: Double, fromSeconds: Double, _ shared: TrackFilterConfiguration.Shared) -> KalmanOutcome {
        if shared.value.usesInteractingModels { return models.predict(toSeconds: t, parameters: shared.interactingModels) }
        return single.predict(overSeconds: t - fromSeconds, processNoiseDensity: shared.value.processNoiseDensity)
    }

    /// Prediction to t (when later than `fromSeconds`) and the range update with range variance
    /// `variance` (m²: the filter's, `TrackFilter.rangeVarianceSquareMeters`), for the per-range path:
    /// `predicted` false when the prediction failed; the update's outcome and the mean afterwards. An
    /// accepted range is counted in `epoch` with the (manoeuvring) model's innovation and offset from
    /// the anchor.
    @inline(__always)
    mutating func predictAndUpdateRange(toSeconds t: Double, fromSeconds: Double, anchor: Point3, tagHeightMeters h: Double,
                                        rangeMeters r: Double, varianceSquareMeters variance: Double, epoch: inout TrackEpochQuality,
                                        _ shared: TrackFilterConfiguration.Shared)
        -> (outcome: KalmanOutcome, mean: SIMD4<Double>, predicted: Bool) {
        let c = shared.value
        if c.usesInteractingModels {
            return models.predictAndUpdateRange(toSeconds: t, parameters: shared.interactingModels, anchor: anchor, tagHeightMeters: h,
                                                rangeMeters: r, varianceSquareMeters: variance,
                                                gateLong: c.rangeGateLongSigmas, gateShort: c.rangeGateShortSigmas, epoch: &epoch)
        }
        if t > fromSeconds, single.predict(overSeconds: t - fromSeconds, processNoiseDensity: c.processNoiseDensity) != .accepted {
            return (.notFinite, .zero, false)
        }
        let (outcome, mean) = single.updateRange(anchor: anchor, tagHeightMeters: h, rangeMeters: r, varianceSquareMeters: variance,
                                                 gateLong: c.rangeGateLongSigmas, gateShort: c.rangeGateShortSigmas, epoch: &epoch)
        return (outcome, mean, true)
    }

    /// Prediction to t (when later than `fromSeconds`) and the update with one group of range
    /// differences (the first `count` rows of `rows`, `DifferenceRows`) sharing one arrival at
    /// `reference`: every model takes the whitened survivors of the per-difference gate (IMM: gated on
    /// the manoeuvring model, likelihoods pending into μ; single model: Joseph form). σ² per arrival is
    /// the range σ², the gate the range gate (ν > long or < −short). `predicted` false when the
    /// prediction failed.
    mutating func predictAndUpdateDifferences(toSeconds t: Double, fromSeconds: Double, reference: Point3, rows: inout MutableSpan<Double>,
                                              count m: Int, tagHeightMeters h: Double, _ shared: TrackFilterConfiguration.Shared)
        -> (outcome: KalmanOutcome, predicted: Bool, statistics: DifferenceGroupStatistics) {
        let c = shared.value
        let variance = c.rangeSigmaMeters * c.rangeSigmaMeters
        if c.usesInteractingModels {
            return models.predictAndUpdateDifferences(toSeconds: t, parameters: shared.interactingModels, reference: reference, rows: &rows,
                                                      count: m, tagHeightMeters: h, varianceSquareMeters: variance,
                                                      gateLong: c.rangeGateLongSigmas, gateShort: c.rangeGateShortSigmas)
        }
        if t > fromSeconds, single.predict(overSeconds: t - fromSeconds, processNoiseDensity: c.processNoiseDensity) != .accepted {
            return (.notFinite, false, DifferenceGroupStatistics())
        }
        let (outcome, statistics) = single.updateDifferences(reference: reference, rows: &rows, count: m, tagHeightMeters: h,
                                                             varianceSquareMeters: variance, gateLong: c.rangeGateLongSigmas,
                                                             gateShort: c.rangeGateShortSigmas)
        return (outcome, true, statistics)
    }

    /// A round's ranges, each of variance `variance` (m²), through the interacting models' one-call path (`InteractingModels.updateRanges`):
    /// the index of the first range not accepted. The single-model baseline has none: 0, `run.stop`
    /// nil (the caller applies every range the per-range way).
    mutating func updateRanges(times: UnsafeBufferPointer<Double>, anchors: UnsafeBufferPointer<Point3>,
                               ranges: UnsafeBufferPointer<Double>, tagHeightMeters h: Double, varianceSquareMeters variance: Double,
                               run: inout InteractingModels.RangeRun, epoch: inout TrackEpochQuality,
                               _ shared: TrackFilterConfiguration.Shared) -> Int {
        let c = shared.value
        guard c.usesInteractingModels else { return 0 }
        return models.updateRanges(times: times.span, anchors: anchors.span, ranges: ranges.span, parameters: shared.interactingModels,
                                   tagHeightMeters: h, varianceSquareMeters: variance,
                                   gateLong: c.rangeGateLongSigmas, gateShort: c.rangeGateShortSigmas, run: &run, epoch: &epoch)
    }

    /// Position update of every model with z = (zx, zy), R (m²), gated on the most permissive model
    /// (IMM: the manoeuvring one) at NIS > `gate`; the outcome and the mean afterwards.
    mutating func updatePosition(zx: Double, zy: Double, rxx: Double, rxy: Double, ryy: Double, gate: Double,
                                 _ shared: TrackFilterConfiguration.Shared) -> (outcome: KalmanOutcome, mean: SIMD4<Double>) {
        if shared.value.usesInteractingModels {
            var innovation = KalmanInnovation()
            let (outcome, mean) = models.updatePosition(zx: zx, zy: zy, rxx: rxx, rxy: rxy, ryy: ryy, gate: gate, innovation: &innovation)
            return (outcome, mean)
        }
        return single.updatePosition(zx: zx, zy: zy, rxx: rxx, rxy: rxy, ryy: ryy, gate: gate)
    }

    /// The state as one Gaussian (IMM: moment-matched x = Σ μⱼ xⱼ, P = Σ μⱼ (Pⱼ + (xⱼ − x)(xⱼ − x)ᵀ)).
    func combined(_ shared: TrackFilterConfiguration.Shared) -> KalmanState {
        guard shared.value.usesInteractingModels else { return single.state }
        var copy = models
        return copy.settledCombination()
    }

    /// `combined` for a fix, with the round's likelihoods folded into μ first (IMM).
    mutating func settledCombination(_ shared: TrackFilterConfiguration.Shared) -> KalmanState {
        guard shared.value.usesInteractingModels else { return single.state }
        return models.settledCombination()
    }

    /// The settled combination's mean and position covariance block only (the interacting models; nil
    /// for the single-model baseline): a fix at the models' own time.
    mutating func settledPosition(_ shared: TrackFilterConfiguration.Shared) -> (x: SIMD4<Double>, position: (xx: Double, xy: Double, yy: Double))? {
        shared.value.usesInteractingModels ? models.settledPosition() : nil
    }

    /// IMM model probabilities μ = (still, steady, manoeuvring, agile), read in place
    /// (`InteractingModels.probabilities`).
    var probabilities: SIMD4<Double> { mutating get { models.probabilities } }
}
