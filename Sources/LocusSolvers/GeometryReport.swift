import LocusCore
import LocusNumerics

/// Settings of a geometry report (`locus geometry`): grid, range model and thresholds.
public struct GeometryReportOptions: Sendable, Equatable {
    /// Which of the two numeric paths computes the DOP map (they agree to ~1e-12).
    public enum Path: Sendable, Equatable {
        /// Per cell, the C kernel `locus_tril_dop` over the in-range locators (the reference).
        case kernel
        /// Per block of cells, one `cblas_dgemm` forming all normal matrices, then a closed-form
        /// 2×2/3×3 inverse per cell (see `GeometryReport+Batched.swift`). The default: measured
        /// 1.3–1.7× faster than the kernel path at 8 locators, level or faster at 32
        /// (SolverBench `geometry_map_*`).
        case batched
    }

    /// What the locators measure: the DOP map is that measurement's.
    public enum Measurement: String, Sendable, Equatable {
        /// Two-way ranges (TWR): unit line-of-sight rows, Q = (HᵀH)⁻¹ (`GeometryQuality`).
        case range
        /// Uplink range differences (TDoA): every locator in range hears the tag's blink and each
        /// arrival is differenced against the nearest locator's; Q from `DifferenceGeometry`
        /// (`GeometryReport+Difference.swift`). Position σ ≈ HDOP · σ of one arrival.
        case tdoa
    }

    /// Requested cell size a, metres; the floor is split into ⌈W/a⌉ × ⌈H/a⌉ equal cells.
    public var gridMeters: Double
    /// Largest 3-D distance ‖p − pᵢ‖ (tag at its carrying height) at which a locator is in range, metres.
    public var maximumRangeMeters: Double
    /// The largest grid accepted (cells), a guard against `--grid 0.001` on a stadium.
    public var maximumCells: Int
    /// Coverage threshold: a cell is covered when HDOP ≤ this and ≥ `locatorsNeeded` locators are in
    /// range (SPEC §5: 3 for planar ranges).
    public var coverageHDOP: Double
    /// Cells above this HDOP are reported as poor geometry.
    public var poorHDOP: Double
    /// Mode rule, singularity threshold and largest DOP accepted (shared with the solver).
    public var trilateration: TrilaterationConfiguration
    /// The numeric path of the DOP map (ranges only: differences have one path; `locus geometry --method`).
    public var path: Path
    /// Ranges (default) or uplink differences.
    public var measurement: Measurement

    /// Locators a cell needs in range to count as positioned: unknowns + 1 observations, the
    /// redundancy the solver asks for. Ranges: 3 planar, 4 spatial (p + 1 ranges for p unknowns).
    /// Differences: 4 planar, 5 spatial — the m + 1 arrivals of a blink carry one more unknown, the
    /// emission time (the reference's offset β of `DifferenceGeometry`), so p + 2 arrivals.
    func locatorsNeeded(spatial: Bool) -> Int {
        switch measurement {
        case .range: spatial ? 4 : 3
        case .tdoa: spatial ? 5 : 4
        }
    }

    /// Memberwise initialiser; every argument defaults to `standard`'s value.
    public init(gridMeters: Double = 0.5, maximumRangeMeters: Double = 30, maximumCells: Int = 1_000_000,
                coverageHDOP: Double = 2, poorHDOP: Double = 5,
                trilateration: TrilaterationConfiguration = .standard, path: Path = .batched,
                measurement: Measurement = .range) {
        self.gridMeters = gridMeters
        self.maximumRangeMeters = maximumRangeMeters
        self.maximumCells = maximumCells
        self.coverageHDOP = coverageHDOP
        self.poorHDOP = poorHDOP
        self.trilateration = trilateration
        self.path = path
        self.measurement = measurement
    }

    /// 0.5 m cells, 30 m range, at most 1,000,000 cells, covered at HDOP ≤ 2, poor above 5, batched path, ranges.
    public static let standard = GeometryReportOptions()
}

