internal import CLocusKernels
import LocusCore

/// Swift face of the CLocusKernels trilateration kernels (`locus_trilaterate`,
/// `locus_trilaterate_scratch`, `locus_tril_dop`, `locus_tril_model`): allocation-free, no LAPACK.
/// All pointer work for these kernels lives in this file.
enum TrilaterationKernel {
    /// Largest number of locators a solve takes with its scratch on the C stack (64); beyond, the
    /// same search runs in a caller-owned scratch buffer (`scratchCount(locators:)`).
    static let maximumLocators = Int(LOCUS_TRIL_MAX_LOCATORS)

    /// Doubles of scratch one solve of `n` locators needs: 33 n + 1 (0 for n ≤ 0) — per range 30
    /// doubles of rows and sums, five index lists and two flags.
    static func scratchCount(locators n: Int) -> Int {
        Int(locus_tril_scratch_doubles(Int32(clamping: n)))
    }

    /// The measurement model the kernels solve.
    enum Model: Sendable, Equatable {
        /// Known tag height h: r̂ᵢ = √((x−xᵢ)² + (y−yᵢ)² + (h−zᵢ)²), unknowns (x, y).
        case planar
        /// r̂ᵢ = ‖p − pᵢ‖, unknowns (x, y, z).
        case spatial

        /// Number of unknowns p.
        var unknowns: Int { self == .planar ? 2 : 3 }
        var raw: Int32 { self == .planar ? Int32(LOCUS_TRIL_MODE_PLANAR) : Int32(LOCUS_TRIL_MODE_SPATIAL) }
        init(raw: Int32) { self = raw == Int32(LOCUS_TRIL_MODE_SPATIAL) ? .spatial : .planar }
    }

    /// Options of one solve; see `TrilaterationConfiguration` (LocusSolvers) for their meaning.
    struct Options: Sendable, Equatable {
        /// nil: choose automatically (`chooseModel`).
        var model: Model?
        /// NLOS rejection on (χ² gate + penalised subset search).
        var isRobust: Bool
        /// Gauss–Newton steps per solve (≥ 1).
        var maximumIterations: Int
        /// h, metres (planar model).
        var tagHeightMeters: Double
        /// σ₀, metres (> 0): σᵢ = σ₀ + k·rᵢ.
        var sigmaMeters: Double
        /// k, metres per metre (≥ 0).
        var sigmaGrowthPerMeter: Double
        /// Convergence tolerance on the estimated distance to the optimum, metres.
        var toleranceMeters: Double
        /// Automatic model: planar when height spread ≤ ratio · horizontal extent.
        var planarHeightSpreadRatio: Double
        /// Normal matrices below this reciprocal condition are degenerate (E4002).
        var minimumReciprocalCondition: Double
        /// PDOP above this is degenerate (E4002).
        var maximumDOP: Double
        /// K: most ranges rejected per fix.
        var maximumRejections: Int
        /// λ: χ² price of one rejection.
        var rejectionPenalty: Double
        /// No rejection when the all-ranges residuals show a common bias (see trilateration.c).
        var guardsAgainstCommonBias: Bool

        /// Memberwise initialiser.
        init(model: Model?, isRobust: Bool, maximumIterations: Int, tagHeightMeters: Double,
                     sigmaMeters: Double, sigmaGrowthPerMeter: Double, toleranceMeters: Double,
                     planarHeightSpreadRatio: Double, minimumReciprocalCondition: Double, maximumDOP: Double,
                     maximumRejections: Int, rejectionPenalty: Double, guardsAgainstCommonBias: Bool) {
            self.guardsAgainstCommonBias = guardsAgainstCommonBias
            self.maximumRejections = maximumRejections
            self.rejectionPenalty = rejectionPenalty
            self.model = model
            self.isRobust = isRobust
            self.maximumIterations = maximumIterations
            self.tagHeightMeters = tagHeightMeters
            self.sigmaMeters = sigmaMeters
            self.sigmaGrowthPerMeter = sigmaGrowthPerMeter
            self.toleranceMeters = toleranceMeters
            self.planarHeightSpreadRatio = planarHeightSpreadRatio
            self.minimumReciprocalCondition = minimumReciprocalCondition
            self.maximumDOP = maximumDOP
        }

