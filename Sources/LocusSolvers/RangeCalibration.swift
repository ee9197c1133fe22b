#if canImport(Glibc)
import Glibc
#endif
import LocusCore
import LocusNumerics

/// Settings of the range-bias calibration (`RangeCalibration.estimate`).
package struct RangeCalibrationConfiguration: Sendable, Hashable {
    /// How each locator's bias is estimated from its range errors eₖ = rₖ − dₖ.
    package enum Estimator: String, Sendable, Hashable, CaseIterable {
        /// b̂ᵢ = median(eₖ) per locator: simple and robust, no LAPACKE.
        case median
        /// Huber M-estimate by iteratively reweighted least squares, one `dgels` solve over all
        /// locators per pass.
        case huber
        /// The Huber estimate, then Tukey's bisquare (redescending: ranges beyond c·σ̂ weigh 0) with
        /// the scale σ̂ held at the Huber fit's: the one-sided NLOS tail no longer pulls the bias
        /// (the default).
        case tukey
    }

    /// The estimator whose value is written to the site.
    var estimator: Estimator
    /// Also fit a slope per locator, eₖ = bᵢ + sᵢ·dₖ (Huber only; the site still gets one constant
    /// per locator: the fitted error at the locator's mean calibration distance).
    var fitsSlope: Bool
    /// Huber threshold k in units of the locator's robust scale: residuals with |u| ≤ k weigh 1,
    /// larger ones k/|u| (1.345 gives 95 % efficiency under Gaussian noise).
    var huberThreshold: Double
    /// Tukey bisquare threshold c in units of the scale: w = (1 − (u/c)²)² for |u| < c, else 0
    /// (4.685 gives 95 % efficiency under Gaussian noise).
    var tukeyThreshold: Double
    /// Most reweighting passes.
    var maximumIterations: Int
    /// The passes stop when no parameter moves by more than this, metres (or per metre for slopes).
    var convergenceMeters: Double
    /// A locator needs at least this many samples to be estimated.
    var minimumSamples: Int
    /// Smallest robust scale used in the weights, metres (ranges quantised to 1 cm can give a MAD of 0).
    var minimumScaleMeters: Double

    /// Creates settings; every argument defaults to the value of `standard`.
    package init(estimator: Estimator = .tukey, fitsSlope: Bool = false, huberThreshold: Double = 1.345,
                 tukeyThreshold: Double = 4.685, maximumIterations: Int = 50, convergenceMeters: Double = 1e-6, minimumSamples: Int = 10,
                 minimumScaleMeters: Double = 0.002) {
        self.estimator = estimator
        self.fitsSlope = fitsSlope
        self.huberThreshold = huberThreshold
        self.tukeyThreshold = tukeyThreshold
        self.maximumIterations = maximumIterations
        self.convergenceMeters = convergenceMeters
        self.minimumSamples = minimumSamples
        self.minimumScaleMeters = minimumScaleMeters
    }

    /// Huber (k = 1.345) then Tukey (c = 4.685), bias-only model, at most 50 passes per stage to
    /// 1 µm, at least 10 samples per locator.
    static let standard = RangeCalibrationConfiguration()
}