/// The cell layout of a report: `columns × rows` equal cells tiling the floor rectangle, row 0 at
/// the bottom (smallest y), index = row · columns + column.
package struct GeometryGrid: Sendable, Equatable {
    /// x of the floor's lower-left corner, metres.
    var originX: Double
    /// y of the floor's lower-left corner, metres.
    var originY: Double
    /// Number of cells along x.
    var columns: Int
    /// Number of cells along y.
    var rows: Int
    /// Cell size along x, Δx = W / columns, metres.
    var cellWidthMeters: Double
    /// Cell size along y, Δy = H / rows, metres.
    var cellHeightMeters: Double

    /// The layout for a floor of width W and height H at requested cell size a:
    /// columns = max(1, ⌈W/a − 10⁻⁹⌉), rows likewise, so cells are at most a wide.
    /// - Throws: E3001 when the floor has no extent (W or H not > 0), E1003 when a is not > 0 or
    ///   the grid would exceed `maximumCells`.
    package init(floor: Floor, gridMeters a: Double, maximumCells: Int) throws(LocusError) {
        guard floor.widthMeters > 0, floor.heightMeters > 0, floor.widthMeters.isFinite, floor.heightMeters.isFinite else {
            throw LocusError(.noFloorMap, "floor '\(floor.id)' has no extent (widthM and heightM must be > 0): nothing to map")
        }
        guard a > 0, a.isFinite else { throw LocusError(.invalidArgument, "grid cell size must be > 0 m, not \(a)") }
        let c = max(1.0, (floor.widthMeters / a - 1e-9).rounded(.up))
        let r = max(1.0, (floor.heightMeters / a - 1e-9).rounded(.up))
        guard c * r <= Double(maximumCells) else {
            throw LocusError(.invalidArgument, "a \(a) m grid on a \(floor.widthMeters) × \(floor.heightMeters) m floor has "
                             + "\(Int(c)) × \(Int(r)) cells, more than the \(maximumCells) allowed: use a coarser grid")
        }
        originX = floor.originX
        originY = floor.originY
        columns = Int(c)
        rows = Int(r)
        cellWidthMeters = floor.widthMeters / c
        cellHeightMeters = floor.heightMeters / r
    }

    /// Number of cells, columns · rows.
    package var count: Int { columns * rows }

    /// Centre of cell (column, row): (x₀ + (i + ½)·Δx, y₀ + (j + ½)·Δy).
    func centre(column: Int, row: Int) -> Point2 {
        Point2(x: originX + (Double(column) + 0.5) * cellWidthMeters, y: originY + (Double(row) + 0.5) * cellHeightMeters)
    }

    /// Centre of the cell with this index.
    func centre(index: Int) -> Point2 { centre(column: index % columns, row: index / columns) }

    /// Every cell centre in index order. Complexity O(cells).
    var centres: [Point2] {
        var out: [Point2] = []
        out.reserveCapacity(count)
        for j in 0..<rows { for i in 0..<columns { out.append(centre(column: i, row: j)) } }
        return out
    }
}

/// One grid cell's geometry.
package struct GeometryCell: Sendable, Equatable {
    /// Locators within the maximum range of the cell centre (tag at carrying height).
    var locatorsInRange: Int
    /// HDOP √(Q₁₁ + Q₂₂) over the in-range locators; nil when fewer than p in range or degenerate.
    package var hdop: Double?
    /// VDOP √Q₃₃ (spatial floors only).
    var vdop: Double?

    /// Memberwise initialiser.
    init(locatorsInRange: Int, hdop: Double?, vdop: Double?) {
        self.locatorsInRange = locatorsInRange
        self.hdop = hdop
        self.vdop = vdop
    }
}

/// Summary numbers of a DOP map.
public struct GeometryStatistics: Sendable, Equatable {
    /// Number of cells.
    public var cells: Int
    /// Cells with an HDOP (enough locators in range, geometry not degenerate).
    public var solvableCells: Int
    /// Cells with HDOP ≤ the coverage threshold and ≥ `options.locatorsNeeded` locators in range
    /// (ranges: 3 planar, 4 spatial; differences: 4, 5).
    public var coveredCells: Int
    /// Cells with fewer locators in range than the mode needs (`options.locatorsNeeded`).
    public var outOfRangeCells: Int
    /// Cells with HDOP above `poorHDOP`, or enough locators but a degenerate geometry.
    public var poorCells: Int
    /// Median HDOP over solvable cells (`Quantile.linear`: interpolated between order statistics at
    /// rank q·(N − 1)); nil when no cell is solvable.
    public var hdopP50: Double?
    /// 95th-percentile HDOP over solvable cells (as `hdopP50`); nil when none is solvable.
    public var hdopP95: Double?
    /// Largest HDOP over solvable cells; nil when none is solvable.
    public var hdopMax: Double?
    /// Largest VDOP (spatial floors).
    public var vdopMax: Double?

