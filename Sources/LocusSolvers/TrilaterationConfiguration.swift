import LocusNumerics

/// Settings of the trilateration solvers (both paths read the same values). Defaults live in
/// `standard`, and only there.
///
/// Weights: wᵢ = 1/σᵢ², σᵢ = σ₀ + k·rᵢ (metres; rᵢ the measured range, so the weights are fixed
/// during the iteration and both paths minimise the same χ² = Σ wᵢ (rᵢ − r̂ᵢ(p))²).
public struct TrilaterationConfiguration: Sendable, Equatable {
    /// Planar, spatial, or chosen from the locator layout.
    public var mode: TrilaterationMode
    /// Tag height h used by planar mode, metres (the floor's `tagHeightM`).
    public var tagHeightMeters: Double
    /// σ₀: range noise standard deviation at zero distance, metres (> 0).
    public var sigmaMeters: Double
    /// k: growth of σ with distance, metres per metre (≥ 0, default 0).
    public var sigmaGrowthPerMeter: Double
    /// NLOS rejection. When χ² of the all-ranges fit exceeds its 99.5 % quantile (n − p degrees of
    /// freedom), search the sets E of at most `maximumRejections` ranges (keeping ≥ p + 1) for the
    /// minimum of χ²(without E) + λ·|E|, among sets whose ranges all read long at the fit without
    /// them (NLOS only lengthens a range). Level k takes every k-subset when k ≤ 3 and C(n, k) ≤ 64,
    /// else extends the best set of level k − 1 by one of the 4 ranges reading longest there. Each
    /// candidate is screened by one linearised step, which bounds its χ² from below; only those the
    /// bound does not rule out are fitted (see the LocusSolvers README).
    public var isRobust: Bool
    /// K: most ranges rejected in one fix (≥ 0).
    public var maximumRejections: Int
    /// λ: price of one rejection in χ² units (> 0): λ = 2 ln[(1 − ε) L / (ε σ √(2π))], the −2 log
    /// likelihood ratio of "outlier" under a prior NLOS rate ε with extra length uniform over L
    /// metres; ε = 0.1, L = 2.2 m, σ = 0.1 m give the standard 8.7.
    public var rejectionPenalty: Double
    /// No rejection when the all-ranges fit shows a common bias: every standardized residual eᵢ/σᵢ
    /// within [−0.5, 5] and more than half above +0.75. NLOS on a minority pulls the fit so that other
    /// ranges read short; a common bias (uncalibrated antenna delays) leaves none short, is not NLOS,
    /// and rejecting ranges would only bend the geometry. Measured: without the guard robust mode made
    /// a raw (uncalibrated, all ranges 0.14–0.31 m long) recording worse than plain LS (0.33 vs
    /// 0.19 m); the guard holds for 98 % of those raw epochs (their largest zᵢ: 99 % below 4.7).
    public var guardsAgainstCommonBias: Bool
    /// Gauss–Newton steps per solve (≥ 1).
    public var maximumIterations: Int
    /// Stop when the Gauss–Newton step ‖δ‖ ≤ this, metres.
    public var convergenceToleranceMeters: Double
    /// Automatic mode is planar when max zᵢ − min zᵢ ≤ ratio · (diagonal of the locators'
    /// horizontal bounding box), or when fewer than 4 locators are given.
    public var planarHeightSpreadRatio: Double
    /// Normal matrices with reciprocal condition below this are degenerate geometry (E4002).
    /// The kernel tests λmin/λmax (2×2) or 1/(‖N‖₁‖N⁻¹‖₁) (3×3) of the normal matrix; the LAPACKE
    /// path gives `dgelsy` the square root of this (it works on A, whose condition is √ that of AᵀA).
    public var minimumReciprocalCondition: Double
    /// A PDOP above this at the solution is degenerate geometry (E4002).
    public var maximumDOP: Double

    /// Creates a configuration; every argument has its standard value.
    public init(mode: TrilaterationMode = .automatic, tagHeightMeters: Double = 0, sigmaMeters: Double = 0.1,
                 sigmaGrowthPerMeter: Double = 0, isRobust: Bool = true, maximumIterations: Int = 20,
                 convergenceToleranceMeters: Double = 1e-10, planarHeightSpreadRatio: Double = 0.2,
                 minimumReciprocalCondition: Double = 1e-10, maximumDOP: Double = 1e4,
                 maximumRejections: Int = 8, rejectionPenalty: Double = 8.7, guardsAgainstCommonBias: Bool = true) {
        self.guardsAgainstCommonBias = guardsAgainstCommonBias
        self.maximumRejections = maximumRejections
        self.rejectionPenalty = rejectionPenalty
        self.mode = mode
        self.tagHeightMeters = tagHeightMeters
        self.sigmaMeters = sigmaMeters
        self.sigmaGrowthPerMeter = sigmaGrowthPerMeter
        self.isRobust = isRobust
        self.maximumIterations = maximumIterations
        self.convergenceToleranceMeters = convergenceToleranceMeters
        self.planarHeightSpreadRatio = planarHeightSpreadRatio
        self.minimumReciprocalCondition = minimumReciprocalCondition
        self.maximumDOP = maximumDOP
    }

    /// The standard settings: automatic mode, h = 0 m, σ₀ = 0.1 m, k = 0, robust, 20 steps,
    /// tolerance 1e-10 m, planar height ratio 0.2, reciprocal condition 1e-10, PDOP ≤ 1e4,
    /// at most 8 rejections at λ = 8.7 each, common-bias guard on.
    public static let standard = TrilaterationConfiguration()

    /// True when every value is in its domain.
    var isValid: Bool {
        tagHeightMeters.isFinite && sigmaMeters > 0 && sigmaMeters.isFinite && sigmaGrowthPerMeter >= 0
            && sigmaGrowthPerMeter.isFinite && maximumIterations >= 1 && convergenceToleranceMeters > 0
            && planarHeightSpreadRatio >= 0 && minimumReciprocalCondition > 0 && maximumDOP > 0
            && maximumRejections >= 0 && rejectionPenalty > 0 && rejectionPenalty.isFinite
    }

    /// The kernel's view of these settings.
    var kernelOptions: TrilaterationKernel.Options {
        TrilaterationKernel.Options(
            model: mode.kernelModel, isRobust: isRobust, maximumIterations: maximumIterations,
            tagHeightMeters: tagHeightMeters, sigmaMeters: sigmaMeters, sigmaGrowthPerMeter: sigmaGrowthPerMeter,
            toleranceMeters: convergenceToleranceMeters, planarHeightSpreadRatio: planarHeightSpreadRatio,
            minimumReciprocalCondition: minimumReciprocalCondition, maximumDOP: maximumDOP,
            maximumRejections: maximumRejections, rejectionPenalty: rejectionPenalty,
            guardsAgainstCommonBias: guardsAgainstCommonBias)
    }
}

extension TrilaterationMode {
    /// nil for automatic.
    var kernelModel: TrilaterationKernel.Model? {
        switch self {
        case .automatic: return nil
        case .planar: return .planar
        case .spatial: return .spatial
        }
    }

    init(_ model: TrilaterationKernel.Model) { self = model == .planar ? .planar : .spatial }
}
