import LocusCore
import LocusNumerics

/// The bundle adjustment behind `DifferenceSelfCalibration`: every blink's tag position and offset
/// and the locators' biases fitted jointly to the range differences, by Gauss–Newton with robust
/// weights (the structure of `SelfCalibrationSolver`, with a nuisance offset per blink).
///
/// Model, arrival i of blink j (the pseudo-range form, `DifferenceSelfCalibrationData`):
///   yᵢⱼ = ‖pⱼ − (aᵢ + δᵢ)‖ + bᵢ + τⱼ + εᵢⱼ,
/// pⱼ the tag (x, y at the floor's tag height on a planar floor; x, y, z otherwise), τⱼ the blink's
/// offset, bᵢ the bias, δᵢ a correction of the surveyed position aᵢ (survey check). The arrivals of
/// a blink are simultaneous: no velocity. A bias common to all locators moves into every τⱼ, so
/// only differences of biases are observable: their mean is held at `meanBiasPrior` (1 mm).
///
/// Each step eliminates τⱼ by weighted centring (for rows rₘ = [∂/∂p, ∂/∂θ], weights wₘ:
/// A = Σ wₘ rₘrₘᵀ − (Σ wₘrₘ)(Σ wₘrₘ)ᵀ/Σ wₘ, the same for the right-hand side), then pⱼ by the Schur
/// complement S = A_θθ − A_θp A_pp⁻¹ A_pθ, and solves S by its eigen-decomposition (LAPACKE
/// `dsyev`, `SymmetricEigen`): directions the data do not determine stay at zero. Weights
/// wₘ = ψ(eₘ/σᵢ)/σᵢ², Huber for the first steps then Tukey's bisquare (an NLOS arrival weighs 0),
/// σᵢ = 1.4826·MAD of locator i's studentised arrival residuals: the noise σ per arrival.
struct DifferenceSelfCalibrationSolver {
    typealias Parameter = SelfCalibrationParameters.Parameter
    typealias Columns = SelfCalibrationParameters.Columns
    /// The locators' parameters (bias and position correction; no slope, no tag delay); the mean of
    /// the free biases is held (the gauge).
    var parameters: SelfCalibrationParameters
    /// Robust scale per locator (noise σ per arrival), metres.
    private(set) var sigma: [Double]
    private(set) var iterations = 0
    /// The largest change of a global parameter and the RMS change of the blinks' positions in the
    /// last step (metres).
    private(set) var lastMove = (parameters: 0.0, positions: 0.0)
    let data: DifferenceSelfCalibrationData
    let anchors: [Point3]
    /// 2 (planar: z at the tag height) or 3.
    let dimensions: Int
    let configuration: SelfCalibrationConfiguration
    /// Per blink: position (3 per blink) and offset τ, metres.
    private(set) var positions: [Double]
    private var offsets: [Double]
    private var useTukey = false

    /// A problem on `data` with every bias free (from `initialBias`), no position correction, the
    /// blinks' positions and offsets from a fit per blink.
    init(data: DifferenceSelfCalibrationData, anchors: [Point3], planar: Bool, tagHeight: Double, initialBias: [Double],
         configuration: SelfCalibrationConfiguration) {
        let n = anchors.count
        self.data = data
        self.anchors = anchors
        dimensions = planar ? 2 : 3
        self.configuration = configuration
        parameters = SelfCalibrationParameters(initialBias: initialBias, freeSlope: false, freeTagDelay: false)
        sigma = Array(repeating: 0.1, count: n)
        positions = Array(repeating: 0, count: 3 * data.blinkCount)
        offsets = Array(repeating: 0, count: data.blinkCount)
        let c = anchors.reduce(Point3(x: 0, y: 0, z: 0)) { Point3(x: $0.x + $1.x, y: $0.y + $1.y, z: $0.z + $1.z) }
        let centroid = Point3(x: c.x / Double(max(1, n)), y: c.y / Double(max(1, n)), z: tagHeight)
        var start = centroid
        for j in 0..<data.blinkCount {
            if j > 0, data.blinkTags[j] != data.blinkTags[j - 1] { start = centroid }
            positions[3 * j] = start.x; positions[3 * j + 1] = start.y; positions[3 * j + 2] = start.z
            offsets[j] = centredOffset(j)
            guard isUsable(j) else { continue }
            for _ in 0..<15 {
                if blinkStep(j, delta: [], columns: nil) < 1e-6 { break }
            }
            start = Point3(x: positions[3 * j], y: positions[3 * j + 1], z: positions[3 * j + 2])
        }
        updateScales()
    }

    /// Whether blink j holds more arrivals than its position and offset have coordinates.
    func isUsable(_ j: Int) -> Bool { data.blinkStarts[j + 1] - data.blinkStarts[j] > dimensions + 1 }