    /// coveredCells / cells (0 for an empty grid).
    public var coverage: Double { cells > 0 ? Double(coveredCells) / Double(cells) : 0 }

    /// Statistics of `cells` with the thresholds of `options` and p unknowns.
    /// Complexity O(N log N) for the percentiles.
    init(cells: [GeometryCell], unknowns: Int, options: GeometryReportOptions) {
        self.cells = cells.count
        let needed = options.locatorsNeeded(spatial: unknowns == 3)
        var values: [Double] = []
        values.reserveCapacity(cells.count)
        var covered = 0, outOfRange = 0, poor = 0
        var vMax: Double? = nil
        for c in cells {
            if c.locatorsInRange < needed { outOfRange += 1 }
            if let h = c.hdop {
                values.append(h)
                if h <= options.coverageHDOP && c.locatorsInRange >= needed { covered += 1 }
                if h > options.poorHDOP { poor += 1 }
            } else if c.locatorsInRange >= needed {
                poor += 1
            }
            if let v = c.vdop { vMax = max(vMax ?? v, v) }
        }
        values.sort()
        solvableCells = values.count
        coveredCells = covered
        outOfRangeCells = outOfRange
        poorCells = poor
        hdopP50 = Quantile.linear(sorted: values, 0.50)
        hdopP95 = Quantile.linear(sorted: values, 0.95)
        hdopMax = values.last
        vdopMax = vMax
    }
}

/// A geometry finding: a stable key (e.g. `geometry.locatorsCollinear`) and a message with numbers.
public struct GeometryWarning: Sendable, Equatable, CustomStringConvertible {
    /// Stable, machine-readable key, `geometry.<name>`.
    public var key: String
    /// What is wrong, where, and by how much.
    public var message: String

    /// Memberwise initialiser.
    init(key: String, message: String) {
        self.key = key
        self.message = message
    }

    /// `key: message`, the form `--json` lists.
    public var description: String { "\(key): \(message)" }
}

/// The geometry of a floor's locator layout over a grid: DOP map, coverage, statistics and warnings.
///
/// Per cell centre c (tag at the floor's carrying height h): the locators in range are those with
/// ‖(cₓ, c_y, h) − pᵢ‖ ≤ `maximumRangeMeters`; over them H has unit line-of-sight rows
/// (planar (dx, dy)/r, spatial (dx, dy, dz)/r with r the 3-D distance), Q = (HᵀH)⁻¹,
/// HDOP = √(Q₁₁ + Q₂₂), VDOP = √Q₃₃. The mode is the floor's, resolved once as the engine does
/// (`TrilaterationConfiguration.resolvedMode(for:)`): a planar floor needs 3 locators in range, a
/// spatial one 4 (the solver needs p + 1 ranges). HDOP is unitless: position σ ≈ HDOP · range σ.
/// With `options.measurement == .tdoa` the cells hold the DOP of uplink range differences instead
/// (`GeometryReport+Difference.swift`: 4 locators heard planar, 5 spatial; σ one arrival's error).
public struct GeometryReport: Sendable {
    /// The floor judged.
    public internal(set) var floor: Floor
    /// The locator positions judged (the floor's, or with a proposed extra one).
    public internal(set) var locators: [Point3]
    /// The floor's resolved mode (`.planar` or `.spatial`).
    public internal(set) var mode: TrilaterationMode
    /// The cell layout.
    var grid: GeometryGrid
    /// One entry per cell, in `grid` index order.
    var cells: [GeometryCell]
    /// Summary numbers.
    public internal(set) var statistics: GeometryStatistics
    /// Findings in a fixed order: layout, out-of-floor locators, out-of-range area, poor area, zones.
    public internal(set) var warnings: [GeometryWarning]
    /// The settings used.
    public internal(set) var options: GeometryReportOptions

