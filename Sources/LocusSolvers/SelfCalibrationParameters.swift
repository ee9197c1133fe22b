import LocusCore
import LocusNumerics

/// The locators' parameters a self-calibration fits, written once for `SelfCalibrationSolver`
/// (ranges: bias, slope, position correction, the tag's delay) and `DifferenceSelfCalibrationSolver`
/// (differences: bias and position correction; no slope, no tag delay): which are free, their
/// current values, their columns in the reduced normal equations, the soft priors on them, and a
/// step applied to them.
struct SelfCalibrationParameters {
    /// Which locator parameters are free (the others stay at their values).
    var freeBias: [Bool]
    var freeSlope: [Bool]
    var freeOffset: [Bool]
    var freeTagDelay: Bool
    /// Current values.
    var bias: [Double]
    var slope: [Double]
    /// Position corrections δᵢ, 3 per locator (z stays 0 on a planar floor).
    var offset: [Double]
    var tagDelay = 0.0
    /// A soft constraint holding the mean of the free biases (when the data do not fix it; with
    /// differences the gauge).
    var meanBiasPrior: Double?
    /// A soft constraint holding the mean of the free slopes (the common range scale).
    var meanSlopePrior: Double?
    /// Combinations of the biases held at the site's values (`SelfCalibration.looseBiasDirections`):
    /// a unit vector v over the locators (0 for the fixed ones) and the value vᵀb it is held at.
    var heldBiasDirections: [(direction: [Double], value: Double)] = []
    /// Directions along which a locator's correction is held at 0 (`SurveyCheckable`).
    var heldOffsetDirections: [(locator: Int, direction: Vector3)] = []

    /// Every bias free (from `initialBias`), slopes free with `freeSlope`, the tag delay free with
    /// `freeTagDelay`, no position correction.
    init(initialBias: [Double], freeSlope: Bool, freeTagDelay: Bool) {
        let n = initialBias.count
        freeBias = Array(repeating: true, count: n)
        self.freeSlope = Array(repeating: freeSlope, count: n)
        freeOffset = Array(repeating: false, count: n)
        self.freeTagDelay = freeTagDelay
        bias = initialBias
        slope = Array(repeating: 0, count: n)
        offset = Array(repeating: 0, count: 3 * n)
    }

    /// Locator i's position: its surveyed position `surveyed` with its correction.
    func position(_ i: Int, surveyed: Point3) -> Point3 {
        Point3(x: surveyed.x + offset[3 * i], y: surveyed.y + offset[3 * i + 1], z: surveyed.z + offset[3 * i + 2])
    }

    /// The free global parameters, in column order.
    enum Parameter: Equatable {
        case bias(Int), slope(Int), offset(Int, axis: Int), tagDelay
    }

    /// Column of each parameter (−1: fixed).
    struct Columns {
        var list: [Parameter] = []
        var bias: [Int], slope: [Int], offset: [Int], tagDelay = -1
        /// The columns of the free parameters of `parameters`; a correction has `dimensions` axes.
        init(_ parameters: SelfCalibrationParameters, dimensions: Int) {
            let n = parameters.bias.count
            bias = Array(repeating: -1, count: n)
            slope = bias
            offset = Array(repeating: -1, count: 3 * n)
            for i in 0..<n where parameters.freeBias[i] { bias[i] = list.count; list.append(.bias(i)) }
            for i in 0..<n where parameters.freeSlope[i] { slope[i] = list.count; list.append(.slope(i)) }
            for i in 0..<n where parameters.freeOffset[i] {
                for axis in 0..<dimensions { offset[3 * i + axis] = list.count; list.append(.offset(i, axis: axis)) }
            }
            if parameters.freeTagDelay { tagDelay = list.count; list.append(.tagDelay) }
        }
    }

