import LocusCore
import LocusNumerics

/// Settings of `TruthClockAlignment.estimate(rows:tracks:configuration:)`.
struct TruthClockAlignmentConfiguration: Sendable, Equatable {
    /// Half width W of the searched shifts δ ∈ [−W, W], seconds.
    var halfWidthSeconds: Double
    /// Grid step h of the coarse search, seconds (the parabola refines within ±h).
    var gridStepSeconds: Double
    /// Clip c of the robust cost min(e², c²), metres (NLOS tails weigh at most c²).
    var clipMeters: Double
    /// At most this many rows are used: with more, every k-th usable row, k = ⌈n / maximumRows⌉.
    var maximumRows: Int
    /// Below this relative improvement (J(0) − J(δ̂)) / J(0) the cost is called flat and δ̂ = 0.
    var minimumRelativeImprovement: Double

    /// A configuration with every field given (see the fields; `standard` holds the defaults).
    init(halfWidthSeconds: Double, gridStepSeconds: Double, clipMeters: Double, maximumRows: Int,
         minimumRelativeImprovement: Double) {
        self.halfWidthSeconds = halfWidthSeconds
        self.gridStepSeconds = gridStepSeconds
        self.clipMeters = clipMeters
        self.maximumRows = maximumRows
        self.minimumRelativeImprovement = minimumRelativeImprovement
    }

    /// δ ∈ [−0.5, 0.5] s in steps of 0.01 s, c = 0.3 m, at most 200,000 rows, flat below 1e-3.
    static let standard = TruthClockAlignmentConfiguration(
        halfWidthSeconds: 0.5, gridStepSeconds: 0.01, clipMeters: 0.3, maximumRows: 200_000, minimumRelativeImprovement: 1e-3)
}

/// The clock offset δ between a truth log and a range log, from the ranges and the truth alone.
///
/// For every usable range row k (tag with truth, locator i at aᵢ, distance dₖ = the range corrected
/// for the locator's bias and scale, `Locator.correctedRange`), the residual at a trial shift δ is
///
///     eₖ(δ) = dₖ − ‖p_truth(tₖ + δ) − aᵢ‖            (metres)
///
/// with p_truth interpolated linearly in time (its z replaced by the floor's tag height where the
/// row gives one). Per locator the median of eₖ(δ) is removed (an unknown constant bias does not
/// move δ̂), and the cost is the clipped mean square
///
///     J(δ) = (1/N) Σₖ min((eₖ(δ) − medᵢ(δ))², c²)     (square metres).
///
/// δ̂ = argmin J over the grid δⱼ = j·h, |δⱼ| ≤ W, refined by the vertex of the parabola through the
/// best grid point and its two neighbours (clamped to ±h). The truth at t + δ̂ is then the truth of
/// the range time t. Only rows whose truth covers [t − W, t + W] are used, so every δ is scored on
/// the same rows. Never uses any position fix. Deterministic.
///
/// Complexity: O(G·(N + M)) for G grid points, N rows and M truth samples (a cursor per track and a
/// linear-time median selection per locator), plus one O(N log N) sort.
struct TruthClockAlignment: Sendable, Equatable {
    /// One tag's truth samples, sorted by time.
    struct Track: Sendable {
        /// Sample times, seconds, non-decreasing.
        var timeSeconds: [Double]
        /// Sample positions, metres.
        var points: [Point3]

        /// A track from samples already sorted by time; the counts must agree (programmer error otherwise).
        init(timeSeconds: [Double], points: [Point3]) {
            precondition(timeSeconds.count == points.count, "TruthClockAlignment.Track: times and points differ in count")
            self.timeSeconds = timeSeconds
            self.points = points
        }
    }

    /// One range row.
    struct Row: Sendable {
        /// Range time t, seconds (range clock).
        var timeSeconds: Double
        /// Index of the tag's track in the `tracks` argument (rows with an index out of range are not used).
        var trackIndex: Int
        /// Any id that is the same for all rows to one locator (its median is removed per id).
        var locatorIndex: Int
        /// Range corrected for the locator's bias and scale, d = (r − b)/(1 + s), metres.
        var correctedRangeMeters: Double
        /// Locator antenna position aᵢ, metres.
        var locator: Point3
        /// The tag's height to use instead of the truth's z (planar floors), metres; nil keeps the truth's z.
        var tagHeightMeters: Double?

        /// A row with every field given (see the fields).
        init(timeSeconds: Double, trackIndex: Int, locatorIndex: Int, correctedRangeMeters: Double, locator: Point3,
             tagHeightMeters: Double?) {
            self.timeSeconds = timeSeconds
            self.trackIndex = trackIndex
            self.locatorIndex = locatorIndex
            self.correctedRangeMeters = correctedRangeMeters
            self.locator = locator
            self.tagHeightMeters = tagHeightMeters
        }
    }

