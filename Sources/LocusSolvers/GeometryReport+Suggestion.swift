import LocusCore
import LocusNumerics

/// Where one more locator would most improve a floor's worst area, and by how much.
public struct GeometrySuggestion: Sendable, Equatable {
    /// The proposed locator position (x, y on the floor, z the median height of the existing locators).
    public var position: Point3
    /// Statistics of the report grid without the proposed locator.
    public var before: GeometryStatistics
    /// Statistics of the report grid with the proposed locator.
    public var after: GeometryStatistics
    /// Candidate positions evaluated.
    public var candidates: Int
    /// Cell size of the coarse grid the search scored candidates on, metres.
    public var searchGridMeters: Double

    /// Memberwise initialiser.
    init(position: Point3, before: GeometryStatistics, after: GeometryStatistics, candidates: Int, searchGridMeters: Double) {
        self.position = position
        self.before = before
        self.after = after
        self.candidates = candidates
        self.searchGridMeters = searchGridMeters
    }

    /// True when the proposal is worth a locator: p95 HDOP drops by at least 5 % or coverage rises
    /// by at least 0.5 percentage points on the report grid (a good layout gains little).
    public var improves: Bool {
        let p0 = before.hdopP95 ?? .infinity, p1 = after.hdopP95 ?? .infinity
        return (p0.isFinite ? p1 <= 0.95 * p0 : p1.isFinite) || after.coverage >= before.coverage + 0.005
    }
}

extension GeometryReport {
    /// HDOP counted for a cell that cannot be positioned when scoring candidates ("very bad").
    static let unsolvableHDOP = 99.0
    /// Cells of the coarse search grid, at most.
    static let searchCells = 4000.0

    /// Proposes one more locator: the candidate that minimises the 95th-percentile HDOP over the
    /// floor with unsolvable cells counted as HDOP 99 (ties: higher coverage, then lower mean).
    ///
    /// Candidates: every ~1 m along the floor perimeter (max(1, P/400) m) and a coarse interior grid
    /// (max(1, √(WH/400)) m), all at the median locator height. Scoring runs on a coarse grid of at
    /// most 4,000 cells whose normal matrices N = Σ g gᵀ are formed once; a candidate adds its row
    /// to the cells in its range (N' = N + g gᵀ, O(1) each), so the search costs
    /// O(candidates · cells) instead of O(candidates · cells · n). The winner is then evaluated on
    /// the report's own grid for the before/after numbers.
    /// - Throws: E3001/E1003 as `init(floor:options:)` (not expected: the grid was valid).
    /// With differences (`options.measurement == .tdoa`) the same search scores candidates with the
    /// difference DOP (`differenceSuggestion`).
    public func suggestion() throws(LocusError) -> GeometrySuggestion {
        if options.measurement == .tdoa { return try differenceSuggestion() }
        let area = floor.widthMeters * floor.heightMeters
        var searchOptions = options
        searchOptions.gridMeters = max(options.gridMeters, (area / Self.searchCells).squareRoot())
        let search = try GeometryGrid(floor: floor, gridMeters: searchOptions.gridMeters, maximumCells: options.maximumCells)
        let h = floor.tagHeightMeters
        let spatial = mode == .spatial
        let needed = spatial ? 4 : 3
        let range2 = options.maximumRangeMeters * options.maximumRangeMeters
        let rcond = options.trilateration.minimumReciprocalCondition, maxDOP = options.trilateration.maximumDOP

        let centres = search.centres
        var base = [NormalMatrix](repeating: NormalMatrix(), count: centres.count)
        var counts = [Int](repeating: 0, count: centres.count)
        for (j, c) in centres.enumerated() {
            for p in locators {
                let dx = c.x - p.x, dy = c.y - p.y, dz = h - p.z
                if dx * dx + dy * dy + dz * dz <= range2 {
                    counts[j] += 1
                    base[j].add(dx: dx, dy: dy, dz: dz)
                }
            }
        }
        let z = locators.isEmpty ? h + 1.5 : RobustStatistics.median(locators.map(\.z))

        var values = [Double](repeating: 0, count: centres.count)
        func score(_ candidate: Point3?) -> SuggestionScore {
            var covered = 0, sum = 0.0
            for j in centres.indices {
                var n = base[j], k = counts[j]
                if let q = candidate {
                    let dx = centres[j].x - q.x, dy = centres[j].y - q.y, dz = h - q.z
                    if dx * dx + dy * dy + dz * dz <= range2 { n.add(dx: dx, dy: dy, dz: dz); k += 1 }
                }
                var v = Self.unsolvableHDOP
                if k >= needed, let d = n.dop(spatial: spatial, minimumReciprocalCondition: rcond, maximumDOP: maxDOP) {
                    v = min(d.hdop, Self.unsolvableHDOP)
                    if d.hdop <= options.coverageHDOP { covered += 1 }
                }
                values[j] = v
                sum += v
            }
            return Self.suggestionScore(&values, covered: covered, sum: sum)
        }
        return try bestSuggestion(z: z, searchGridMeters: search.cellWidthMeters, score: score)
    }

    /// A candidate's score: the 95th-percentile HDOP (unsolvable cells at `unsolvableHDOP`), the
    /// covered fraction and the mean HDOP of the search grid.
    typealias SuggestionScore = (p95: Double, coverage: Double, mean: Double)

    /// The score of a search grid's HDOP `values` (sorted here: their order is not needed after),
    /// `covered` of them within the coverage HDOP and summing to `sum`.
    static func suggestionScore(_ values: inout [Double], covered: Int, sum: Double) -> SuggestionScore {
        values.sort()
        let p95 = Quantile.linear(sorted: values, 0.95) ?? unsolvableHDOP
        let count = Double(max(1, values.count))
        return (p95, Double(covered) / count, sum / count)
    }

