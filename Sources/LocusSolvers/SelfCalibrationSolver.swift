#if canImport(Glibc)
import Glibc
#endif
import LocusCore
import LocusNumerics

/// The bundle adjustment behind `SelfCalibration`: every epoch's tag position and the locators'
/// parameters fitted jointly to the ranges, by Gauss–Newton with robust weights.
///
/// Model, range m of epoch j to locator i at time t:
///   r = (1 + sᵢ)·‖p(t) − (aᵢ + δᵢ)‖ + bᵢ + ε,  p(t) = pⱼ + vⱼ·(t − t̄ⱼ),
/// with bᵢ the bias, sᵢ the scale error (`--slope`), δᵢ a correction of the surveyed position aᵢ
/// (survey check), pⱼ the epoch's position (x, y at the floor's tag height on a planar floor;
/// x, y, z otherwise) and vⱼ its velocity from the neighbouring epochs (the ranges of a round are a
/// few milliseconds apart). A range between locators i and k: r = ‖aᵢ+δᵢ − aₖ−δₖ‖ + bᵢ + bₖ − 2c,
/// c the tag's own share of the biases.
///
/// Each step solves the normal equations (JᵀWJ)Δ = JᵀW e with the epochs eliminated (Schur
/// complement: S = H_θθ − Σⱼ H_θpⱼ H_pⱼpⱼ⁻¹ H_pⱼθ, a few tens of global parameters), S by its
/// eigen-decomposition (LAPACKE `dsyev`): directions the data do not determine stay at zero and are
/// reported, not inverted into noise. Weights wₘ = ψ(eₘ/σᵢ)/σᵢ², Huber for the first steps then
/// Tukey's bisquare (NLOS ranges, always long, weigh 0), σᵢ = 1.4826·MAD of locator i's residuals.
struct SelfCalibrationSolver {
    /// The locators' parameters: which are free, their values, priors.
    var parameters: SelfCalibrationParameters
    /// Robust scale per locator, metres.
    private(set) var sigma: [Double]
    /// Steps taken.
    private(set) var iterations = 0
    /// The largest change of a global parameter and of a position in the last step (metres).
    private(set) var lastMove = (parameters: 0.0, positions: 0.0)

    let data: SelfCalibrationData
    let anchors: [Point3]
    /// 2 (planar: z at the tag height) or 3.
    let dimensions: Int
    let tagHeight: Double
    let configuration: SelfCalibrationConfiguration
    /// Per epoch: position (3 per epoch), velocity (3 per epoch), reference time.
    private(set) var positions: [Double]
    private var velocities: [Double]
    /// Per epoch: its mean range time, seconds.
    let epochTimes: [Double]
    private var useTukey = false

    /// A problem on `data` with every bias free (starting at `initialBias`), slopes free with
    /// `fitsSlope`, no position correction; epoch positions from a per-epoch fit.
    init(data: SelfCalibrationData, anchors: [Point3], planar: Bool, tagHeight: Double, initialBias: [Double],
         configuration: SelfCalibrationConfiguration) {
        let n = anchors.count
        self.data = data
        self.anchors = anchors
        dimensions = planar ? 2 : 3
        self.tagHeight = tagHeight
        self.configuration = configuration
        parameters = SelfCalibrationParameters(initialBias: initialBias, freeSlope: configuration.fitsSlope,
                                               freeTagDelay: !data.pairs.isEmpty)
        sigma = Array(repeating: 0.1, count: n)
        var times = [Double](repeating: 0, count: data.epochCount)
        for j in 0..<data.epochCount {
            let range = data.epochStarts[j]..<data.epochStarts[j + 1]
            times[j] = range.reduce(0) { $0 + data.timesSeconds[$1] } / Double(range.count)
        }
        epochTimes = times
        positions = Array(repeating: 0, count: 3 * data.epochCount)
        velocities = Array(repeating: 0, count: 3 * data.epochCount)
        initializePositions()
    }

    // MARK: model

    /// The locator's position with its correction.
    func anchor(_ i: Int) -> Point3 {
        parameters.position(i, surveyed: anchors[i])
    }

    /// The tag of epoch j at time t.
    func tagPosition(_ j: Int, at t: Double) -> Point3 {
        let dt = t - epochTimes[j]
        return Point3(x: positions[3 * j] + velocities[3 * j] * dt, y: positions[3 * j + 1] + velocities[3 * j + 1] * dt,
                      z: positions[3 * j + 2] + velocities[3 * j + 2] * dt)
    }