    /// How δ̂ was reached.
    enum Outcome: String, Sendable, Equatable {
        /// The cost has a clear minimum: δ̂ is it.
        case estimated
        /// No row had truth over [t − W, t + W]: δ̂ = 0.
        case noUsableRow
        /// The cost hardly depends on δ (e.g. a tag that never moves): δ̂ = 0.
        case flatCost
    }

    /// The estimated shift δ̂, seconds: compare a fix at t with the truth at t + δ̂.
    var shiftSeconds: Double
    /// Whether δ̂ is an estimate or the fallback 0, and why.
    var outcome: Outcome
    /// Rows the cost was computed on (after subsampling).
    var rowsUsed: Int
    /// J(0), square metres (0 without rows).
    var costAtZeroSquareMeters: Double
    /// The smallest grid cost J(δⱼ), square metres (0 without rows).
    var bestGridCostSquareMeters: Double
    /// (J(0) − min J) / J(0) (0 without rows or when J(0) = 0).
    var relativeImprovement: Double

    /// A result with every field given (`estimate` is the usual way to get one).
    init(shiftSeconds: Double, outcome: Outcome, rowsUsed: Int, costAtZeroSquareMeters: Double,
         bestGridCostSquareMeters: Double, relativeImprovement: Double) {
        self.shiftSeconds = shiftSeconds
        self.outcome = outcome
        self.rowsUsed = rowsUsed
        self.costAtZeroSquareMeters = costAtZeroSquareMeters
        self.bestGridCostSquareMeters = bestGridCostSquareMeters
        self.relativeImprovement = relativeImprovement
    }

    /// Estimates δ̂ (see the type's documentation). Never fails: without usable rows or with a flat
    /// cost it returns δ̂ = 0 and says why in `outcome`.
    static func estimate(rows: [Row], tracks: [Track], configuration: TruthClockAlignmentConfiguration = .standard)
        -> TruthClockAlignment {
        precondition(configuration.gridStepSeconds > 0 && configuration.halfWidthSeconds >= 0 && configuration.clipMeters > 0
                     && configuration.maximumRows > 0, "TruthClockAlignmentConfiguration: step, clip and row cap must be positive")
        let step = configuration.gridStepSeconds
        let m = Int((configuration.halfWidthSeconds / step).rounded(.down))
        let reach = Double(m) * step

        // Usable rows: known track whose samples cover [t − W, t + W], finite numbers.
        var usable: [Int] = []
        usable.reserveCapacity(rows.count)
        for (k, row) in rows.enumerated() {
            guard tracks.indices.contains(row.trackIndex), row.timeSeconds.isFinite, row.correctedRangeMeters.isFinite,
                  row.locator.x.isFinite, row.locator.y.isFinite, row.locator.z.isFinite,
                  row.tagHeightMeters?.isFinite ?? true else { continue }
            let times = tracks[row.trackIndex].timeSeconds
            guard let first = times.first, let last = times.last,
                  first <= row.timeSeconds - reach, last >= row.timeSeconds + reach else { continue }
            usable.append(k)
        }
        guard !usable.isEmpty else {
            return TruthClockAlignment(shiftSeconds: 0, outcome: .noUsableRow, rowsUsed: 0, costAtZeroSquareMeters: 0,
                                       bestGridCostSquareMeters: 0, relativeImprovement: 0)
        }
        // Deterministic subsampling: every k-th usable row in input order.
        let stride = (usable.count + configuration.maximumRows - 1) / configuration.maximumRows
        if stride > 1 { usable = Swift.stride(from: 0, to: usable.count, by: stride).map { usable[$0] } }
        // Walk order: by track, then time, then input order (so each track's cursor only moves forward).
        usable.sort { a, b in
            let ra = rows[a], rb = rows[b]
            if ra.trackIndex != rb.trackIndex { return ra.trackIndex < rb.trackIndex }
            if ra.timeSeconds != rb.timeSeconds { return ra.timeSeconds < rb.timeSeconds }
            return a < b
        }

        // Each row's slot in a residual buffer grouped by locator (groups in order of first appearance).
        var groupOf: [Int: Int] = [:]
        var groupCounts: [Int] = []
        var rowGroup = [Int](repeating: 0, count: usable.count)
        for (n, k) in usable.enumerated() {
            let id = rows[k].locatorIndex
            let g: Int
            if let known = groupOf[id] { g = known } else { g = groupCounts.count; groupOf[id] = g; groupCounts.append(0) }
            rowGroup[n] = g
            groupCounts[g] += 1
        }
        var groupStarts = [Int](repeating: 0, count: groupCounts.count + 1)
        for g in groupCounts.indices { groupStarts[g + 1] = groupStarts[g] + groupCounts[g] }
        var filled = groupStarts
        var slot = [Int](repeating: 0, count: usable.count)
        for n in usable.indices { slot[n] = filled[rowGroup[n]]; filled[rowGroup[n]] += 1 }

        let selected = usable.map { rows[$0] }
        var residuals = [Double](repeating: 0, count: selected.count)
        var costs = [Double](repeating: 0, count: 2 * m + 1)
        let clipSquare = configuration.clipMeters * configuration.clipMeters
        for j in -m...m {
            let delta = Double(j) * step
            fillResiduals(&residuals, rows: selected, slots: slot, tracks: tracks, shiftSeconds: delta)
            costs[j + m] = clippedCost(&residuals, groupStarts: groupStarts, clipSquareMeters: clipSquare)
        }

        var best = 0
        for i in costs.indices where costs[i] < costs[best] || (costs[i] == costs[best] && abs(i - m) < abs(best - m)) { best = i }
        let costAtZero = costs[m]
        let improvement = costAtZero > 0 ? (costAtZero - costs[best]) / costAtZero : 0
        guard improvement >= configuration.minimumRelativeImprovement else {
            return TruthClockAlignment(shiftSeconds: 0, outcome: .flatCost, rowsUsed: selected.count, costAtZeroSquareMeters: costAtZero,
                                       bestGridCostSquareMeters: costs[best], relativeImprovement: improvement)
        }
        var shift = Double(best - m) * step
        if best > 0 && best < costs.count - 1 {
            // Vertex of the parabola through (−h, J₋), (0, J₀), (h, J₊): −h·(J₊ − J₋) / (2·(J₋ − 2J₀ + J₊)).
            let below = costs[best - 1], centre = costs[best], above = costs[best + 1]
            let curvature = below - 2 * centre + above
            if curvature > 0 {
                let offset = 0.5 * step * (below - above) / curvature
                shift += min(step, max(-step, offset))
            }
        }
        return TruthClockAlignment(shiftSeconds: shift, outcome: .estimated, rowsUsed: selected.count, costAtZeroSquareMeters: costAtZero,
                                   bestGridCostSquareMeters: costs[best], relativeImprovement: improvement)
    }