/// Calibration samples: ranges with the true tag–locator distance at their time, by column.
package struct RangeCalibrationSamples: Sendable {
    /// The locator of each sample, as its index in the floor's `locators`.
    private(set) var slots: [Int] = []
    /// Measured range rₖ, metres.
    private(set) var rangesMeters: [Double] = []
    /// True distance dₖ = ‖pₖ − aᵢ‖, metres.
    private(set) var distancesMeters: [Double] = []
    /// The floor's range differences (TDoA) with truth, for `DifferenceCalibration`.
    private(set) var differences = DifferenceCalibrationSamples()

    /// No samples.
    package init() {}

    /// Number of range samples.
    package var count: Int { slots.count }
    /// Number of range-difference samples.
    package var differenceCount: Int { differences.count }

    /// Adds one sample: range `rangeMeters` to the locator at `slot`, true distance `distanceMeters`.
    /// - Precondition: both finite, `slot ≥ 0`.
    mutating func append(slot: Int, rangeMeters: Double, distanceMeters: Double) {
        precondition(slot >= 0 && rangeMeters.isFinite && distanceMeters.isFinite,
                     "RangeCalibrationSamples.append: slot must be ≥ 0 and values finite")
        slots.append(slot)
        rangesMeters.append(rangeMeters)
        distancesMeters.append(distanceMeters)
    }

    /// Adds a range measured from a tag truly at `tagPosition` to `locator` (slot in the floor's order):
    /// dₖ = ‖p − aᵢ‖ in 3D.
    package mutating func append(slot: Int, locator: Point3, rangeMeters: Double, tagPosition: Point3) {
        append(slot: slot, rangeMeters: rangeMeters, distanceMeters: tagPosition.distance(to: locator))
    }

    /// Adds a range difference `differenceMeters` = d(tag, B) − d(tag, A) measured with the tag truly
    /// at `tagPosition`; A, B: slots in the floor's order, at `reference` and `locator`
    /// (`DifferenceCalibrationSamples.append`).
    package mutating func append(referenceSlot: Int, reference: Point3, locatorSlot: Int, locator: Point3,
                                 differenceMeters: Double, tagPosition: Point3) {
        differences.append(referenceSlot: referenceSlot, reference: reference, locatorSlot: locatorSlot, locator: locator,
                           differenceMeters: differenceMeters, tagPosition: tagPosition)
    }
}

/// One locator's calibration.
struct LocatorCalibration: Sendable, Hashable {
    /// The locator.
    var address: LocatorAddress
    /// Samples with truth.
    var sampleCount: Int
    /// The estimated bias, metres (nil: too few samples, the site's value is kept). Bias-only model:
    /// b̂ᵢ, the value `applied(to:)` writes as `biasM`; slope model: b̂ᵢ + ŝᵢ·d̄ᵢ, the fitted error at
    /// the mean distance d̄ᵢ, reported only (the site gets the intercept `interceptMeters`).
    var biasMeters: Double?
    /// median(eₖ), metres: the simple estimate, reported beside the Huber one for comparison.
    var medianErrorMeters: Double?
    /// Robust range noise σ̂ᵢ = 1.4826·MAD of the residuals eₖ − ê(dₖ) of the chosen fit, metres.
    var sigmaMeters: Double?
    /// Intercept b̂ᵢ (error at distance 0) of the slope model, metres; nil for the bias-only model.
    var interceptMeters: Double?
    /// Slope ŝᵢ of the slope model (metres per metre); nil for the bias-only model.
    var slope: Double?
    /// Mean true distance d̄ᵢ of the samples, metres.
    var meanDistanceMeters: Double?
    /// Samples the Huber weights took down (|u| > k) in the last pass.
    var downweightedCount: Int
}