    /// Residual of range m: measured minus modelled, metres.
    func residual(_ m: Int, epoch j: Int) -> Double {
        let i = data.slots[m]
        let d = RangeModel.predicted(from: tagPosition(j, at: data.timesSeconds[m]), to: anchor(i))
        return data.rangesMeters[m] - ((1 + parameters.slope[i]) * d + parameters.bias[i])
    }

    /// Residual of locator pair k.
    func pairResidual(_ k: Int) -> Double {
        let p = data.pairs[k]
        return p.rangeMeters - (RangeModel.predicted(from: anchor(p.a), to: anchor(p.b)) + parameters.bias[p.a] + parameters.bias[p.b] - 2 * parameters.tagDelay)
    }

    /// The robust weight factor ψ(u)/u of a standardised residual u.
    private func robustWeight(_ u: Double) -> Double {
        useTukey ? RobustWeight.tukeyBisquare(u, threshold: configuration.tukeyThreshold)
            : RobustWeight.huber(u, threshold: configuration.huberThreshold)
    }

    /// Whether epoch j holds more ranges than its position has coordinates (fewer say nothing about
    /// the locators).
    func isUsable(_ j: Int) -> Bool { data.epochStarts[j + 1] - data.epochStarts[j] > dimensions }

    // MARK: start

    /// Each epoch's position by its own Gauss–Newton fit (biases as they are), starting from the
    /// previous epoch of the same tag or from the locators' centroid.
    private mutating func initializePositions() {
        let centroid = anchors.reduce(Point3(x: 0, y: 0, z: 0)) { Point3(x: $0.x + $1.x, y: $0.y + $1.y, z: $0.z + $1.z) }
        let n = Double(max(1, anchors.count))
        var start = Point3(x: centroid.x / n, y: centroid.y / n, z: dimensions == 2 ? tagHeight : tagHeight)
        for j in 0..<data.epochCount {
            if j > 0, data.epochTags[j] != data.epochTags[j - 1] { start = Point3(x: centroid.x / n, y: centroid.y / n, z: tagHeight) }
            var p = start
            guard isUsable(j) else {
                positions[3 * j] = p.x; positions[3 * j + 1] = p.y; positions[3 * j + 2] = p.z
                continue
            }
            for _ in 0..<15 {
                var a = [Double](repeating: 0, count: 9), g = [Double](repeating: 0, count: 3)
                for m in data.epochStarts[j]..<data.epochStarts[j + 1] {
                    let i = data.slots[m]
                    let q = anchor(i)
                    let diff = [p.x - q.x, p.y - q.y, p.z - q.z]
                    let d = max(1e-6, RangeModel.predicted(dx: diff[0], dy: diff[1], dz: diff[2]))
                    let e = data.rangesMeters[m] - ((1 + parameters.slope[i]) * d + parameters.bias[i])
                    for r in 0..<dimensions {
                        let jr = (1 + parameters.slope[i]) * diff[r] / d
                        g[r] += jr * e
                        for c in 0..<dimensions { a[3 * r + c] += jr * (1 + parameters.slope[i]) * diff[c] / d }
                    }
                }
                for r in 0..<dimensions { a[3 * r + r] += 1e-6 }
                guard let step = SmallDenseSolve.solve(a, g, order: dimensions) else { break }
                p = Point3(x: p.x + step[0], y: p.y + step[1], z: dimensions == 3 ? p.z + step[2] : tagHeight)
                if abs(step[0]) + abs(step[1]) + (dimensions == 3 ? abs(step[2]) : 0) < 1e-6 { break }
            }
            positions[3 * j] = p.x
            positions[3 * j + 1] = p.y
            positions[3 * j + 2] = p.z
            start = p
        }
        updateVelocities()
        updateScales()
    }

    /// vⱼ from the neighbouring epochs of the same tag (central difference; one-sided at the ends;
    /// 0 across a gap of a second or more).
    private mutating func updateVelocities() {
        for j in 0..<data.epochCount {
            let hasPrevious = j > 0 && data.epochTags[j - 1] == data.epochTags[j] && epochTimes[j] - epochTimes[j - 1] < 1
            let hasNext = j + 1 < data.epochCount && data.epochTags[j + 1] == data.epochTags[j] && epochTimes[j + 1] - epochTimes[j] < 1
            let a = hasPrevious ? j - 1 : j, b = hasNext ? j + 1 : j
            let dt = epochTimes[b] - epochTimes[a]
            for r in 0..<3 { velocities[3 * j + r] = dt > 0 ? (positions[3 * b + r] - positions[3 * a + r]) / dt : 0 }
        }
    }