        var raw: locus_tril_options {
            locus_tril_options(mode: model?.raw ?? Int32(LOCUS_TRIL_MODE_AUTOMATIC), robust: isRobust ? 1 : 0,
                               max_iterations: Int32(clamping: maximumIterations),
                               max_rejections: Int32(clamping: maximumRejections),
                               common_bias_guard: guardsAgainstCommonBias ? 1 : 0,
                               tag_height_m: tagHeightMeters, sigma0_m: sigmaMeters,
                               sigma_slope: sigmaGrowthPerMeter, tolerance_m: toleranceMeters,
                               planar_height_ratio: planarHeightSpreadRatio,
                               min_rcond: minimumReciprocalCondition, max_dop: maximumDOP,
                               rejection_penalty: rejectionPenalty)
        }
    }

    /// Maps a kernel status to a `LocusError`.
    /// - Throws: E4001, E4002, E4003, E4004 for the data-dependent statuses, E1003 for a bad argument.
    static func check(_ status: Int32) throws(LocusError) {
        switch status {
        case Int32(LOCUS_TRIL_OK): return
        case Int32(LOCUS_TRIL_TOO_FEW_RANGES):
            throw LocusError(.tooFewRanges, "too few usable ranges: 3 needed in planar mode, 4 in spatial mode")
        case Int32(LOCUS_TRIL_DEGENERATE):
            throw LocusError(.degenerateGeometry, "locators are collinear, coplanar or coincident: position not determined")
        case Int32(LOCUS_TRIL_INVALID_RANGE):
            throw LocusError(.invalidRange, "a range is negative or not finite")
        case Int32(LOCUS_TRIL_DIVERGED):
            throw LocusError(.solverDiverged, "the iterative solver produced a non-finite iterate")
        default:
            throw LocusError(.invalidArgument, "trilateration kernel rejected its arguments (status \(status))")
        }
    }

    /// `Point3` must be three packed doubles x, y, z for the zero-copy hand-over to C.
    private static let point3IsPacked: Bool =
        MemoryLayout<Point3>.stride == 3 * MemoryLayout<Double>.stride
        && MemoryLayout<Point3>.offset(of: \Point3.x) == 0
        && MemoryLayout<Point3>.offset(of: \Point3.y) == MemoryLayout<Double>.stride
        && MemoryLayout<Point3>.offset(of: \Point3.z) == 2 * MemoryLayout<Double>.stride

    @inline(__always)
    private static func withCoordinates<R>(_ locators: UnsafeBufferPointer<Point3>,
                                           _ body: (UnsafePointer<Double>) -> R) -> R {
        precondition(point3IsPacked, "Point3 is not three packed doubles")
        guard let base = locators.baseAddress else {
            var dummy = 0.0
            return withUnsafePointer(to: &dummy) { body($0) }
        }
        return UnsafeRawPointer(base).withMemoryRebound(to: Double.self, capacity: 3 * locators.count) { body($0) }
    }

    /// Solves one fix: seed, Newton / Gauss–Newton WLS, optional NLOS rejection (see trilateration.c),
    /// with the kernel's scratch on the C stack. No heap allocation. Complexity O(n·steps) when the
    /// χ² gate passes; the rejection search screens up to Σₖ C(n, k) candidate sets (k ≤ 3,
    /// C(n, k) ≤ 64; 4 per greedy level) at O(k + p³) each and fits only those whose lower bound does
    /// not rule them out (typically one or two).
    /// - Precondition: `locators.count == rangesMeters.count <= maximumLocators`.
    /// - Throws: E4001 too few ranges, E4002 degenerate geometry, E4003 invalid range,
    ///   E4004 divergence, E1003 invalid options.
    static func solve(locators: Span<Point3>, rangesMeters: Span<Double>,
                              options: Options) throws(LocusError) -> TrilaterationSolution {
        try locators.withUnsafeBufferPointer { (locators) throws(LocusError) in
            try rangesMeters.withUnsafeBufferPointer { (rangesMeters) throws(LocusError) in
                try solve(locators: locators, rangesMeters: rangesMeters, options: options)
            }
        }
    }

    /// `solve(locators:rangesMeters:options:)` over the spans' buffers.
    @inline(__always)
    private static func solve(locators: UnsafeBufferPointer<Point3>, rangesMeters: UnsafeBufferPointer<Double>,
                              options: Options) throws(LocusError) -> TrilaterationSolution {
        precondition(locators.count == rangesMeters.count, "one range per locator")
        precondition(locators.count <= maximumLocators, "at most \(maximumLocators) locators without scratch")
        var raw = locus_tril_result()
        var rawOptions = options.raw
        let n = Int32(locators.count)
        let status: Int32 = withCoordinates(locators) { xyz in
            guard let ranges = rangesMeters.baseAddress else {
                var zero = 0.0
                return locus_trilaterate(xyz, &zero, n, &rawOptions, &raw)
            }
            return locus_trilaterate(xyz, ranges, n, &rawOptions, &raw)
        }
        try check(status)
        return solution(raw, count: locators.count)
    }

