import LocusNumerics

/// A uniform grid over the zones' reach boxes (bounding boxes inflated by `inDist`): each cell lists
/// the zones whose reach box overlaps it, in compressed-row form (`cellStart`, `cellEntries`). Each
/// entry carries the zone's reach box and priority, so the first filter of a fix reads one
/// contiguous run of memory (the per-fix cost at many zones is dominated by cache misses).
///
/// A fix at p can only qualify for a zone whose reach box contains p, so the candidates of p's cell
/// are a superset of the zones p qualifies for. Cell side s = max(√(W·H / 2n), ½·median box side),
/// W × H the extent of all boxes, n the zone count, so a cell lists O(1) zones on average and the
/// per-fix cost does not grow with n. Cells are capped at 4 Mi (s grows instead).
struct ZoneGrid: Sendable {
    /// An axis-aligned box, metres.
    struct Box: Sendable {
        var minX: Double, minY: Double, maxX: Double, maxY: Double
    }

    /// What the detection test needs about one zone, stored in every cell the zone's reach box
    /// overlaps (48 bytes), so a fix reads one contiguous run and then only the edges of zones whose
    /// reach box holds it. The box is single precision rounded outwards: the test on it never
    /// rejects a point the exact box holds (the exact distance test follows).
    struct Entry: Sendable {
        /// Reach box: bounding box inflated by inDist.
        var reachMinX: Float, reachMinY: Float, reachMaxX: Float, reachMaxY: Float
        /// inDist², square metres.
        var reachSquaredSquareMeters: Double
        var priority: Int
        /// The zone's edges in the judge's flat edge table.
        var edgeStart: Int32, edgeEnd: Int32
        var zone: Int32
        private var padding: Int32 = 0

        init(reach r: Box, reachSquaredSquareMeters: Double, priority: Int,
             edgeStart: Int32, edgeEnd: Int32, zone: Int32) {
            reachMinX = Float(r.minX).nextDown; reachMinY = Float(r.minY).nextDown
            reachMaxX = Float(r.maxX).nextUp; reachMaxY = Float(r.maxY).nextUp
            self.reachSquaredSquareMeters = reachSquaredSquareMeters
            self.priority = priority
            self.edgeStart = edgeStart; self.edgeEnd = edgeEnd
            self.zone = zone
        }

        /// True when (x, y) may lie in the reach box (never false when it does).
        @inline(__always) func mayReach(x: Float, y: Float) -> Bool {
            x >= reachMinX && x <= reachMaxX && y >= reachMinY && y <= reachMaxY
        }
    }

    private let originX: Double, originY: Double
    private let inverseCellSizePerMeter: Double
    private let columns: Int, rows: Int
    private let cellStart: [Int32]
    /// True when the zones' extent is not finite: every fix gets every zone as a candidate.
    private let isSingleCell: Bool
    /// Candidates per cell, zone indices ascending within each cell.
    let cellEntries: [Entry]

    /// Builds the grid. O(n + total cells covered).
    /// - Parameters:
    ///   - prototypes: one entry per zone (its `zone` field is the index).
    ///   - boxes: the exact reach boxes, same order.
    init(entries prototypes: [Entry], boxes: [Box]) {
        precondition(prototypes.count == boxes.count, "ZoneGrid: one box per entry")
        guard !prototypes.isEmpty else {
            originX = 0; originY = 0; inverseCellSizePerMeter = 1; columns = 0; rows = 0
            cellStart = [0]; cellEntries = []; isSingleCell = false
            return
        }
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        var sides: [Double] = []
        sides.reserveCapacity(boxes.count)
        for b in boxes {
            minX = min(minX, b.minX); minY = min(minY, b.minY); maxX = max(maxX, b.maxX); maxY = max(maxY, b.maxY)
            sides.append(max(b.maxX - b.minX, b.maxY - b.minY))
        }
        sides.sort()
        let width = max(maxX - minX, 1e-6), height = max(maxY - minY, 1e-6)
        guard width.isFinite, height.isFinite else {
            // Coordinates so far apart that the extent overflows: one cell listing every zone.
            originX = 0; originY = 0; inverseCellSizePerMeter = 0; columns = 1; rows = 1
            cellStart = [0, Int32(prototypes.count)]; cellEntries = prototypes; isSingleCell = true
            return
        }
        var cell = max((width * height / Double(2 * boxes.count)).squareRoot(), 0.5 * RobustStatistics.upperMedian(sorted: sides), 1e-3)
        while (width / cell + 1) * (height / cell + 1) > 4_194_304 { cell *= 2 }
        let columns = Int(width / cell) + 1, rows = Int(height / cell) + 1
        self.originX = minX; self.originY = minY
        self.inverseCellSizePerMeter = 1 / cell
        self.columns = columns; self.rows = rows

        func range(_ b: Box) -> (Int, Int, Int, Int) {
            let c0 = max(0, min(columns - 1, Int((b.minX - minX) / cell)))
            let c1 = max(0, min(columns - 1, Int((b.maxX - minX) / cell)))
            let r0 = max(0, min(rows - 1, Int((b.minY - minY) / cell)))
            let r1 = max(0, min(rows - 1, Int((b.maxY - minY) / cell)))
            return (c0, c1, r0, r1)
        }
        var counts = [Int32](repeating: 0, count: columns * rows + 1)
        for b in boxes {
            let (c0, c1, r0, r1) = range(b)
            for r in r0...r1 { for c in c0...c1 { counts[r * columns + c + 1] += 1 } }
        }
        for i in 1..<counts.count { counts[i] += counts[i - 1] }
        var fill = counts
        var entries: [Entry] = []
        entries.reserveCapacity(Int(counts[counts.count - 1]))
        entries += repeatElement(prototypes[0], count: Int(counts[counts.count - 1]))
        for (z, b) in boxes.enumerated() {
            let (c0, c1, r0, r1) = range(b)
            for r in r0...r1 {
                for c in c0...c1 {
                    let cellIndex = r * columns + c
                    entries[Int(fill[cellIndex])] = prototypes[z]
                    fill[cellIndex] += 1
                }
            }
        }
        self.cellStart = counts
        self.cellEntries = entries
        self.isSingleCell = false
    }

    /// The range of `cellEntries` holding the candidate zones for point (x, y); empty outside the grid.
    func candidates(x: Double, y: Double) -> Range<Int> {
        if isSingleCell { return 0..<cellEntries.count }
        let u = (x - originX) * inverseCellSizePerMeter, v = (y - originY) * inverseCellSizePerMeter
        guard u >= 0, v >= 0, u < Double(columns), v < Double(rows) else { return 0..<0 }
        let cellIndex = Int(v) * columns + Int(u)
        return Int(cellStart[cellIndex])..<Int(cellStart[cellIndex + 1])
    }
}