    /// σᵢ = 1.4826·MAD of each locator's studentised residuals e′ₘ/√(1 − h′ₘ) (at least
    /// `minimumScaleMeters`), taken from each epoch's position re-fitted with **one weight for every
    /// locator**: p′ = p + δ, δ = (Σ w′ₘ jₘjₘᵀ)⁻¹ Σ w′ₘ jₘ eₘ, e′ₘ = eₘ − jₘ·δ, h′ₘ = w′ₘ jₘᵀ(Σ w′ jjᵀ)⁻¹jₘ,
    /// w′ₘ = ψ(eₘ/σ̄)/(eₘ/σ̄) the robust factor at σ̄, the median of the scales (no 1/σᵢ²).
    ///
    /// Why not the residuals of the weighted fit itself: there the scales feed back into the weights,
    /// and the fixed point has a sink. With D + 2 ranges an epoch (4 locators in 2-D) the D locators
    /// with the smallest scales take the weight, fit each position exactly, leave residuals of ~0 and
    /// keep their scales at the `minimumScaleMeters` floor — the leverage correction does not save it
    /// (eₘ and 1 − hₘ both go as 1/wₘ, so eₘ/√(1 − hₘ) still goes to 0). Simulated 4-locator rooms (one σ
    /// of 0.08 m for all) came out with two locators at 0.010 m on 3 seeds of 6 and biases up to 5 cm
    /// off; the Bielefeld walk m1l and the libRSF recording gave two locators 0.010 m where the truth
    /// shows 0.06–0.13 m for all four (docs/calibration.md, "noise scales with few locators"). With
    /// equal weights there is no feedback: a noisy locator's residual leaks a little into the others'
    /// (the scales shrink towards each other, never apart), which errs towards equal weights, the safe
    /// side.
    ///
    /// An epoch with one range more than the position has coordinates (4 locators in 3-D, 3 in
    /// 2-D) says nothing about which locator is noisy: its residuals lie along one direction ñ (the
    /// left null vector of √W·J), and e′ₘ/√(1 − h′ₘ) = c·σᵢ with one c for the epoch. Such epochs'
    /// residuals are pooled: a locator with fewer than `minimumScaleSamples` residuals from epochs of
    /// two or more redundant ranges takes the scale of the pool.
    mutating func updateScales() {
        var byLocator = [[Double]](repeating: [], count: anchors.count)
        var pooledByLocator = [[Double]](repeating: [], count: anchors.count)
        let dims = dimensions
        let common = sigma.sorted()[sigma.count / 2]
        var jps: [Vector3] = [], es: [Double] = [], ws: [Double] = []
        for j in 0..<data.epochCount where isUsable(j) {
            jps.removeAll(keepingCapacity: true); es.removeAll(keepingCapacity: true); ws.removeAll(keepingCapacity: true)
            var hpp = [Double](repeating: 0, count: 9), g = SIMD3<Double>()
            for m in data.epochStarts[j]..<data.epochStarts[j + 1] {
                let i = data.slots[m]
                let p = tagPosition(j, at: data.timesSeconds[m]), q = anchor(i)
                let diff = Vector3(x: p.x - q.x, y: p.y - q.y, z: p.z - q.z)
                let d = max(1e-6, RangeModel.predicted(dx: diff.x, dy: diff.y, dz: diff.z))
                let jp = (1 + parameters.slope[i]) * diff / d
                let e = data.rangesMeters[m] - ((1 + parameters.slope[i]) * d + parameters.bias[i])
                let w = robustWeight(e / common)
                jps.append(jp); es.append(e); ws.append(w)
                for r in 0..<dims {
                    g[r] += w * jp[r] * e
                    for c in 0..<dims { hpp[3 * r + c] += w * jp[r] * jp[c] }
                }
            }
            for r in 0..<dims { hpp[3 * r + r] += 1e-9 }
            let inverse = SmallDenseSolve.inverse(hpp, order: dims)
            if let inverse {
                // The equal-weight re-fit of the epoch's position: e′ = e − J·δ.
                var step = SIMD3<Double>()
                for r in 0..<dims { for c in 0..<dims { step[r] += inverse[3 * r + c] * g[c] } }
                for k in es.indices {
                    var along = 0.0
                    for r in 0..<dims { along += jps[k][r] * step[r] }
                    es[k] -= along
                }
            }
            for (k, m) in (data.epochStarts[j]..<data.epochStarts[j + 1]).enumerated() {
                var h = 0.0
                if let inverse {
                    for r in 0..<dims { for c in 0..<dims { h += jps[k][r] * inverse[3 * r + c] * jps[k][c] } }
                    h *= ws[k]
                }
                let studentised = es[k] / max(0.05, 1 - h).squareRoot()
                if jps.count >= dims + 2 {
                    byLocator[data.slots[m]].append(studentised)
                } else {
                    pooledByLocator[data.slots[m]].append(studentised)
                }
            }
        }
        let minimum = SelfCalibrationSolver.minimumScaleSamples
        let pooled = anchors.indices.filter { byLocator[$0].count < minimum }.flatMap { pooledByLocator[$0] }
        let poolScale = pooled.isEmpty ? nil : max(configuration.minimumScaleMeters, RobustStatistics.robustScale(pooled))
        for i in anchors.indices {
            if byLocator[i].count >= minimum {
                sigma[i] = max(configuration.minimumScaleMeters, RobustStatistics.robustScale(byLocator[i]))
            } else if let poolScale, !pooledByLocator[i].isEmpty {
                sigma[i] = poolScale
            } else if !byLocator[i].isEmpty {
                sigma[i] = max(configuration.minimumScaleMeters, RobustStatistics.robustScale(byLocator[i]))
            }
        }
    }