/// Range-bias calibration: each locator's bias bᵢ (antenna delay) and noise σᵢ from ranges
/// recorded at known tag positions.
///
/// Model: eₖ = rₖ − ‖pₖ − aᵢ‖ = bᵢ (+ sᵢ·dₖ) + εₖ. The M-estimate minimises
/// Σₖ ρ((eₖ − bᵢ − sᵢdₖ)/σᵢ) by IRLS: start from the medians, then each pass solves the stacked
/// weighted problem min ‖W^½(A θ − e)‖₂ for θ = (b₀…bₙ₋₁[, s₀…sₙ₋₁]) with one LAPACKE `dgels`
/// (A has one indicator column per locator and, with slopes, one distance column per locator).
/// Huber stage: wₖ = min(1, k/|uₖ|)/σᵢ², uₖ = residualₖ/σᵢ, σᵢ = 1.4826·MAD of the current
/// residuals; Tukey stage (default): wₖ = (1 − (uₖ/c)²)²₊/σᵢ² with σᵢ held at the Huber fit's.
package struct RangeCalibration: Sendable, Hashable {
    /// Per locator, in the floor's order.
    var locators: [LocatorCalibration]
    /// Reweighting passes run (0 for the median estimator).
    var iterations: Int
    /// The settings used.
    var configuration: RangeCalibrationConfiguration

    /// Estimates every locator of `floor` from `samples` (slots index `floor.locators`): from its
    /// ranges, which see each bias whole (a floor's differences add nothing they need), or, when it
    /// holds range differences only, from those (`DifferenceCalibration`: only differences of biases,
    /// their mean kept at the site's).
    /// Complexity O(passes · m · n²) for m samples and n parameters, plus O(m log m) for medians.
    /// - Throws: `E4001` (tooFewRanges) when no locator has `minimumSamples` samples;
    ///   `E4002` (degenerateGeometry) when a slope is not determined (all of a locator's samples at
    ///   one distance); `E5101` on a LAPACK argument error (a bug).
    package static func estimate(floor: Floor, samples: RangeCalibrationSamples,
                                 configuration: RangeCalibrationConfiguration = .standard) throws(LocusError) -> RangeCalibration {
        if samples.count == 0, samples.differenceCount > 0 {
            return try DifferenceCalibration.estimate(floor: floor, samples: samples.differences, configuration: configuration)
        }
        let n = floor.locators.count
        var errorsBySlot = [[Double]](repeating: [], count: n)
        var distancesBySlot = [[Double]](repeating: [], count: n)
        for k in 0..<samples.count {
            let slot = samples.slots[k]
            precondition(slot < n, "RangeCalibration.estimate: sample slot \(slot) outside the floor's \(n) locators")
            errorsBySlot[slot].append(samples.rangesMeters[k] - samples.distancesMeters[k])
            distancesBySlot[slot].append(samples.distancesMeters[k])
        }
        var result = RangeCalibration(locators: floor.locators.enumerated().map { slot, locator in
            LocatorCalibration(address: locator.address, sampleCount: errorsBySlot[slot].count, biasMeters: nil,
                               medianErrorMeters: nil, sigmaMeters: nil, interceptMeters: nil, slope: nil,
                               meanDistanceMeters: nil, downweightedCount: 0)
        }, iterations: 0, configuration: configuration)
        let included = (0..<n).filter { errorsBySlot[$0].count >= max(1, configuration.minimumSamples) }
        guard !included.isEmpty else {
            throw LocusError(.tooFewRanges, "no locator has \(configuration.minimumSamples) or more ranges with truth to calibrate from")
        }
        for slot in included {
            let e = errorsBySlot[slot]
            let median = RobustStatistics.median(e)
            result.locators[slot].medianErrorMeters = median
            result.locators[slot].meanDistanceMeters = distancesBySlot[slot].reduce(0, +) / Double(e.count)
            if configuration.estimator == .median {
                result.locators[slot].biasMeters = median
                result.locators[slot].sigmaMeters = RobustStatistics.robustScale(e.map { $0 - median })
            }
        }
        if configuration.estimator != .median {
            try result.fitRobust(included: included, errors: errorsBySlot, distances: distancesBySlot)
        }
        return result
    }

    /// `floor` with each estimated locator's bias replaced by the estimate (others kept). With the
    /// slope model, measured r = b + (1 + s)·d, the site gets `biasM` = b (the intercept) and
    /// `biasSlope` = s, which the engine inverts as d = (r − b)/(1 + s); without it, `biasM` = b̂ and
    /// `biasSlope` 0.
    package func applied(to floor: Floor) -> Floor {
        var copy = floor
        for (slot, calibration) in locators.enumerated() where slot < copy.locators.count {
            guard copy.locators[slot].address == calibration.address else { continue }
            if let slope = calibration.slope, let intercept = calibration.interceptMeters {
                copy.locators[slot].biasMeters = intercept
                copy.locators[slot].biasSlope = slope
            } else if let bias = calibration.biasMeters {
                copy.locators[slot].biasMeters = bias
                copy.locators[slot].biasSlope = 0
            }
        }
        return copy
    }

    /// Huber (then, for `.tukey`, bisquare) IRLS through LAPACKE (see the type's documentation).
    private mutating func fitRobust(included: [Int], errors: [[Double]], distances: [[Double]]) throws(LocusError) {
        let c = configuration
        let locatorCount = included.count
        let columns = c.fitsSlope ? 2 * locatorCount : locatorCount
        let rows = included.reduce(0) { $0 + errors[$1].count }
        guard rows >= columns else {
            throw LocusError(.tooFewRanges, "calibration needs at least \(plural(columns, "sample")), has \(rows)")
        }
        // θ: intercept cⱼ at the centred distance (d − d̄ⱼ) for conditioning, then the slope sⱼ.
        var meanDistance = [Double](repeating: 0, count: locatorCount)
        var intercept = [Double](repeating: 0, count: locatorCount)
        var slope = [Double](repeating: 0, count: locatorCount)
        var scale = [Double](repeating: 0, count: locatorCount)
        for (j, slot) in included.enumerated() {
            meanDistance[j] = distances[slot].reduce(0, +) / Double(distances[slot].count)
            intercept[j] = locators[slot].medianErrorMeters ?? 0
        }
        func residual(_ j: Int, _ slot: Int, _ k: Int) -> Double {
            errors[slot][k] - intercept[j] - slope[j] * (distances[slot][k] - meanDistance[j])
        }
        func updateScales() {
            for (j, slot) in included.enumerated() {
                let r = (0..<errors[slot].count).map { residual(j, slot, $0) }
                scale[j] = max(c.minimumScaleMeters, RobustStatistics.robustScale(r))
            }
        }
        var a = [Double](repeating: 0, count: rows * columns)
        var b = [Double](repeating: 0, count: rows)
        var work = [Double](repeating: 0, count: CalibrationLeastSquares.workspaceCount(rows: rows, columns: columns))
        /// One stage of IRLS with weight ψ(u)/u; `rescale` re-estimates σ̂ each pass (Huber), else it is held.
        func stage(rescale: Bool, weight: (Double) -> Double) throws(LocusError) -> Int {
            var passes = 0
            while passes < c.maximumIterations {
                passes += 1
                if rescale { updateScales() }
                for i in 0..<a.count { a[i] = 0 }
                var row = 0
                for (j, slot) in included.enumerated() {
                    for k in 0..<errors[slot].count {
                        let w = weight(abs(residual(j, slot, k)) / scale[j]) / (scale[j] * scale[j])
                        let root = w.squareRoot()
                        a[row + j * rows] = root
                        if c.fitsSlope { a[row + (locatorCount + j) * rows] = root * (distances[slot][k] - meanDistance[j]) }
                        b[row] = root * errors[slot][k]
                        row += 1
                    }
                }
                try CalibrationLeastSquares.solve(a: &a, rows: rows, columns: columns, b: &b, work: &work)
                var change = 0.0
                for j in 0..<locatorCount {
                    guard b[j].isFinite, !c.fitsSlope || b[locatorCount + j].isFinite else {
                        throw LocusError(.degenerateGeometry, "calibration least squares gave a non-finite estimate")
                    }
                    change = max(change, abs(b[j] - intercept[j]))
                    intercept[j] = b[j]
                    if c.fitsSlope {
                        change = max(change, abs(b[locatorCount + j] - slope[j]))
                        slope[j] = b[locatorCount + j]
                    }
                }
                if change <= c.convergenceMeters { break }
            }
            return passes
        }
        let k = c.huberThreshold
        var passes = try stage(rescale: true) { u in RobustWeight.huber(u, threshold: k) }
        updateScales()
        var threshold = k
        if c.estimator == .tukey {
            let t = c.tukeyThreshold
            threshold = t
            passes += try stage(rescale: false) { u in RobustWeight.tukeyBisquare(u, threshold: t) }
        }
        iterations = passes
        for (j, slot) in included.enumerated() {
            let r = (0..<errors[slot].count).map { residual(j, slot, $0) }
            locators[slot].sigmaMeters = RobustStatistics.robustScale(r)
            locators[slot].biasMeters = intercept[j]
            let limit = threshold * scale[j]
            locators[slot].downweightedCount = r.reduce(0) { $0 + (abs($1) > limit ? 1 : 0) }
            if c.fitsSlope {
                locators[slot].slope = slope[j]
                locators[slot].interceptMeters = intercept[j] - slope[j] * meanDistance[j]
            }
        }
    }
}