    /// The best of `suggestionCandidates()` at height `z` by `score` (ties to the earlier
    /// candidate), and the report's statistics before and after it: the search both measurement
    /// kinds share.
    func bestSuggestion(z: Double, searchGridMeters: Double,
                        score: (Point3) -> SuggestionScore) throws(LocusError) -> GeometrySuggestion {
        let candidates = suggestionCandidates()
        var best = Point3(x: candidates[0].x, y: candidates[0].y, z: z)
        var bestScore = score(best)
        for c in candidates.dropFirst() {
            let q = Point3(x: c.x, y: c.y, z: z)
            let s = score(q)
            if Self.better(s, than: bestScore) { best = q; bestScore = s }
        }
        let after = try GeometryReport(floor: floor, locators: locators + [best], options: options)
        return GeometrySuggestion(position: best, before: statistics, after: after.statistics,
                                  candidates: candidates.count, searchGridMeters: searchGridMeters)
    }

    /// Lower p95 first, then higher coverage, then lower mean.
    static func better(_ a: SuggestionScore, than b: SuggestionScore) -> Bool {
        if abs(a.p95 - b.p95) > 1e-9 { return a.p95 < b.p95 }
        if abs(a.coverage - b.coverage) > 1e-12 { return a.coverage > b.coverage }
        return a.mean < b.mean - 1e-12
    }

    /// Candidate (x, y) positions: every max(1, P/400) m along the floor perimeter, then a coarse
    /// interior grid of step max(1, √(WH/400)) m, in a fixed order.
    func suggestionCandidates() -> [Point2] {
        let area = floor.widthMeters * floor.heightMeters
        var candidates: [Point2] = []
        let x0 = floor.originX, y0 = floor.originY, w = floor.widthMeters, hh = floor.heightMeters
        let perimeterStep = max(1, 2 * (w + hh) / 400)
        let nx = max(1, Int((w / perimeterStep).rounded(.up))), ny = max(1, Int((hh / perimeterStep).rounded(.up)))
        for i in 0...nx {
            let x = x0 + w * Double(i) / Double(nx)
            candidates.append(Point2(x: x, y: y0))
            candidates.append(Point2(x: x, y: y0 + hh))
        }
        for j in 1..<ny {
            let y = y0 + hh * Double(j) / Double(ny)
            candidates.append(Point2(x: x0, y: y))
            candidates.append(Point2(x: x0 + w, y: y))
        }
        let interiorStep = max(1, (area / 400).squareRoot())
        let mx = max(1, Int((w / interiorStep).rounded(.down))), my = max(1, Int((hh / interiorStep).rounded(.down)))
        for j in 0..<my {
            for i in 0..<mx {
                candidates.append(Point2(x: x0 + w * (Double(i) + 0.5) / Double(mx), y: y0 + hh * (Double(j) + 0.5) / Double(my)))
            }
        }
        return candidates
    }

    /// Cells of the TDoA search grid, at most: a candidate costs one `DifferenceGeometry` DOP per
    /// cell in its range (the difference information does not update by one row per locator as
    /// N = Σ g gᵀ does), so the grid is coarser than the ranging search's 4,000.
    static let differenceSearchCells = 1000.0

    /// `suggestion()` for differences: the same candidates, objective and tie-breaks, each candidate
    /// scored on a grid of at most 1,000 cells with the uplink difference DOP of
    /// `differenceDOP` (the candidate heard like any locator, and the reference if nearest). A
    /// cell out of the candidate's range keeps its DOP without it, computed once.
    /// Complexity O(candidates · cells · n).
    func differenceSuggestion() throws(LocusError) -> GeometrySuggestion {
        let area = floor.widthMeters * floor.heightMeters
        let searchMeters = max(options.gridMeters, (area / Self.differenceSearchCells).squareRoot())
        let search = try GeometryGrid(floor: floor, gridMeters: searchMeters, maximumCells: options.maximumCells)
        let h = floor.tagHeightMeters
        let spatial = mode == .spatial
        let range2 = options.maximumRangeMeters * options.maximumRangeMeters
        let centres = search.centres.map { Point3(x: $0.x, y: $0.y, z: h) }
        var scratch = DifferenceScratch(capacity: locators.count + 1)
        let base = centres.map { Self.differenceDOP(at: $0, locators: locators, spatial: spatial, options: options, scratch: &scratch).dop?.hdop }
        let z = locators.isEmpty ? h + 1.5 : RobustStatistics.median(locators.map(\.z))

        var values = [Double](repeating: 0, count: centres.count)
        func score(_ q: Point3) -> SuggestionScore {
            var covered = 0, sum = 0.0
            for j in centres.indices {
                let c = centres[j]
                let dx = c.x - q.x, dy = c.y - q.y, dz = c.z - q.z
                let hdop = dx * dx + dy * dy + dz * dz <= range2
                    ? Self.differenceDOP(at: c, locators: locators, extra: q, spatial: spatial, options: options, scratch: &scratch).dop?.hdop
                    : base[j]
                var v = Self.unsolvableHDOP
                if let hdop {
                    v = min(hdop, Self.unsolvableHDOP)
                    if hdop <= options.coverageHDOP { covered += 1 }
                }
                values[j] = v
                sum += v
            }
            return Self.suggestionScore(&values, covered: covered, sum: sum)
        }
        return try bestSuggestion(z: z, searchGridMeters: search.cellWidthMeters, score: score)
    }
}