    /// The residuals from epochs with two or more redundant ranges a locator needs for a scale of
    /// its own (`updateScales`).
    static let minimumScaleSamples = 20

    // MARK: steps

    typealias Parameter = SelfCalibrationParameters.Parameter
    typealias Columns = SelfCalibrationParameters.Columns

    /// The reduced normal equations at the current values: S (P×P, column-major), its right-hand
    /// side, and the columns.
    func reducedSystem() -> (s: [Double], rhs: [Double], columns: Columns) {
        let r = reducedSystem(blockOf: [], blockCount: 0)
        return (r.s, r.rhs, r.columns)
    }

    /// The same, with each time block's share of the right-hand side (the reduced score Σⱼ∈b of
    /// g_θⱼ − H_θpⱼ H_pⱼpⱼ⁻¹ g_pⱼ) and of S (the block's reduced information, priors not included)
    /// when `blockOf` gives every epoch's block (`SurveyTest`).
    func reducedSystem(blockOf: [Int], blockCount: Int)
        -> (s: [Double], rhs: [Double], columns: Columns, blockRHS: [[Double]], blockS: [[Double]]) {
        let columns = Columns(parameters, dimensions: dimensions)
        let count = columns.list.count
        var s = [Double](repeating: 0, count: count * count), rhs = [Double](repeating: 0, count: count)
        var blockRHS = [[Double]](repeating: [Double](repeating: 0, count: count), count: blockCount)
        var blockS = [[Double]](repeating: [Double](repeating: 0, count: count * count), count: blockCount)
        let dims = dimensions
        // Per epoch: H_pp (D×D), g_p, and H_pθ as (column, D-vector) entries.
        var hpp = [Double](repeating: 0, count: 9), gp = [Double](repeating: 0, count: 3)
        var entryColumns: [Int] = [], entryValues: [Double] = []
        for j in 0..<data.epochCount where isUsable(j) {
            for k in 0..<9 { hpp[k] = 0 }
            for k in 0..<3 { gp[k] = 0 }
            entryColumns.removeAll(keepingCapacity: true)
            entryValues.removeAll(keepingCapacity: true)
            for m in data.epochStarts[j]..<data.epochStarts[j + 1] {
                let (jp, jt, e, w) = linearised(m, epoch: j, columns: columns)
                guard w > 0 else { continue }
                for r in 0..<dims {
                    gp[r] += w * jp[r] * e
                    for c in 0..<dims { hpp[3 * r + c] += w * jp[r] * jp[c] }
                }
                for a in 0..<jt.count {
                    let ca = jt.column(a), va = jt.value(a)
                    rhs[ca] += w * va * e
                    if !blockOf.isEmpty { blockRHS[blockOf[j]][ca] += w * va * e }
                    for b in 0..<jt.count { s[jt.column(b) * count + ca] += w * va * jt.value(b) }
                    if !blockOf.isEmpty { for b in 0..<jt.count { blockS[blockOf[j]][jt.column(b) * count + ca] += w * va * jt.value(b) } }
                    // H_pθ column ca += w·jp·va
                    if let k = entryColumns.firstIndex(of: ca) {
                        for r in 0..<dims { entryValues[3 * k + r] += w * jp[r] * va }
                    } else {
                        entryColumns.append(ca)
                        for r in 0..<3 { entryValues.append(r < dims ? w * jp[r] * va : 0) }
                    }
                }
            }
            guard !entryColumns.isEmpty, let inverse = SmallDenseSolve.inverse(hpp, order: dims) else { continue }
            // S −= H_θp H_pp⁻¹ H_pθ ; rhs −= H_θp H_pp⁻¹ g_p.
            var x = [Double](repeating: 0, count: 3 * entryColumns.count)  // H_pp⁻¹ H_pθ, per entry
            for k in entryColumns.indices {
                for r in 0..<dims {
                    var sum = 0.0
                    for c in 0..<dims { sum += inverse[3 * r + c] * entryValues[3 * k + c] }
                    x[3 * k + r] = sum
                }
            }
            for (ka, ca) in entryColumns.enumerated() {
                var dot = 0.0
                for r in 0..<dims { dot += x[3 * ka + r] * gp[r] }
                rhs[ca] -= dot
                if !blockOf.isEmpty { blockRHS[blockOf[j]][ca] -= dot }
                for (kb, cb) in entryColumns.enumerated() {
                    var sum = 0.0
                    for r in 0..<dims { sum += entryValues[3 * kb + r] * x[3 * ka + r] }
                    s[cb * count + ca] -= sum
                    if !blockOf.isEmpty { blockS[blockOf[j]][cb * count + ca] -= sum }
                }
            }
        }
        for k in data.pairs.indices { addPair(k, columns: columns, s: &s, rhs: &rhs) }
        parameters.addPriors(columns: columns, s: &s, rhs: &rhs)
        return (s, rhs, columns, blockRHS, blockS)
    }