    /// Soft priors added to a reduced system S (P×P) and its right-hand side: slopes towards 0
    /// (σ 5 %), position corrections towards 0 (σ 10 m: only keeps S regular) and held at 0 along
    /// `heldOffsetDirections` (σ 1 mm), the mean of the free biases when it is held (σ 1 mm) and of
    /// the free slopes (σ 10⁻⁵).
    func addPriors(columns: Columns, s: inout [Double], rhs: inout [Double]) {
        let count = columns.list.count
        for (c, parameter) in columns.list.enumerated() {
            switch parameter {
            case .slope(let i):
                let w = 1 / (0.05 * 0.05)
                s[c * count + c] += w
                rhs[c] -= w * slope[i]
            case .offset(let i, let axis):
                let w = 1 / (10.0 * 10.0)
                s[c * count + c] += w
                rhs[c] -= w * offset[3 * i + axis]
            default:
                break
            }
        }
        if let mean = meanBiasPrior {
            holdMean(of: bias.indices.filter { columns.bias[$0] >= 0 }, at: mean, values: bias, columnOf: columns.bias,
                     sigma: 0.001, count: count, s: &s, rhs: &rhs)
        }
        holdOffsetDirections(columns: columns, count: count, s: &s, rhs: &rhs)
        holdBiasDirections(columns: columns, count: count, s: &s, rhs: &rhs)
        if let mean = meanSlopePrior {
            holdMean(of: slope.indices.filter { columns.slope[$0] >= 0 }, at: mean, values: slope, columnOf: columns.slope,
                     sigma: 1e-5, count: count, s: &s, rhs: &rhs)
        }
    }

    /// The pseudo-observations vᵢ·δᵢ = 0 (σ 1 mm) of `heldOffsetDirections` (locator i, unit vᵢ; the survey
    /// check's directions it cannot check) added to S and its right-hand side; δᵢ's fixed axes are skipped.
    private func holdOffsetDirections(columns: Columns, count: Int, s: inout [Double], rhs: inout [Double]) {
        let w = 1 / (0.001 * 0.001)
        for (i, v) in heldOffsetDirections {
            let vs = [v.x, v.y, v.z], column = (0..<3).map { columns.offset[3 * i + $0] }
            var current = 0.0
            for a in 0..<3 { current += vs[a] * offset[3 * i + a] }
            for a in 0..<3 where column[a] >= 0 {
                rhs[column[a]] -= w * vs[a] * current
                for b in 0..<3 where column[b] >= 0 { s[column[b] * count + column[a]] += w * vs[a] * vs[b] }
            }
        }
    }

    /// The pseudo-observations vᵀb = value (σ 1 mm) of `heldBiasDirections`, over the free biases.
    private func holdBiasDirections(columns: Columns, count: Int, s: inout [Double], rhs: inout [Double]) {
        let w = 1 / (0.001 * 0.001)
        for (v, value) in heldBiasDirections {
            let locators = v.indices.filter { columns.bias[$0] >= 0 && v[$0] != 0 }
            let current = locators.reduce(0.0) { $0 + v[$1] * bias[$1] }
            for i in locators {
                let ci = columns.bias[i]
                rhs[ci] += w * v[i] * (value - current)
                for k in locators { s[columns.bias[k] * count + ci] += w * v[i] * v[k] }
            }
        }
    }

    /// The pseudo-observation mean(values of `locators`) = `mean` with standard deviation `sigma`.
    private func holdMean(of locators: [Int], at mean: Double, values: [Double], columnOf: [Int], sigma: Double, count: Int,
                          s: inout [Double], rhs: inout [Double]) {
        guard !locators.isEmpty else { return }
        let a = 1 / Double(locators.count)
        let current = locators.reduce(0.0) { $0 + values[$1] } * a
        let w = 1 / (sigma * sigma)
        for i in locators {
            let ca = columnOf[i]
            rhs[ca] += w * a * (mean - current)
            for k in locators { s[columnOf[k] * count + ca] += w * a * a }
        }
    }

    /// The step Δθ = S⁺ rhs of a reduced system (directions the data do not determine, below
    /// `rankThreshold`, stay at zero).
    /// - Throws: `E4002` when LAPACK fails on S.
    static func step(s: [Double], rhs: [Double], rankThreshold: Double) throws(LocusError) -> [Double] {
        let count = rhs.count
        var delta = [Double](repeating: 0, count: count)
        guard count > 0 else { return delta }
        let inverse = try SymmetricEigen(s, size: count).pseudoInverse(relativeThreshold: rankThreshold)
        for r in 0..<count {
            var sum = 0.0
            for c in 0..<count { sum += inverse[c * count + r] * rhs[c] }
            delta[r] = sum
        }
        return delta
    }

    /// Adds the step `delta` (in `columns`' order); returns its largest component.
    mutating func apply(_ delta: [Double], columns: Columns) -> Double {
        var largest = 0.0
        for (c, parameter) in columns.list.enumerated() {
            largest = max(largest, abs(delta[c]))
            switch parameter {
            case .bias(let i): bias[i] += delta[c]
            case .slope(let i): slope[i] += delta[c]
            case .offset(let i, let axis): offset[3 * i + axis] += delta[c]
            case .tagDelay: tagDelay += delta[c]
            }
        }
        return largest
    }
}