    /// The locator's position with its correction.
    private func anchor(_ i: Int) -> Point3 {
        parameters.position(i, surveyed: anchors[i])
    }

    /// Residual of arrival m of blink j: measured minus modelled pseudo-range, metres.
    func residual(_ m: Int, blink j: Int) -> Double {
        let i = data.slots[m]
        let p = Point3(x: positions[3 * j], y: positions[3 * j + 1], z: positions[3 * j + 2])
        return data.pseudoRangesMeters[m] - (RangeModel.predicted(from: p, to: anchor(i)) + parameters.bias[i] + offsets[j])
    }

    /// The residual of difference m (an arrival other than the blink's reference): z − h − (b_B − b_A),
    /// h from `DifferenceModel` (the blink's offset cancels): `residual(m) − residual(reference)`, the
    /// pseudo-range form checked against the model spelled once (test `pseudoRangeForm`).
    func differenceResidual(_ m: Int, blink j: Int) -> Double {
        let a = data.blinkReferences[j], b = data.slots[m]
        let p = Point3(x: positions[3 * j], y: positions[3 * j + 1], z: positions[3 * j + 2])
        return data.pseudoRangesMeters[m] - DifferenceModel.predicted(at: p, reference: anchor(a), locator: anchor(b)) - parameters.bias[b] + parameters.bias[a]
    }

    /// τⱼ minimising the weighted residuals at the current position (the weights' mean residual).
    private func centredOffset(_ j: Int) -> Double {
        var sw = 0.0, se = 0.0
        for m in data.blinkStarts[j]..<data.blinkStarts[j + 1] {
            let w = 1 / (sigma[data.slots[m]] * sigma[data.slots[m]])
            sw += w
            se += w * (residual(m, blink: j) + offsets[j])
        }
        return sw > 0 ? se / sw : 0
    }

    private func robustWeight(_ u: Double) -> Double {
        useTukey ? RobustWeight.tukeyBisquare(u, threshold: configuration.tukeyThreshold)
            : RobustWeight.huber(u, threshold: configuration.huberThreshold)
    }

    // MARK: the blink's centred system

    /// Blink j's normal equations with τ eliminated, in the blink's local columns: A (order D + L,
    /// row-major, the first D the position), g, and Σw, Σw·r, Σw·e for the back-substitution; `local`
    /// maps the L local columns to global ones. With `columns` nil, the position only (L = 0).
    private func blinkSystem(_ j: Int, columns: Columns?) -> (a: [Double], g: [Double], sw: Double, mr: [Double], me: Double, local: [Int]) {
        let d = dimensions
        var local: [Int] = []
        var rows: [(r: [Double], e: Double, w: Double)] = []
        let p = Point3(x: positions[3 * j], y: positions[3 * j + 1], z: positions[3 * j + 2])
        for m in data.blinkStarts[j]..<data.blinkStarts[j + 1] {
            let i = data.slots[m]
            let q = anchor(i)
            let rho = max(1e-6, RangeModel.predicted(dx: p.x - q.x, dy: p.y - q.y, dz: p.z - q.z))
            let u = RangeModel.unit(dx: p.x - q.x, dy: p.y - q.y, dz: p.z - q.z, rho: rho)
            let jp = [u.x, u.y, u.z]
            let e = residual(m, blink: j)
            var entries: [(Int, Double)] = []
            if let columns {
                if columns.bias[i] >= 0 { entries.append((columns.bias[i], 1)) }
                for axis in 0..<d where columns.offset[3 * i + axis] >= 0 { entries.append((columns.offset[3 * i + axis], -jp[axis])) }
            }
            var r = Array(jp[0..<d])
            r.append(contentsOf: Array(repeating: 0, count: local.count))
            for (c, v) in entries {
                if let k = local.firstIndex(of: c) { r[d + k] += v } else {
                    local.append(c)
                    for k in rows.indices { rows[k].r.append(0) }
                    r.append(v)
                }
            }
            rows.append((r, e, robustWeight(e / sigma[i]) / (sigma[i] * sigma[i])))
        }
        let size = d + local.count
        var a = [Double](repeating: 0, count: size * size), g = [Double](repeating: 0, count: size)
        var mr = [Double](repeating: 0, count: size), sw = 0.0, me = 0.0
        for row in rows where row.w > 0 {
            sw += row.w
            me += row.w * row.e
            for s in 0..<size {
                mr[s] += row.w * row.r[s]
                g[s] += row.w * row.r[s] * row.e
                for t in 0..<size { a[s * size + t] += row.w * row.r[s] * row.r[t] }
            }
        }
        if sw > 0 {
            for s in 0..<size {
                g[s] -= mr[s] * me / sw
                for t in 0..<size { a[s * size + t] -= mr[s] * mr[t] / sw }
            }
        }
        return (a, g, sw, mr, me, local)
    }

