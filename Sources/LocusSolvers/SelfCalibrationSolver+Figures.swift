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

    /// The combinations of the free biases this recording leaves loose: the eigenvectors v of their
    /// information J = S_bb − S_bo·S_oo⁺·S_ob (S the reduced normal matrix, the other free parameters
    /// eliminated) whose σ = 1/√λ exceeds `maximumSD` (λ ≤ 0: not determined at all), each as a unit
    /// vector over every locator (0 for the fixed ones) with the value vᵀb it has at `reference`.
    /// Holding these at the site's values and fitting the rest changes nothing the data determine and
    /// leaves the site as it was where they do not — unlike holding a loose locator's own bias, which
    /// its correlated neighbours then absorb (4 locators in 3-D: 0.1–0.5 m off).
    /// - Throws: `E4002` when LAPACK fails.
    func looseBiasDirections(maximumSD: Double, reference: [Double]) throws(LocusError) -> [(direction: [Double], value: Double)] {
        let (s, _, columns) = reducedSystem()
        let count = columns.list.count
        let biasColumns = columns.bias.enumerated().filter { $0.element >= 0 }
        let others = (0..<count).filter { c in !biasColumns.contains { $0.element == c } }
        let nb = biasColumns.count
        guard nb > 0 else { return [] }
        var j = [Double](repeating: 0, count: nb * nb)
        for (a, ca) in biasColumns.enumerated() { for (b, cb) in biasColumns.enumerated() { j[a * nb + b] = s[ca.element * count + cb.element] } }
        if !others.isEmpty {
            let no = others.count
            var soo = [Double](repeating: 0, count: no * no)
            for (a, ca) in others.enumerated() { for (b, cb) in others.enumerated() { soo[a * no + b] = s[ca * count + cb] } }
            let inverse = try SymmetricEigen(soo, size: no).pseudoInverse(relativeThreshold: configuration.rankThreshold)
            // X = S_oo⁺·S_ob (no × nb), then J −= S_bo·X.
            var x = [Double](repeating: 0, count: no * nb)
            for r in 0..<no {
                for (b, cb) in biasColumns.enumerated() {
                    var sum = 0.0
                    for (y, cy) in others.enumerated() { sum += inverse[r * no + y] * s[cy * count + cb.element] }
                    x[r * nb + b] = sum
                }
            }
            for (a, ca) in biasColumns.enumerated() {
                for b in 0..<nb {
                    var sum = 0.0
                    for (r, cr) in others.enumerated() { sum += s[ca.element * count + cr] * x[r * nb + b] }
                    j[a * nb + b] -= sum
                }
            }
        }
        let eigen = try SymmetricEigen(j, size: nb)
        var loose: [(direction: [Double], value: Double)] = []
        for k in 0..<nb where eigen.values[k] * maximumSD * maximumSD < 1 {
            var v = [Double](repeating: 0, count: anchors.count), value = 0.0
            for (a, ca) in biasColumns.enumerated() {
                v[ca.offset] = eigen.vectors[k * nb + a]
                value += v[ca.offset] * reference[ca.offset]
            }
            loose.append((v, value))
        }
        return loose
    }

    /// The recording's geometry as the fit sees it: the share of the usable epochs with two or more
    /// ranges beyond the tag's coordinates (what a held-out figure needs), and the median over the
    /// usable epochs of the dilution √trace(N⁻¹), N = Σ uᵢuᵢᵀ over the epoch's lines of sight at its
    /// fitted position (PDOP in 3-D, HDOP planar): how much a range error moves a fix.
    func geometryFigures() -> (redundantShare: Double, medianDilution: Double) {
        let dims = dimensions
        var dilutions: [Double] = [], redundant = 0
        for j in 0..<data.epochCount where isUsable(j) {
            let epoch = data.epochStarts[j]..<data.epochStarts[j + 1]
            if epoch.count >= dims + 2 { redundant += 1 }
            var n = [Double](repeating: 0, count: 9)
            for m in epoch {
                let p = tagPosition(j, at: data.timesSeconds[m]), q = anchor(data.slots[m])
                let d = Vector3(x: p.x - q.x, y: p.y - q.y, z: p.z - q.z)
                let length = max(1e-6, RangeModel.predicted(dx: d.x, dy: d.y, dz: d.z))
                let u = d / length
                for r in 0..<dims { for c in 0..<dims { n[3 * r + c] += u[r] * u[c] } }
            }
            guard let inverse = SmallDenseSolve.inverse(n, order: dims) else {
                dilutions.append(.infinity)
                continue
            }
            var trace = 0.0
            for r in 0..<dims { trace += inverse[3 * r + r] }
            dilutions.append(trace > 0 ? trace.squareRoot() : .infinity)
        }
        guard !dilutions.isEmpty else { return (0, .infinity) }
        return (Double(redundant) / Double(dilutions.count), RobustStatistics.median(dilutions))
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

    /// The spread of the fitted tag path: the standard deviation of its 1 s means (each tag's epochs
    /// averaged over windows of `pathWindowSeconds`, weighted by their epochs) across their principal
    /// direction (the minor axis), metres; and along it (the major axis). The means, not the epochs
    /// themselves: a still tag's fixes scatter by their noise (10 cm 1σ with one of four anchors blocked,
    /// Bielefeld blocked-a1), which is not where the tag went, and 1 s of walking barely moves the mean
    /// off the path.
    func pathSpread() -> (minor: Double, major: Double) {
        let used = (0..<data.epochCount).filter(isUsable)
        var means: [Double] = [], weights: [Double] = []
        var start = 0
        while start < used.count {
            let first = used[start]
            let window = (epochTimes[first] / Self.pathWindowSeconds).rounded(.down)
            var end = start, x = 0.0, y = 0.0
            while end < used.count, data.epochTags[used[end]] == data.epochTags[first],
                  (epochTimes[used[end]] / Self.pathWindowSeconds).rounded(.down) == window {
                x += positions[3 * used[end]]; y += positions[3 * used[end] + 1]
                end += 1
            }
            let count = Double(end - start)
            means += [x / count, y / count, 0]
            weights.append(count)
            start = end
        }
        return Self.pathSpread(positions: means, epochs: Array(weights.indices), weights: weights)
    }

    /// The window of the path's means (`pathSpread()`), seconds.
    static let pathWindowSeconds = 1.0

    /// The spread of `positions` (3 per epoch) over `epochs` across and along their principal
    /// direction (1σ, metres; each epoch weighted by `weights[k]` for `epochs[k]` when given); shared
    /// with `DifferenceSelfCalibrationSolver`.
    static func pathSpread(positions: [Double], epochs used: [Int], weights: [Double]? = nil) -> (minor: Double, major: Double) {
        var total = 0.0, mx = 0.0, my = 0.0
        for (k, j) in used.enumerated() {
            let w = weights?[k] ?? 1
            total += w; mx += w * positions[3 * j]; my += w * positions[3 * j + 1]
        }
        total = max(total, 1e-300)
        mx /= total; my /= total
        var sxx = 0.0, syy = 0.0, sxy = 0.0
        for (k, j) in used.enumerated() {
            let w = weights?[k] ?? 1
            let dx = positions[3 * j] - mx, dy = positions[3 * j + 1] - my
            sxx += w * dx * dx; syy += w * dy * dy; sxy += w * dx * dy
        }
        sxx /= total; syy /= total; sxy /= total
        let (major, minor) = SymmetricMatrix3.eigenvalues2x2(xx: sxx, xy: sxy, yy: syy)
        return (max(0, minor).squareRoot(), max(0, major).squareRoot())
    }
}
