import LocusCore
import LocusNumerics

/// The single-model baseline of `TrackFilter` (`usesInteractingModels: false`): one constant-velocity
/// Kalman filter with white-noise acceleration density q (m²/s³), Joseph-form updates
/// (`locus_kalman.h`). Its 160-byte state is boxed, so that the default filter (interacting models)
/// does not carry it (memory per tracked tag); the box is copied on write (value semantics).
struct SingleModelTrack: Sendable {
    private var box: Box?

    /// No state yet.
    init() {}

    /// The state (zeros before `reset`).
    var state: KalmanState { box?.state ?? KalmanState(x: .zero, p: .zero) }

    /// Sets the state.
    mutating func reset(to initial: KalmanState) { box = Box(initial) }

    /// x ← F x, P ← F P Fᵀ + Q over Δt seconds.
    mutating func predict(overSeconds dt: Double, processNoiseDensity q: Double) -> KalmanOutcome {
        update { KalmanKernels.predict(&$0, overSeconds: dt, processNoiseDensity: q) }.outcome
    }

    /// Position update with z = (zx, zy), R = [[rxx, rxy], [rxy, ryy]] (m²), gated on NIS > `gate`;
    /// the outcome and the mean afterwards.
    mutating func updatePosition(zx: Double, zy: Double, rxx: Double, rxy: Double, ryy: Double, gate: Double)
        -> (outcome: KalmanOutcome, mean: SIMD4<Double>) {
        var innovation = KalmanInnovation()
        return update {
            KalmanKernels.updatePosition(&$0, zx: zx, zy: zy, rxx: rxx, rxy: rxy, ryy: ryy, gate: gate, innovation: &innovation)
        }
    }

    /// EKF range update (see `KalmanKernels.updateRange`); the outcome and the mean afterwards. An
    /// accepted range is counted in `epoch` with its innovation and the geometry of the updated mean
    /// (this kernel reports no direction).
    mutating func updateRange(anchor: Point3, tagHeightMeters h: Double, rangeMeters r: Double, varianceSquareMeters v: Double,
                              gateLong: Double, gateShort: Double, epoch: inout TrackEpochQuality)
        -> (outcome: KalmanOutcome, mean: SIMD4<Double>) {
        var innovation = KalmanInnovation()
        let (outcome, mean) = update {
            KalmanKernels.updateRange(&$0, anchor: anchor, tagHeightMeters: h, rangeMeters: r, varianceSquareMeters: v,
                                      gateLong: gateLong, gateShort: gateShort, innovation: &innovation)
        }
        if case .accepted = outcome {
            let dx = mean[0] - anchor.x, dy = mean[1] - anchor.y, dz = h - anchor.z
            epoch.accept(residualMeters: innovation.residualMeters, dx: dx, dy: dy, rho2: RangeModel.squared(dx: dx, dy: dy, dz: dz))
        }
        return (outcome, mean)
    }

    /// Update with a group of range differences sharing one arrival at `reference` (see
    /// `KalmanKernels.updateDifferences`: each gated on its own, the survivors whitened and applied in
    /// Joseph form); the outcome and the group's statistics (mean afterwards included).
    mutating func updateDifferences(reference: Point3, rows: inout MutableSpan<Double>, count m: Int, tagHeightMeters h: Double,
                                    varianceSquareMeters v: Double, gateLong: Double, gateShort: Double)
        -> (outcome: KalmanOutcome, statistics: DifferenceGroupStatistics) {
        var s = state
        let (outcome, statistics) = KalmanKernels.updateDifferences(&s, reference: reference, rows: &rows, count: m, tagHeightMeters: h,
                                                                    varianceSquareMeters: v, gateLong: gateLong, gateShort: gateShort)
        if isKnownUniquelyReferenced(&box), let box { box.state = s } else { box = Box(s) }
        return (outcome, statistics)
    }

    /// Runs a kernel on the state and stores the result (a fresh box when the current one is shared
    /// with a copy); returns the kernel's outcome and the mean afterwards.
    private mutating func update(_ kernel: (inout KalmanState) -> KalmanOutcome) -> (outcome: KalmanOutcome, mean: SIMD4<Double>) {
        var s = state
        let outcome = kernel(&s)
        if isKnownUniquelyReferenced(&box), let box { box.state = s } else { box = Box(s) }
        return (outcome, s.x)
    }

    private final class Box: @unchecked Sendable {
        // Mutated only through `update`, after a uniqueness check (copy on write).
        var state: KalmanState
        init(_ state: KalmanState) { self.state = state }
    }
}
