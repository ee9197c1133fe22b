import LocusCore
import LocusNumerics

/// Calibration samples from range differences (TDoA) at known tag positions: per row, the two
/// locators' slots and the difference's error eₖ = zₖ − (‖pₖ − b‖ − ‖pₖ − a‖), metres.
struct DifferenceCalibrationSamples: Sendable {
    private(set) var referenceSlots: [Int] = []
    private(set) var locatorSlots: [Int] = []
    private(set) var errorsMeters: [Double] = []

    /// No samples.
    init() {}

    /// Number of samples.
    var count: Int { errorsMeters.count }

    /// Adds the difference `differenceMeters` = d(tag, B) − d(tag, A) measured with the tag truly at
    /// `tagPosition`; A, B: slots in the floor's order, at `reference` and `locator`.
    mutating func append(referenceSlot: Int, reference: Point3, locatorSlot: Int, locator: Point3,
                         differenceMeters: Double, tagPosition: Point3) {
        let e = differenceMeters - DifferenceModel.predicted(at: tagPosition, reference: reference, locator: locator)
        guard e.isFinite, referenceSlot != locatorSlot else { return }
        referenceSlots.append(referenceSlot)
        locatorSlots.append(locatorSlot)
        errorsMeters.append(e)
    }
}

/// Locator biases from range differences with truth (`locus calibrate --truth` on a TDoA trace).
///
/// **What is identifiable.** A difference sees eₖ = b_B − b_A + εₖ: only differences of biases. A
/// bias common to every locator (a shared cable delay, the tags' own delay) cancels in every row
/// and cannot be estimated; the estimate fixes it by keeping the mean bias of the locators it
/// estimates at the site's (the gauge). Locators joined by no chain of pairs to the others would
/// each need a gauge of their own; the pairs of one site's rows connect them all in practice.
///
/// **Estimator.** Minimise Σₖ ρ((eₖ − δ_B + δ_A)/σ̂) over δ with Σᵢ δᵢ = Σᵢ b_i(site): the normal
/// equations (L + 11ᵀ) δ = r + 1·Σb, L = Σ wₖ gₖgₖᵀ (a weighted graph Laplacian, gₖ = e_B − e_A),
/// r = Σ wₖ eₖ gₖ — 1ᵀL = 0 and 1ᵀr = 0 make 1ᵀδ = Σb and leave L δ = r on the rest. Unweighted
/// first, then Huber IRLS with σ̂ = 1.4826·MAD re-estimated each pass, then Tukey's bisquare with σ̂
/// held (as `RangeCalibration`; LAPACKE `dposv` per pass: offline work). Per locator, σ̂ᵢ is the robust scale of its rows' residuals / √2 (a
/// difference holds two arrivals' noise).
enum DifferenceCalibration {
    /// The calibration of `floor` from `samples`, as a `RangeCalibration` (its `applied(to:)` writes
    /// the biases), every locator with `minimumSamples` rows (as A or B) estimated.
    /// - Throws: E4001 when fewer than two locators have enough rows; E4002 when the normal matrix is singular.
    static func estimate(floor: Floor, samples: DifferenceCalibrationSamples,
                         configuration: RangeCalibrationConfiguration = .standard) throws(LocusError) -> RangeCalibration {
        let n = floor.locators.count
        var rows = [Int](repeating: 0, count: n)
        for k in 0..<samples.count {
            rows[samples.referenceSlots[k]] += 1
            rows[samples.locatorSlots[k]] += 1
        }
        let included = (0..<n).filter { rows[$0] >= max(1, configuration.minimumSamples) }
        guard included.count >= 2 else {
            throw LocusError(.tooFewRanges, "fewer than two locators have \(configuration.minimumSamples) or more differences with truth")
        }
        var column = [Int](repeating: -1, count: n)
        for (j, slot) in included.enumerated() { column[slot] = j }
        let used = (0..<samples.count).filter { column[samples.referenceSlots[$0]] >= 0 && column[samples.locatorSlots[$0]] >= 0 }
        let m = included.count
        let gauge = included.reduce(0.0) { $0 + floor.locators[$1].biasMeters }
        var delta = [Double](repeating: gauge / Double(m), count: m)
        func residual(_ k: Int) -> Double {
            samples.errorsMeters[k] - delta[column[samples.locatorSlots[k]]] + delta[column[samples.referenceSlots[k]]]
        }
        /// One weighted solve; false when singular.
        func solve(_ weight: (Int) -> Double) throws(LocusError) {
            var a = [Double](repeating: 1, count: m * m)   // + 11ᵀ
            var r = [Double](repeating: gauge, count: m)   // + 1·Σb
            for k in used {
                let w = weight(k)
                let i = column[samples.locatorSlots[k]], j = column[samples.referenceSlots[k]]
                let e = samples.errorsMeters[k]
                a[i * m + i] += w; a[j * m + j] += w
                a[i * m + j] -= w; a[j * m + i] -= w
                r[i] += w * e; r[j] -= w * e
            }
            // (L + 11ᵀ is symmetric, so its row-major fill is its column-major one; positive definite
            // exactly when the pairs connect the locators.)
            guard try LapackLinearAlgebra.solvePositiveDefinite(&a, order: m, b: &r), r.allSatisfy(\.isFinite) else {
                throw LocusError(.degenerateGeometry, "the differences do not connect the locators: their biases are not determined")
            }
            delta = r
        }
        try solve { _ in 1 }
        var iterations = 0
        func scale() -> Double { max(configuration.minimumScaleMeters, RobustStatistics.robustScale(used.map(residual))) }
        var sigma = scale()
        for stage in 0..<(configuration.estimator == .median ? 0 : (configuration.estimator == .tukey ? 2 : 1)) {
            for _ in 0..<configuration.maximumIterations {
                iterations += 1
                if stage == 0 { sigma = scale() }
                let before = delta
                let k = configuration.huberThreshold, c = configuration.tukeyThreshold
                try solve { index in
                    let u = abs(residual(index)) / sigma
                    return stage == 0 ? RobustWeight.huber(u, threshold: k) : RobustWeight.tukeyBisquare(u, threshold: c)
                }
                if zip(before, delta).allSatisfy({ abs($0 - $1) <= configuration.convergenceMeters }) { break }
            }
        }
        var locators = floor.locators.enumerated().map { slot, locator in
            LocatorCalibration(address: locator.address, sampleCount: rows[slot], biasMeters: nil, medianErrorMeters: nil,
                               sigmaMeters: nil, interceptMeters: nil, slope: nil, meanDistanceMeters: nil, downweightedCount: 0)
        }
        let limit = (configuration.estimator == .tukey ? configuration.tukeyThreshold : configuration.huberThreshold) * sigma
        for (j, slot) in included.enumerated() {
            let mine = used.filter { samples.locatorSlots[$0] == slot || samples.referenceSlots[$0] == slot }
            let r = mine.map(residual)
            locators[slot].biasMeters = delta[j]
            locators[slot].sigmaMeters = RobustStatistics.robustScale(r) / 2.0.squareRoot()
            locators[slot].downweightedCount = r.reduce(0) { $0 + (abs($1) > limit ? 1 : 0) }
        }
        return RangeCalibration(locators: locators, iterations: iterations, configuration: configuration)
    }
}