    /// The same solve for any number of locators in caller-owned `scratch` (at least
    /// `scratchCount(locators:)` doubles; kept across calls, no allocation); `used[i]` (at least n
    /// entries) is 1 for a range in the final fit and 0 for a rejected one — `TrilaterationSolution.rejectedMask`
    /// holds only the indices below 64.
    /// - Precondition: `locators.count == rangesMeters.count`; `scratch` and `used` large enough.
    /// - Throws: as `solve(locators:rangesMeters:options:)`.
    static func solve(locators: Span<Point3>, rangesMeters: Span<Double>, options: Options,
                              scratch: inout MutableSpan<Double>, used: inout MutableSpan<UInt8>) throws(LocusError) -> TrilaterationSolution {
        try locators.withUnsafeBufferPointer { (locators) throws(LocusError) in
            try rangesMeters.withUnsafeBufferPointer { (rangesMeters) throws(LocusError) in
                try scratch.withUnsafeMutableBufferPointer { (scratch) throws(LocusError) in
                    try used.withUnsafeMutableBufferPointer { (used) throws(LocusError) in
                        try solve(locators: locators, rangesMeters: rangesMeters, options: options, scratch: scratch, used: used)
                    }
                }
            }
        }
    }

    /// `solve(locators:rangesMeters:options:scratch:used:)` over the spans' buffers.
    @inline(__always)
    private static func solve(locators: UnsafeBufferPointer<Point3>, rangesMeters: UnsafeBufferPointer<Double>,
                              options: Options, scratch: UnsafeMutableBufferPointer<Double>,
                              used: UnsafeMutableBufferPointer<UInt8>?) throws(LocusError) -> TrilaterationSolution {
        let count = locators.count
        precondition(count == rangesMeters.count, "one range per locator")
        precondition(scratch.count >= scratchCount(locators: count) && (used?.count ?? count) >= count,
                     "trilateration scratch too small")
        var raw = locus_tril_result()
        var rawOptions = options.raw
        let n = Int32(clamping: count)
        let status: Int32 = withCoordinates(locators) { xyz in
            var zero = 0.0
            return withUnsafeMutablePointer(to: &zero) { zp in
                locus_trilaterate_scratch(xyz, rangesMeters.baseAddress ?? UnsafePointer(zp), n, &rawOptions,
                                          scratch.baseAddress ?? zp, scratch.count, used?.baseAddress, &raw)
            }
        }
        try check(status)
        return solution(raw, count: count)
    }

    /// The C result of a solve of `count` ranges as a `TrilaterationSolution` (VDOP nil in planar mode).
    private static func solution(_ raw: locus_tril_result, count: Int) -> TrilaterationSolution {
        let model = Model(raw: raw.mode)
        return TrilaterationSolution(
            position: Point3(x: raw.x, y: raw.y, z: raw.z),
            covariance: SymmetricMatrix3(xx: raw.cov_xx, xy: raw.cov_xy, xz: raw.cov_xz,
                                         yy: raw.cov_yy, yz: raw.cov_yz, zz: raw.cov_zz),
            model: model, hdop: raw.hdop, vdop: model == .spatial ? raw.vdop : nil, pdop: raw.pdop,
            residualRMSMeters: raw.residual_rms_m, chiSquare: raw.chi_square, degreesOfFreedom: Int(raw.dof),
            rejectedMask: raw.rejected_mask, rejectedCount: count - Int(raw.used), locatorsUsed: Int(raw.used),
            iterations: Int(raw.iterations), isConverged: raw.converged != 0)
    }

    /// The model the automatic rule picks: planar when n < 4 or the locators' height spread
    /// max zᵢ − min zᵢ ≤ `planarHeightSpreadRatio` · (diagonal of their horizontal bounding box).
    static func chooseModel(locators: Span<Point3>, requested: Model?,
                                    planarHeightSpreadRatio: Double) -> Model {
        if let requested { return requested }
        return locators.withUnsafeBufferPointer { locators in
            chooseModel(locators: locators, requested: nil, planarHeightSpreadRatio: planarHeightSpreadRatio)
        }
    }

    /// `chooseModel(locators:requested:planarHeightSpreadRatio:)` over the span's buffer.
    @inline(__always)
    private static func chooseModel(locators: UnsafeBufferPointer<Point3>, requested: Model?,
                                    planarHeightSpreadRatio: Double) -> Model {
        if let requested { return requested }
        var mode: Int32 = 0
        let status = withCoordinates(locators) { xyz in
            locus_tril_choose_mode(xyz, Int32(clamping: locators.count), Int32(LOCUS_TRIL_MODE_AUTOMATIC),
                                   planarHeightSpreadRatio, &mode)
        }
        precondition(status == 0, "chooseModel: invalid planarHeightSpreadRatio")
        return Model(raw: mode)
    }

