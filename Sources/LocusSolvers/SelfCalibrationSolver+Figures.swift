import LocusCore
import LocusNumerics

/// What the bundle adjustment reports once it has converged: the parameters' covariance (with the
/// directions the data do not determine), the residual figures and the spread of the fitted path.
extension SelfCalibrationSolver {
    // MARK: uncertainty

    /// The covariance of the free parameters at the current values, with the directions the data do
    /// not determine: (columns, S⁺, eigen-decomposition of S).
    func uncertainty() throws(LocusError) -> Uncertainty {
        let (s, _, columns) = reducedSystem()
        // No free parameter left (every bias undetermined and kept): a 1×1 zero system, nothing determined.
        let eigen = try SymmetricEigen(columns.list.isEmpty ? [0] : s, size: max(1, columns.list.count))
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
        Self.pathSpread(positions: positions, epochs: (0..<data.epochCount).filter(isUsable))
    }

    /// The spread of `positions` (3 per epoch) over `epochs` across and along their principal
    /// direction (1σ, metres); shared with `DifferenceSelfCalibrationSolver`.
    static func pathSpread(positions: [Double], epochs used: [Int]) -> (minor: Double, major: Double) {
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
        let (major, minor) = SymmetricMatrix3.eigenvalues2x2(xx: sxx, xy: sxy, yy: syy)
        return (max(0, minor).squareRoot(), major.squareRoot())
    }
}