    /// A_pp⁻¹ of a blink system (3×3 layout for `SmallDenseSolve`).
    private func positionInverse(_ a: [Double], size: Int) -> [Double]? {
        var hpp = [Double](repeating: 0, count: 9)
        for r in 0..<dimensions { for c in 0..<dimensions { hpp[3 * r + c] = a[r * size + c] } }
        for r in 0..<dimensions { hpp[3 * r + r] += 1e-9 }
        return SmallDenseSolve.inverse(hpp, order: dimensions)
    }

    /// Moves blink j's position and offset for the global step `delta` (Δp = A_pp⁻¹(g_p − A_pθ Δθ),
    /// Δτ = (Σwe − Σw jₚ·Δp − Σw j_θ·Δθ)/Σw); returns the largest position change.
    @discardableResult
    private mutating func blinkStep(_ j: Int, delta: [Double], columns: Columns?) -> Double {
        let (a, g, sw, mr, me, local) = blinkSystem(j, columns: columns)
        let d = dimensions, size = d + local.count
        guard sw > 0, let inverse = positionInverse(a, size: size) else { return 0 }
        var rhs = [Double](repeating: 0, count: 3)
        for r in 0..<d {
            rhs[r] = g[r]
            for (k, c) in local.enumerated() { rhs[r] -= a[r * size + d + k] * delta[c] }
        }
        var largest = 0.0, dtau = me
        for r in 0..<d {
            var step = 0.0
            for c in 0..<d { step += inverse[3 * r + c] * rhs[c] }
            positions[3 * j + r] += step
            dtau -= mr[r] * step
            largest = max(largest, abs(step))
        }
        for (k, c) in local.enumerated() { dtau -= mr[d + k] * delta[c] }
        offsets[j] += dtau / sw
        return largest
    }

    // MARK: steps

    /// The reduced normal equations: S (P×P, column-major = row-major, symmetric), right-hand side, columns.
    func reducedSystem() -> (s: [Double], rhs: [Double], columns: Columns) {
        let r = reducedSystem(blockOf: [], blockCount: 0)
        return (r.s, r.rhs, r.columns)
    }

    /// The same, with each time block's share of the right-hand side (the reduced score Σⱼ∈b of
    /// g_θⱼ − A_θpⱼ A_pⱼpⱼ⁻¹ g_pⱼ, τⱼ centred out) and of S (the block's reduced information, priors
    /// not included) when `blockOf` gives every blink's block (`surveyTest`).
    func reducedSystem(blockOf: [Int], blockCount: Int)
        -> (s: [Double], rhs: [Double], columns: Columns, blockRHS: [[Double]], blockS: [[Double]]) {
        let columns = Columns(parameters, dimensions: dimensions)
        let count = columns.list.count, d = dimensions
        var s = [Double](repeating: 0, count: count * count), rhs = [Double](repeating: 0, count: count)
        var blockRHS = [[Double]](repeating: [Double](repeating: 0, count: count), count: blockCount)
        var blockS = [[Double]](repeating: [Double](repeating: 0, count: count * count), count: blockCount)
        for j in 0..<data.blinkCount where isUsable(j) {
            let (a, g, sw, _, _, local) = blinkSystem(j, columns: columns)
            let size = d + local.count
            guard sw > 0, !local.isEmpty, let inverse = positionInverse(a, size: size) else { continue }
            // X = A_pp⁻¹ A_pθ (D × L), then S += A_θθ − A_θp X, rhs += g_θ − A_θp A_pp⁻¹ g_p.
            var x = [Double](repeating: 0, count: 3 * local.count), y = [Double](repeating: 0, count: 3)
            for r in 0..<d {
                for c in 0..<d { y[r] += inverse[3 * r + c] * g[c] }
                for k in local.indices { for c in 0..<d { x[3 * k + r] += inverse[3 * r + c] * a[c * size + d + k] } }
            }
            for (ka, ca) in local.enumerated() {
                var dot = 0.0
                for r in 0..<d { dot += a[(d + ka) * size + r] * y[r] }
                rhs[ca] += g[d + ka] - dot
                if !blockOf.isEmpty { blockRHS[blockOf[j]][ca] += g[d + ka] - dot }
                for (kb, cb) in local.enumerated() {
                    var sum = 0.0
                    for r in 0..<d { sum += a[(d + ka) * size + r] * x[3 * kb + r] }
                    s[cb * count + ca] += a[(d + ka) * size + d + kb] - sum
                    if !blockOf.isEmpty { blockS[blockOf[j]][cb * count + ca] += a[(d + ka) * size + d + kb] - sum }
                }
            }
        }
        parameters.addPriors(columns: columns, s: &s, rhs: &rhs)
        return (s, rhs, columns, blockRHS, blockS)
    }

