import LocusCore
import LocusNumerics

/// A planar least-squares position from range differences — the seed of a difference-only track where
/// the smoother plays the engine's part (`TrackFilter.update(differences:locators:addresses:)`'s
/// initialisation contract: a `.buffered` filter is seeded with `reset(toFix:)` from such a fix). Not
/// the engine's difference solver: a small damped Gauss–Newton over p = (x, y) at the tag height.
///
/// Minimises J(p) = Σ_groups ‖W (z − h(p))‖² with h, H from `DifferenceModel` and, per group of m
/// differences sharing a reference, W = I + c11ᵀ (c = `DifferenceModel.whitening(count: m)`), so that
/// the whitened residuals have variance σ² each: normal equations (Σ H'ᵀH' + λ diag) δ = Σ H'ᵀr',
/// Levenberg–Marquardt steps from the centroid of the locators heard and from the corners of their
/// bounding box, the best kept. Covariance σ²(Σ H'ᵀH')⁻¹ (m²). Refused (nil) with fewer than 2
/// usable differences, a singular geometry, or a whitened residual RMS above 3σ (an outlier or a
/// wrong minimum: better no seed than a wrong one).
enum DifferenceSeed {
    /// The fix at `timeSeconds` from `pairs` (indices into `locators`), or nil (see the type).
    static func fix(pairs: [DifferencePair], locators: [Point3], tagHeightMeters h: Double, sigmaMeters sigma: Double,
                    timeSeconds t: Double, tag: TagID, floor: FloorID) -> PositionFix? {
        let usable = pairs.filter {
            $0.reference >= 0 && Int($0.reference) < locators.count && $0.locator >= 0 && Int($0.locator) < locators.count
                && $0.reference != $0.locator && $0.differenceMeters.isFinite
        }
        guard usable.count >= 2, sigma > 0 else { return nil }
        var heard: [Point3] = []
        for p in usable { heard.append(locators[Int(p.reference)]); heard.append(locators[Int(p.locator)]) }
        let x0 = heard.map(\.x).min() ?? 0, x1 = heard.map(\.x).max() ?? 0
        let y0 = heard.map(\.y).min() ?? 0, y1 = heard.map(\.y).max() ?? 0
        let centroid = (heard.map(\.x).reduce(0, +) / Double(heard.count), heard.map(\.y).reduce(0, +) / Double(heard.count))
        let inset = 0.25
        let starts = [centroid,
                      (x0 + inset * (x1 - x0), y0 + inset * (y1 - y0)), (x1 - inset * (x1 - x0), y0 + inset * (y1 - y0)),
                      (x1 - inset * (x1 - x0), y1 - inset * (y1 - y0)), (x0 + inset * (x1 - x0), y1 - inset * (y1 - y0))]
        var best: (x: Double, y: Double, cost: Double)?
        for s in starts {
            guard let r = solve(from: s, pairs: usable, locators: locators, h: h) else { continue }
            if best == nil || r.cost < best!.cost { best = r }
        }
        guard let b = best else { return nil }
        let e = evaluate(b.x, b.y, pairs: usable, locators: locators, h: h)
        let dof = max(1, usable.count - 2)
        let det = e.f00 * e.f11 - e.f01 * e.f01
        guard det > 1e-12 * max(e.f00, e.f11) * max(e.f00, e.f11), e.cost / Double(dof) <= 9 * sigma * sigma else { return nil }
        let s2 = sigma * sigma
        let cov = SymmetricMatrix3(xx: s2 * e.f11 / det, xy: -s2 * e.f01 / det, yy: s2 * e.f00 / det, zz: 0)
        let hdop = ((e.f00 + e.f11) / det).squareRoot()
        return PositionFix(timeSeconds: t, tag: tag, floor: floor, position: Point3(x: b.x, y: b.y, z: h), covariance: cov,
                           quality: FixQuality(hdop: hdop, pdop: hdop, residualRMSMeters: (e.cost / Double(usable.count)).squareRoot(),
                                               locatorsUsed: usable.count))
    }

    /// Levenberg–Marquardt from `start`: the minimum and its cost J (m²), or nil if it went non-finite.
    private static func solve(from start: (Double, Double), pairs: [DifferencePair], locators: [Point3],
                              h: Double) -> (x: Double, y: Double, cost: Double)? {
        var (x, y) = start
        var e = evaluate(x, y, pairs: pairs, locators: locators, h: h)
        var lambda = 1e-3
        for _ in 0..<60 {
            let a00 = e.f00 * (1 + lambda), a11 = e.f11 * (1 + lambda), a01 = e.f01
            let det = a00 * a11 - a01 * a01
            guard det > 0, det.isFinite else { return nil }
            let dx = (a11 * e.g0 - a01 * e.g1) / det, dy = (a00 * e.g1 - a01 * e.g0) / det
            let n = evaluate(x + dx, y + dy, pairs: pairs, locators: locators, h: h)
            if n.cost.isFinite, n.cost <= e.cost {
                x += dx; y += dy; e = n
                lambda = max(lambda / 3, 1e-9)
                if dx * dx + dy * dy < 1e-14 { break }
            } else {
                lambda *= 5
                if lambda > 1e8 { break }
            }
        }
        return e.cost.isFinite ? (x, y, e.cost) : nil
    }

    /// J, the gradient term Σ H'ᵀr' and the information Σ H'ᵀH' at (x, y), group by group.
    private static func evaluate(_ x: Double, _ y: Double, pairs: [DifferencePair], locators: [Point3], h: Double)
        -> (cost: Double, g0: Double, g1: Double, f00: Double, f01: Double, f11: Double) {
        let p = Point3(x: x, y: y, z: h)
        var cost = 0.0, g0 = 0.0, g1 = 0.0, f00 = 0.0, f01 = 0.0, f11 = 0.0
        var start = 0
        while start < pairs.count {
            var end = start + 1
            while end < pairs.count && pairs[end].sharesArrival(with: pairs[start]) { end += 1 }
            let c = DifferenceModel.whitening(count: end - start)
            var sr = 0.0, sx = 0.0, sy = 0.0
            for k in start..<end {
                let j = DifferenceModel.jacobian(at: p, reference: locators[Int(pairs[k].reference)], locator: locators[Int(pairs[k].locator)])
                sr += pairs[k].differenceMeters - j.predicted; sx += j.gradient.x; sy += j.gradient.y
            }
            for k in start..<end {
                let j = DifferenceModel.jacobian(at: p, reference: locators[Int(pairs[k].reference)], locator: locators[Int(pairs[k].locator)])
                let r = pairs[k].differenceMeters - j.predicted + c * sr
                let hx = j.gradient.x + c * sx, hy = j.gradient.y + c * sy
                cost += r * r; g0 += hx * r; g1 += hy * r
                f00 += hx * hx; f01 += hx * hy; f11 += hy * hy
            }
            start = end
        }
        return (cost, g0, g1, f00, f01, f11)
    }
}