    /// eₖ(δ) for every row into `residuals[slots[k]]`; rows sorted by track then time.
    private static func fillResiduals(_ residuals: inout [Double], rows: [Row], slots: [Int], tracks: [Track], shiftSeconds: Double) {
        var track = -1
        var cursor = 0
        residuals.withUnsafeMutableBufferPointer { out in
            for (k, row) in rows.enumerated() {
                if row.trackIndex != track { track = row.trackIndex; cursor = 0 }
                let times = tracks[track].timeSeconds
                let t = row.timeSeconds + shiftSeconds
                // The interval [times[cursor], times[cursor + 1]] holding t (t lies within the track's span).
                while cursor + 2 < times.count && times[cursor + 1] <= t { cursor += 1 }
                let t0 = times[cursor], t1 = times[cursor + 1]
                let p0 = tracks[track].points[cursor], p1 = tracks[track].points[cursor + 1]
                let f = t1 > t0 ? (t - t0) / (t1 - t0) : 0
                let x = p0.x + f * (p1.x - p0.x), y = p0.y + f * (p1.y - p0.y)
                let z = row.tagHeightMeters ?? (p0.z + f * (p1.z - p0.z))
                let dx = x - row.locator.x, dy = y - row.locator.y, dz = z - row.locator.z
                out[slots[k]] = row.correctedRangeMeters - RangeModel.predicted(dx: dx, dy: dy, dz: dz)
            }
        }
    }

    /// J = (1/N) Σ min((e − medᵢ)², c²) with the median taken per locator group (reorders each group).
    private static func clippedCost(_ residuals: inout [Double], groupStarts: [Int], clipSquareMeters: Double) -> Double {
        var total = 0.0
        for g in 0..<(groupStarts.count - 1) {
            let lo = groupStarts[g], hi = groupStarts[g + 1]
            guard hi > lo else { continue }
            let median = RobustStatistics.median(reordering: &residuals, in: lo..<hi)
            for e in residuals[lo..<hi] {
                let u = e - median
                total += min(u * u, clipSquareMeters)
            }
        }
        return residuals.isEmpty ? 0 : total / Double(residuals.count)
    }
}
