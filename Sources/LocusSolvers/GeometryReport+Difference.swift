import LocusCore
import LocusNumerics

/// The TDoA map of `locus geometry --tdoa`: the DOP of uplink range differences per cell, from
/// `DifferenceGeometry` (the one home of the difference DOP; nothing here forms a DOP of its own).
///
/// Per cell centre c (tag at the floor's carrying height h): the locators heard are those with
/// ‖(cₓ, c_y, h) − pᵢ‖ ≤ `maximumRangeMeters`; the nearest of them is the reference A (ties: the
/// first in site order) and every other heard locator B gives one pair of one blink — one group
/// sharing A's arrival, Σ = σ²(I + 11ᵀ). `DifferenceGeometry` then gives
///   F = Σⱼ hⱼhⱼᵀ − (Σⱼ hⱼ)(Σⱼ hⱼ)ᵀ/(m + 1),  hⱼ = ∂(ρ_B − ρ_A)/∂p,  Q = F⁻¹ (per unit σ²),
/// HDOP = √(Q₁₁ + Q₂₂), VDOP = √Q₃₃ — unitless: position σ ≈ HDOP · σ of one arrival (m). F equals
/// the information of the m + 1 arrivals as ranges less what the unknown emission time takes, so
/// it does not depend on which locator is the reference.
///
/// **Why outside the hull is worse.** A range fixes the tag on a circle, and circles from locators
/// on one side still cross at a good angle. A difference fixes it on a hyperbola branch, whose
/// gradient hⱼ = u_B − u_A (unit lines of sight) shrinks as the two locators are seen in nearly the
/// same direction: beyond the locators' convex hull every uᵢ points roughly the same way, the hⱼ are
/// short and nearly parallel, and the emission-time term removes their common part. F collapses
/// along the radial direction and HDOP grows with the distance from the hull, much faster than for
/// ranges (`GeometryReportTests`: ≥ 2× at a point 10 m outside a 20 m square).
extension GeometryReport {
    /// Scratch space for one cell's heard locators and pairs (reused: no allocation per cell).
    struct DifferenceScratch {
        var heard: [Point3] = []
        var pairs: [DifferencePair] = []

        init(capacity: Int) {
            heard.reserveCapacity(capacity)
            pairs.reserveCapacity(capacity)
        }
    }

    /// The uplink difference DOP at `point` (z = tag height) over the `locators` within range, plus
    /// `extra` when given (a proposed locator): (locators heard, DOP or nil). Nil when fewer than
    /// `locatorsNeeded` are heard, or where `DifferenceGeometry` finds the geometry singular or its
    /// PDOP above `maximumDOP` (E4001/E4002 there).
    /// Complexity O(n).
    static func differenceDOP(at point: Point3, locators: [Point3], extra: Point3? = nil, spatial: Bool,
                              options: GeometryReportOptions, scratch: inout DifferenceScratch) -> (heard: Int, dop: DilutionOfPrecision?) {
        let range2 = options.maximumRangeMeters * options.maximumRangeMeters
        scratch.heard.removeAll(keepingCapacity: true)
        scratch.pairs.removeAll(keepingCapacity: true)
        var reference = -1, nearest = Double.infinity
        func hear(_ p: Point3) {
            let dx = point.x - p.x, dy = point.y - p.y, dz = point.z - p.z
            let r2 = dx * dx + dy * dy + dz * dz
            guard r2 <= range2 else { return }
            if r2 < nearest { nearest = r2; reference = scratch.heard.count }
            scratch.heard.append(p)
        }
        for p in locators { hear(p) }
        if let extra { hear(extra) }
        let k = scratch.heard.count
        guard k >= options.locatorsNeeded(spatial: spatial) else { return (k, nil) }
        for i in 0..<k where i != reference {
            scratch.pairs.append(DifferencePair(reference: reference, locator: i, differenceMeters: 0, timeSeconds: 0))
        }
        do {
            let d = try DifferenceGeometry.dop(locators: scratch.heard.span, pairs: scratch.pairs.span, at: point,
                                               planar: !spatial, maximumDOP: options.trilateration.maximumDOP)
            return (k, d)
        } catch {
            return (k, nil)
        }
    }

    /// The difference map: one `differenceDOP` per cell, in grid index order.
    /// Complexity O(cells · n).
    static func differenceCells(grid: GeometryGrid, locators: [Point3], mode: TrilaterationMode, tagHeightMeters h: Double,
                                options: GeometryReportOptions) -> [GeometryCell] {
        let spatial = mode == .spatial
        var scratch = DifferenceScratch(capacity: locators.count + 1)
        var cells: [GeometryCell] = []
        cells.reserveCapacity(grid.count)
        for j in 0..<grid.rows {
            for i in 0..<grid.columns {
                let c = grid.centre(column: i, row: j)
                let (k, d) = differenceDOP(at: Point3(x: c.x, y: c.y, z: h), locators: locators, spatial: spatial,
                                           options: options, scratch: &scratch)
                cells.append(GeometryCell(locatorsInRange: k, hdop: d?.hdop, vdop: spatial ? d?.vdop : nil))
            }
        }
        return cells
    }

    /// The convex hull of the locators' (x, y), counter-clockwise, without repeated or collinear
    /// points (Andrew's monotone chain, O(n log n)); fewer than 3 points when they are collinear.
    /// The heatmap outlines it on a TDoA map: outside it the difference DOP degrades fast.
    package static func locatorHull(_ locators: [Point3]) -> [Point2] {
        let points = locators.map { Point2(x: $0.x, y: $0.y) }.sorted { $0.x != $1.x ? $0.x < $1.x : $0.y < $1.y }
        guard points.count >= 3 else { return points }
        func cross(_ o: Point2, _ a: Point2, _ b: Point2) -> Double { (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x) }
        var lower: [Point2] = [], upper: [Point2] = []
        for p in points {
            while lower.count >= 2 && cross(lower[lower.count - 2], lower[lower.count - 1], p) <= 0 { lower.removeLast() }
            lower.append(p)
        }
        for p in points.reversed() {
            while upper.count >= 2 && cross(upper[upper.count - 2], upper[upper.count - 1], p) <= 0 { upper.removeLast() }
            upper.append(p)
        }
        return Array(lower.dropLast() + upper.dropLast())
    }
}
