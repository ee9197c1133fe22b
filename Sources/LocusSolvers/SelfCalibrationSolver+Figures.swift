import LocusCore
import LocusNumerics

/// The solver's read-outs: the uncertainty of its parameters, its residual and path figures, and the
/// small dense algebra its steps use (kept apart from the model and the steps in
/// SelfCalibrationSolver.swift).
extension SelfCalibrationSolver {
    // MARK: uncertainty

    /// The covariance of the free parameters at the current values, with the directions the data do
    /// not determine: (columns, S⁺, eigen-decomposition of S).
    func uncertainty() throws(LocusError) -> Uncertainty {
        let (s, _, columns) = reducedSystem()
        let eigen = try SymmetricEigen(s, size: max(1, columns.list.count))
        return Uncertainty(parameters: columns.list, eigen: eigen, threshold: configuration.rankThreshold)
    }

    /// Standard deviations of linear combinations of the free parameters.
    struct Uncertainty {
        let parameters: [Parameter]
        let eigen: SymmetricEigen
        let threshold: Double

        /// σ of aᵀθ for `a` given as (parameter, coefficient); +∞ when a direction the data do not
        /// determine takes part in it.
        func standardDeviation(_ a: [(Parameter, Double)]) -> Double {
            let n = eigen.size
            var vector = [Double](repeating: 0, count: n)
            for (p, v) in a {
                guard let c = parameters.firstIndex(of: p) else { continue }
                vector[c] += v
            }
            let norm = vector.reduce(0) { $0 + $1 * $1 }.squareRoot()
            guard norm > 0 else { return 0 }
            var variance = 0.0
            for k in 0..<n {
                var dot = 0.0
                for r in 0..<n { dot += eigen.vectors[k * n + r] * vector[r] }
                if eigen.isDetermined(k, relativeThreshold: threshold) {
                    variance += dot * dot / eigen.values[k]
                } else if abs(dot) > 1e-6 * norm {
                    return .infinity
                }
            }
            return variance.squareRoot()
        }

        /// The covariance of two parameters (0 when either is fixed or undetermined).
        func covariance(_ a: Parameter, _ b: Parameter) -> Double {
            guard let ca = parameters.firstIndex(of: a), let cb = parameters.firstIndex(of: b) else { return 0 }
            let n = eigen.size
            var sum = 0.0
            for k in 0..<n where eigen.isDetermined(k, relativeThreshold: threshold) {
                sum += eigen.vectors[k * n + ca] * eigen.vectors[k * n + cb] / eigen.values[k]
            }
            return sum
        }
    }

    // MARK: figures

    /// Per locator: ranges, and RMS of the residuals of the ranges the final weights keep (|u| < c).
    func residualFigures() -> (counts: [Int], inliers: [Int], rms: Double, outliers: Int) {
        var counts = [Int](repeating: 0, count: anchors.count), inliers = counts
        var sum = 0.0, kept = 0, outliers = 0
        for j in 0..<data.epochCount where isUsable(j) {
            for m in data.epochStarts[j]..<data.epochStarts[j + 1] {
                let i = data.slots[m]
                counts[i] += 1
                let e = residual(m, epoch: j)
                if abs(e / sigma[i]) < configuration.tukeyThreshold {
                    sum += e * e
                    kept += 1
                    inliers[i] += 1
                } else {
                    outliers += 1
                }
            }
        }
        return (counts, inliers, kept > 0 ? (sum / Double(kept)).squareRoot() : 0, outliers)
    }

    /// The spread of the fitted tag path: the standard deviation of the positions across their
    /// principal direction (the minor axis), metres; and along it (the major axis).
    func pathSpread() -> (minor: Double, major: Double) {
        let used = (0..<data.epochCount).filter(isUsable)
        let count = Double(max(1, used.count))
        var mx = 0.0, my = 0.0
        for j in used { mx += positions[3 * j]; my += positions[3 * j + 1] }
        mx /= count; my /= count
        var sxx = 0.0, syy = 0.0, sxy = 0.0
        for j in used {
            let dx = positions[3 * j] - mx, dy = positions[3 * j + 1] - my
            sxx += dx * dx; syy += dy * dy; sxy += dx * dy
        }
        sxx /= count; syy /= count; sxy /= count
        let mean = (sxx + syy) / 2, root = (((sxx - syy) / 2) * ((sxx - syy) / 2) + sxy * sxy).squareRoot()
        return (max(0, mean - root).squareRoot(), (mean + root).squareRoot())
    }

    // MARK: small dense algebra

    /// x = A⁻¹ b for the leading n×n block of a 3×3 row-major A (n = 2 or 3); nil when singular.
    static func solveSmall(_ a: [Double], _ b: [Double], _ n: Int) -> [Double]? {
        guard let inverse = invertSmall(a, n) else { return nil }
        var x = [Double](repeating: 0, count: 3)
        for r in 0..<n { for c in 0..<n { x[r] += inverse[3 * r + c] * b[c] } }
        return x
    }

    /// The inverse of the leading n×n block of a 3×3 row-major matrix (n = 2 or 3); nil when singular.
    static func invertSmall(_ a: [Double], _ n: Int) -> [Double]? {
        var out = [Double](repeating: 0, count: 9)
        if n == 2 {
            let det = a[0] * a[4] - a[1] * a[3]
            guard abs(det) > 1e-300 else { return nil }
            out[0] = a[4] / det; out[1] = -a[1] / det; out[3] = -a[3] / det; out[4] = a[0] / det
            return out
        }
        let c00 = a[4] * a[8] - a[5] * a[7], c01 = a[5] * a[6] - a[3] * a[8], c02 = a[3] * a[7] - a[4] * a[6]
        let det = a[0] * c00 + a[1] * c01 + a[2] * c02
        guard abs(det) > 1e-300 else { return nil }
        out[0] = c00 / det; out[3] = c01 / det; out[6] = c02 / det
        out[1] = (a[2] * a[7] - a[1] * a[8]) / det; out[4] = (a[0] * a[8] - a[2] * a[6]) / det; out[7] = (a[1] * a[6] - a[0] * a[7]) / det
        out[2] = (a[1] * a[5] - a[2] * a[4]) / det; out[5] = (a[2] * a[3] - a[0] * a[5]) / det; out[8] = (a[0] * a[4] - a[1] * a[3]) / det
        return out
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let m = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2
    }
}