    /// One Gauss–Newton step; returns the largest change of a global parameter and the RMS change of
    /// the blinks' positions, metres (the largest would wait for the one blink whose arrival sits at
    /// Tukey's threshold, its weight switching on and off: on the hall's simulation a few blinks keep
    /// moving by 1–2 mm after the biases have settled to 10⁻⁵ m).
    /// - Throws: `E4002` when LAPACK fails on the reduced system.
    mutating func step() throws(LocusError) -> (parameters: Double, positions: Double) {
        iterations += 1
        if iterations > configuration.huberIterations { useTukey = true }
        let (s, rhs, columns) = reducedSystem()
        let delta = try SelfCalibrationParameters.step(s: s, rhs: rhs, rankThreshold: configuration.rankThreshold)
        var squares = 0.0, moved = 0
        for j in 0..<data.blinkCount where isUsable(j) {
            let change = blinkStep(j, delta: delta, columns: columns)
            squares += change * change
            moved += 1
        }
        let largest = parameters.apply(delta, columns: columns)
        updateScales()
        return (largest, moved > 0 ? (squares / Double(moved)).squareRoot() : 0)
    }

    /// Steps until the parameters move by less than `convergenceMeters` and the positions by less
    /// than ten times that (RMS; after the Huber steps), at most `limit`; `lastMove` keeps the last
    /// step's changes.
    mutating func solve(limit: Int) throws(LocusError) {
        for _ in 0..<limit {
            let moved = try step()
            lastMove = moved
            if useTukey && moved.parameters < configuration.convergenceMeters && moved.positions < 10 * configuration.convergenceMeters { break }
        }
    }

    /// Every locator's scale set to their median (a fit restarted once its model is right: a
    /// scale a wrong model shrank is not carried on).
    mutating func resetScales() {
        let sorted = sigma.sorted()
        guard !sorted.isEmpty else { return }
        sigma = Array(repeating: sorted[sorted.count / 2], count: sigma.count)
    }

    /// σᵢ = 1.4826·MAD of locator i's studentised arrival residuals eₘ/√(1 − hₘ) (at least
    /// `minimumScaleMeters`), hₘ = wₘ(1/Σw + j̃ₘᵀA_pp⁻¹j̃ₘ), j̃ₘ = jₘ − Σw j/Σw: the arrival's leverage on
    /// its blink's offset and position.
    mutating func updateScales() {
        var byLocator = [[Double]](repeating: [], count: anchors.count)
        let d = dimensions
        for j in 0..<data.blinkCount where isUsable(j) {
            let (a, _, sw, mr, _, _) = blinkSystem(j, columns: nil)
            guard sw > 0 else { continue }
            let inverse = positionInverse(a, size: d)
            let p = Point3(x: positions[3 * j], y: positions[3 * j + 1], z: positions[3 * j + 2])
            for m in data.blinkStarts[j]..<data.blinkStarts[j + 1] {
                let i = data.slots[m], q = anchor(i)
                let rho = max(1e-6, RangeModel.predicted(dx: p.x - q.x, dy: p.y - q.y, dz: p.z - q.z))
                let u = RangeModel.unit(dx: p.x - q.x, dy: p.y - q.y, dz: p.z - q.z, rho: rho)
                let e = residual(m, blink: j)
                let w = robustWeight(e / sigma[i]) / (sigma[i] * sigma[i])
                let jt = [u.x - mr[0] / sw, u.y - mr[1] / sw, d == 3 ? u.z - mr[2] / sw : 0]
                var h = 1 / sw
                if let inverse { for r in 0..<d { for c in 0..<d { h += jt[r] * inverse[3 * r + c] * jt[c] } } }
                byLocator[i].append(e / max(0.05, 1 - w * h).squareRoot())
            }
        }
        for i in anchors.indices where !byLocator[i].isEmpty {
            sigma[i] = max(configuration.minimumScaleMeters, RobustStatistics.robustScale(byLocator[i]))
        }
        // No scale below half the locators' median: in a fit the model misses (a locator surveyed
        // 0.5 m off, before the check frees it) a neighbour's small scale raised its weight, which
        // pulled the blinks to it and shrank its scale further, to the 1 cm floor (seen on the hall:
        // 0.010 m on a 0.1 m locator). Inactive on a consistent fit (scales within ±15 % there).
        let heard = anchors.indices.filter { !byLocator[$0].isEmpty }.map { sigma[$0] }.sorted()
        if !heard.isEmpty {
            let floor = 0.5 * heard[heard.count / 2]
            for i in anchors.indices where !byLocator[i].isEmpty { sigma[i] = max(sigma[i], floor) }
        }
    }
}