    /// The nonzero entries of one row of ∂model/∂θ: (column, value), at most 5 (bias, slope, 3 offsets).
    struct SparseRow {
        var columns: (Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0)
        var values: (Double, Double, Double, Double, Double) = (0, 0, 0, 0, 0)
        var count = 0

        mutating func append(_ column: Int, _ value: Double) {
            switch count {
            case 0: columns.0 = column; values.0 = value
            case 1: columns.1 = column; values.1 = value
            case 2: columns.2 = column; values.2 = value
            case 3: columns.3 = column; values.3 = value
            default: columns.4 = column; values.4 = value
            }
            count += 1
        }

        func column(_ k: Int) -> Int {
            switch k { case 0: columns.0; case 1: columns.1; case 2: columns.2; case 3: columns.3; default: columns.4 }
        }

        func value(_ k: Int) -> Double {
            switch k { case 0: values.0; case 1: values.1; case 2: values.2; case 3: values.3; default: values.4 }
        }
    }

    /// Range m linearised: ∂model/∂p (D values), ∂model/∂θ for the free parameters, the residual,
    /// and its weight.
    private func linearised(_ m: Int, epoch j: Int, columns: Columns) -> (jp: Vector3, jt: SparseRow, e: Double, w: Double) {
        let i = data.slots[m]
        let p = tagPosition(j, at: data.timesSeconds[m]), q = anchor(i)
        let diff = Vector3(x: p.x - q.x, y: p.y - q.y, z: p.z - q.z)
        let d = max(1e-6, RangeModel.predicted(dx: diff.x, dy: diff.y, dz: diff.z))
        let h = RangeModel.unit(dx: diff.x, dy: diff.y, dz: diff.z, rho: d)
        let u = Vector3(x: h.x, y: h.y, z: h.z)
        let e = data.rangesMeters[m] - ((1 + parameters.slope[i]) * d + parameters.bias[i])
        let w = robustWeight(e / sigma[i]) / (sigma[i] * sigma[i])
        let jp = (1 + parameters.slope[i]) * u
        var jt = SparseRow()
        if columns.bias[i] >= 0 { jt.append(columns.bias[i], 1) }
        if columns.slope[i] >= 0 { jt.append(columns.slope[i], d) }
        for axis in 0..<dimensions where columns.offset[3 * i + axis] >= 0 { jt.append(columns.offset[3 * i + axis], -jp[axis]) }
        return (jp, jt, e, w)
    }