    /// Computes the report of `floor` (all of its locators).
    /// Complexity O(cells · n) plus O(cells log cells) for the percentiles.
    /// - Throws: E3001 floor without extent, E1003 bad grid or too many cells.
    public init(floor: Floor, options: GeometryReportOptions = .standard) throws(LocusError) {
        try self.init(floor: floor, locators: floor.locators.map(\.position), options: options)
    }

    /// Computes the report of `floor` with the locator positions `locators` (e.g. with a proposed
    /// extra locator); the floor's own locators are used only for labels.
    /// - Throws: E3001 floor without extent, E1003 bad grid or too many cells.
    init(floor: Floor, locators: [Point3], options: GeometryReportOptions = .standard) throws(LocusError) {
        guard options.maximumRangeMeters > 0 else {
            throw LocusError(.invalidArgument, "maximum range must be > 0 m, not \(options.maximumRangeMeters)")
        }
        let grid = try GeometryGrid(floor: floor, gridMeters: options.gridMeters, maximumCells: options.maximumCells)
        let mode = options.trilateration.resolvedMode(for: locators)
        let cells: [GeometryCell]
        if options.measurement == .tdoa {
            cells = Self.differenceCells(grid: grid, locators: locators, mode: mode, tagHeightMeters: floor.tagHeightMeters, options: options)
        } else {
            switch options.path {
            case .kernel:
                cells = Self.kernelCells(grid: grid, locators: locators, mode: mode, tagHeightMeters: floor.tagHeightMeters, options: options)
            case .batched:
                cells = Self.batchedCells(grid: grid, locators: locators, mode: mode, tagHeightMeters: floor.tagHeightMeters, options: options)
            }
        }
        self.floor = floor
        self.locators = locators
        self.mode = mode
        self.grid = grid
        self.cells = cells
        self.options = options
        let unknowns = mode.unknowns ?? 2
        self.statistics = GeometryStatistics(cells: cells, unknowns: unknowns, options: options)
        self.warnings = []
        self.warnings = Self.warnings(floor: floor, locators: locators, mode: mode, grid: grid, cells: cells,
                                      statistics: statistics, options: options)
    }

    /// Locators a cell needs in range: ranges 3 planar, 4 spatial; differences 4, 5.
    public var locatorsNeeded: Int { options.locatorsNeeded(spatial: mode == .spatial) }

    /// The kernel path: per cell, gather the in-range locators into one scratch buffer and call
    /// `locus_tril_dop` on them. One allocation for the scratch, one for the result.
    package static func kernelCells(grid: GeometryGrid, locators: [Point3], mode: TrilaterationMode, tagHeightMeters h: Double,
                            options: GeometryReportOptions) -> [GeometryCell] {
        let model: TrilaterationKernel.Model = mode == .spatial ? .spatial : .planar
        let needed = mode == .spatial ? 4 : 3
        let range2 = options.maximumRangeMeters * options.maximumRangeMeters
        let rcond = options.trilateration.minimumReciprocalCondition, maxDOP = options.trilateration.maximumDOP
        var cells: [GeometryCell] = []
        cells.reserveCapacity(grid.count)
        var scratch = [Point3](repeating: Point3(x: 0, y: 0, z: 0), count: max(1, locators.count))
        scratch.withUnsafeMutableBufferPointer { sp in
            for j in 0..<grid.rows {
                for i in 0..<grid.columns {
                    let c = grid.centre(column: i, row: j)
                    var k = 0
                    for p in locators {
                        let dx = c.x - p.x, dy = c.y - p.y, dz = h - p.z
                        if dx * dx + dy * dy + dz * dz <= range2 { sp[k] = p; k += 1 }
                    }
                    guard k >= needed else { cells.append(GeometryCell(locatorsInRange: k, hdop: nil, vdop: nil)); continue }
                    do {
                        let d = try TrilaterationKernel.dop(
                            locators: UnsafeBufferPointer(rebasing: sp[0..<k]).span, model: model, tagHeightMeters: h,
                            at: Point3(x: c.x, y: c.y, z: h), minimumReciprocalCondition: rcond, maximumDOP: maxDOP)
                        cells.append(GeometryCell(locatorsInRange: k, hdop: d.hdop, vdop: model == .spatial ? d.vdop : nil))
                    } catch {
                        cells.append(GeometryCell(locatorsInRange: k, hdop: nil, vdop: nil))
                    }
                }
            }
        }
        return cells
    }
}