    /// Model ranges r̂ᵢ and Jacobian ∂r̂ᵢ/∂(x, y[, z]) at `point` (planar: z ignored, h used).
    /// The Jacobian is column-major n×p with leading dimension `leadingDimension` ≥ n.
    /// Complexity O(n); no allocation when the buffers are large enough.
    static func model(locators: UnsafeBufferPointer<Point3>, model: Model, tagHeightMeters: Double,
                              at point: Point3, rangesMeters: inout [Double], jacobian: inout [Double],
                              leadingDimension: Int) {
        let n = locators.count
        precondition(rangesMeters.count >= n && leadingDimension >= n
                     && jacobian.count >= leadingDimension * model.unknowns, "model: buffers too small")
        let status = withCoordinates(locators) { xyz in
            rangesMeters.withUnsafeMutableBufferPointer { rp in
                jacobian.withUnsafeMutableBufferPointer { jp in
                    locus_tril_model(xyz, Int32(clamping: n), model.raw, tagHeightMeters, point.x, point.y, point.z,
                                     rp.baseAddress, jp.baseAddress, Int32(clamping: leadingDimension))
                }
            }
        }
        precondition(status == 0, "model: invalid arguments")
    }

    /// Array overload of `model(locators:model:tagHeightMeters:at:rangesMeters:jacobian:leadingDimension:)`
    /// for the first `count` locators of `locators`.
    static func model(locators: [Point3], count: Int, model: Model, tagHeightMeters: Double,
                              at point: Point3, rangesMeters: inout [Double], jacobian: inout [Double],
                              leadingDimension: Int) {
        precondition(count <= locators.count, "model: count exceeds the locators")
        locators.withUnsafeBufferPointer { lp in
            Self.model(locators: UnsafeBufferPointer(rebasing: lp[0..<count]), model: model,
                       tagHeightMeters: tagHeightMeters, at: point, rangesMeters: &rangesMeters,
                       jacobian: &jacobian, leadingDimension: leadingDimension)
        }
    }

    /// DOP at `point` over the locators in `activeMask` (bit i: locator i; indices ≥ 64 always used):
    /// Q = (HᵀH)⁻¹ with unit line-of-sight rows; HDOP = √(Q₁₁+Q₂₂), VDOP = √Q₃₃ (0 planar),
    /// PDOP = √trace Q. Complexity O(n).
    /// - Throws: E4002 when HᵀH is singular (reciprocal condition below `minimumReciprocalCondition`)
    ///   or PDOP exceeds `maximumDOP`.
    static func dop(locators: Span<Point3>, activeMask: UInt64 = ~0, model: Model,
                            tagHeightMeters: Double, at point: Point3, minimumReciprocalCondition: Double,
                            maximumDOP: Double) throws(LocusError) -> (hdop: Double, vdop: Double, pdop: Double) {
        try locators.withUnsafeBufferPointer { (locators) throws(LocusError) in
            try dop(locators: locators, activeMask: activeMask, model: model, tagHeightMeters: tagHeightMeters, at: point,
                    minimumReciprocalCondition: minimumReciprocalCondition, maximumDOP: maximumDOP)
        }
    }

    /// `dop(locators:activeMask:model:tagHeightMeters:at:minimumReciprocalCondition:maximumDOP:)` over the span's buffer.
    @inline(__always)
    private static func dop(locators: UnsafeBufferPointer<Point3>, activeMask: UInt64, model: Model,
                            tagHeightMeters: Double, at point: Point3, minimumReciprocalCondition: Double,
                            maximumDOP: Double) throws(LocusError) -> (hdop: Double, vdop: Double, pdop: Double) {
        var h = 0.0, v = 0.0, p = 0.0
        let status = withCoordinates(locators) { xyz in
            locus_tril_dop(xyz, Int32(clamping: locators.count), activeMask, model.raw, tagHeightMeters,
                           point.x, point.y, point.z, minimumReciprocalCondition, maximumDOP, &h, &v, &p)
        }
        try check(status)
        return (h, v, p)
    }

    /// 99.5 % quantile of χ² with `degreesOfFreedom` (table 1…64, Wilson–Hilferty beyond; +∞ below 1).
    static func chiSquareQuantile995(degreesOfFreedom: Int) -> Double {
        locus_tril_chi_square_995(Int32(clamping: degreesOfFreedom))
    }
}