    /// A locator pair's row of the normal equations (global parameters only).
    private func addPair(_ k: Int, columns: Columns, s: inout [Double], rhs: inout [Double]) {
        let pair = data.pairs[k]
        let pa = anchor(pair.a), pb = anchor(pair.b)
        let diff = Vector3(x: pa.x - pb.x, y: pa.y - pb.y, z: pa.z - pb.z)
        let d = max(1e-6, RangeModel.predicted(dx: diff.x, dy: diff.y, dz: diff.z))
        let h = RangeModel.unit(dx: diff.x, dy: diff.y, dz: diff.z, rho: d)
        let u = Vector3(x: h.x, y: h.y, z: h.z)
        let e = pairResidual(k)
        let scale = max(sigma[pair.a], sigma[pair.b])
        let w = robustWeight(e / scale) / (scale * scale)
        var jt: [(Int, Double)] = []
        if columns.bias[pair.a] >= 0 { jt.append((columns.bias[pair.a], 1)) }
        if columns.bias[pair.b] >= 0 { jt.append((columns.bias[pair.b], 1)) }
        if columns.tagDelay >= 0 { jt.append((columns.tagDelay, -2)) }
        for axis in 0..<dimensions {
            if columns.offset[3 * pair.a + axis] >= 0 { jt.append((columns.offset[3 * pair.a + axis], u[axis])) }
            if columns.offset[3 * pair.b + axis] >= 0 { jt.append((columns.offset[3 * pair.b + axis], -u[axis])) }
        }
        let count = columns.list.count
        for (ca, va) in jt {
            rhs[ca] += w * va * e
            for (cb, vb) in jt { s[cb * count + ca] += w * va * vb }
        }
    }

    /// One Gauss–Newton step; returns the largest change of a global parameter (metres, or per
    /// metre for slopes) and of a position.
    /// - Throws: `E4002` when LAPACK fails on the reduced system.
    mutating func step() throws(LocusError) -> (parameters: Double, positions: Double) {
        iterations += 1
        if iterations > configuration.huberIterations { useTukey = true }
        let (s, rhs, columns) = reducedSystem()
        let delta = try SelfCalibrationParameters.step(s: s, rhs: rhs, rankThreshold: configuration.rankThreshold)
        // Back-substitution: Δpⱼ = H_pp⁻¹ (g_p − H_pθ Δθ), with the linearisation of this step.
        var largestPosition = 0.0
        var newPositions = positions
        for j in 0..<data.epochCount where isUsable(j) {
            var hpp = [Double](repeating: 0, count: 9), gp = [Double](repeating: 0, count: 3)
            for m in data.epochStarts[j]..<data.epochStarts[j + 1] {
                let (jp, jt, e, w) = linearised(m, epoch: j, columns: columns)
                guard w > 0 else { continue }
                var predicted = 0.0
                for a in 0..<jt.count { predicted += jt.value(a) * delta[jt.column(a)] }
                for r in 0..<dimensions {
                    gp[r] += w * jp[r] * (e - predicted)
                    for c in 0..<dimensions { hpp[3 * r + c] += w * jp[r] * jp[c] }
                }
            }
            for r in 0..<dimensions { hpp[3 * r + r] += 1e-9 }
            guard let stepP = SmallDenseSolve.solve(hpp, gp, order: dimensions) else { continue }
            for r in 0..<dimensions {
                newPositions[3 * j + r] += stepP[r]
                largestPosition = max(largestPosition, abs(stepP[r]))
            }
        }
        positions = newPositions
        let largest = parameters.apply(delta, columns: columns)
        updateVelocities()
        updateScales()
        return (largest, largestPosition)
    }

    /// Steps until the parameters move by less than `convergenceMeters` (after the Huber steps),
    /// at most `limit` steps; `lastMove` keeps the last step's changes.
    mutating func solve(limit: Int) throws(LocusError) {
        for _ in 0..<limit {
            let moved = try step()
            lastMove = moved
            if useTukey && moved.parameters < configuration.convergenceMeters && moved.positions < 10 * configuration.convergenceMeters { break }
        }
    }
}
