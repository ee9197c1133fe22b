
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

    /// One candidate of a cell: the zone's reach box, its priority and its index.
    struct Entry: Sendable {
        var box: Box
        var priority: Int
        var zone: Int32
    }

    private let originX: Double, originY: Double
    private let inverseCellSizePerMeter: Double
    private let columns: Int, rows: Int
    private let cellStart: [Int32]
    /// Candidates per cell, zone indices ascending within each cell.
    let cellEntries: [Entry]

    /// Builds the grid. O(n + total cells covered).
    init(boxes: [Box], priorities: [Int]) {
        guard !boxes.isEmpty else {
            originX = 0; originY = 0; inverseCellSizePerMeter = 1; columns = 0; rows = 0
            cellStart = [0]; cellEntries = []
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
        var cell = max((width * height / Double(2 * boxes.count)).squareRoot(), 0.5 * sides[sides.count / 2], 1e-3)
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
        var entries = [Entry](repeating: Entry(box: Box(minX: 0, minY: 0, maxX: 0, maxY: 0), priority: 0, zone: 0),
                              count: Int(counts[counts.count - 1]))
        for (z, b) in boxes.enumerated() {
            let (c0, c1, r0, r1) = range(b)
            for r in r0...r1 {
                for c in c0...c1 {
                    let cellIndex = r * columns + c
                    entries[Int(fill[cellIndex])] = Entry(box: b, priority: priorities[z], zone: Int32(z))
                    fill[cellIndex] += 1
                }
            }
        }
        self.cellStart = counts
        self.cellEntries = entries
    }

    /// The range of `cellEntries` holding the candidate zones for point (x, y); empty outside the grid.
    func candidates(x: Double, y: Double) -> Range<Int> {
        let u = (x - originX) * inverseCellSizePerMeter, v = (y - originY) * inverseCellSizePerMeter
        guard u >= 0, v >= 0, u < Double(columns), v < Double(rows) else { return 0..<0 }
        let cellIndex = Int(v) * columns + Int(u)
        return Int(cellStart[cellIndex])..<Int(cellStart[cellIndex + 1])
    }
}
