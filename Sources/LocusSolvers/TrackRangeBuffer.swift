import LocusCore

/// The latest range to each recently heard locator, for (re-)initialising a tightly coupled track.
///
/// At most `capacity` locators are kept (the oldest entry is replaced when full); storage is reserved
/// once, so inserting never allocates.
struct TrackRangeBuffer: Sendable {
    struct Entry: Sendable {
        var address: LocatorAddress
        var anchor: Point3
        var rangeMeters: Double
        var timeSeconds: Double
    }

    static let capacity = 16
    private(set) var entries: ContiguousArray<Entry>

    init() {
        entries = []
        entries.reserveCapacity(Self.capacity)
    }

    mutating func removeAll() { entries.removeAll(keepingCapacity: true) }

    /// Keeps this range as the latest of its locator.
    mutating func insert(_ entry: Entry) {
        if let i = entries.firstIndex(where: { $0.address == entry.address }) {
            entries[i] = entry
        } else if entries.count < Self.capacity {
            entries.append(entry)
        } else {
            var oldest = 0
            for i in entries.indices where entries[i].timeSeconds < entries[oldest].timeSeconds { oldest = i }
            entries[oldest] = entry
        }
    }

    /// Planar least-squares position from the ranges no older than `windowSeconds` before `newestSeconds`:
    /// minimises Σ (rᵢ − √((x−xᵢ)² + (y−yᵢ)² + (h−zᵢ)²))² by Gauss–Newton from the locators' centroid,
    /// dropping the worst range once when its residual exceeds 3σ and enough remain.
    /// Returns the position and its covariance σ²(JᵀJ)⁻¹ (m²), or nil when fewer than `minimumLocators`
    /// are usable or the geometry is degenerate.
    func solve(newestSeconds: Double, windowSeconds: Double, tagHeightMeters h: Double, minimumLocators: Int,
               sigmaMeters: Double) -> (x: Double, y: Double, cxx: Double, cxy: Double, cyy: Double)? {
        var use: UInt32 = 0
        var count = 0
        for (i, e) in entries.enumerated() where newestSeconds - e.timeSeconds <= windowSeconds {
            use |= 1 << UInt32(i)
            count += 1
        }
        guard count >= max(3, minimumLocators) else { return nil }
        for pass in 0..<2 {
            guard let s = gaussNewton(mask: use, tagHeightMeters: h) else { return nil }
            var worst = -1, worstResidual = 0.0
            var a00 = 0.0, a01 = 0.0, a11 = 0.0
            for (i, e) in entries.enumerated() where use & (1 << UInt32(i)) != 0 {
                let dx = s.x - e.anchor.x, dy = s.y - e.anchor.y, dz = h - e.anchor.z
                let rho = (dx * dx + dy * dy + dz * dz).squareRoot()
                guard rho > 1e-6 else { return nil }
                let res = abs(e.rangeMeters - rho)
                if res > worstResidual { worstResidual = res; worst = i }
                a00 += dx * dx / (rho * rho); a01 += dx * dy / (rho * rho); a11 += dy * dy / (rho * rho)
            }
            if pass == 0, worst >= 0, worstResidual > 3 * sigmaMeters, count > max(3, minimumLocators) {
                use &= ~(1 << UInt32(worst))
                count -= 1
                continue
            }
            let det = a00 * a11 - a01 * a01
            guard det > 1e-9 * max(1, a00 * a11) else { return nil }
            let v = sigmaMeters * sigmaMeters
            return (s.x, s.y, v * a11 / det, -v * a01 / det, v * a00 / det)
        }
        return nil
    }

    private func gaussNewton(mask: UInt32, tagHeightMeters h: Double) -> (x: Double, y: Double)? {
        var x = 0.0, y = 0.0, n = 0.0
        for (i, e) in entries.enumerated() where mask & (1 << UInt32(i)) != 0 {
            x += e.anchor.x; y += e.anchor.y; n += 1
        }
        x /= n; y /= n
        x += 0.01; y += 0.01 // off any symmetric point of the locator layout
        for _ in 0..<20 {
            var a00 = 0.0, a01 = 0.0, a11 = 0.0, b0 = 0.0, b1 = 0.0
            for (i, e) in entries.enumerated() where mask & (1 << UInt32(i)) != 0 {
                let dx = x - e.anchor.x, dy = y - e.anchor.y, dz = h - e.anchor.z
                let rho = (dx * dx + dy * dy + dz * dz).squareRoot()
                guard rho > 1e-9 else { continue }
                let jx = dx / rho, jy = dy / rho, r = e.rangeMeters - rho
                a00 += jx * jx; a01 += jx * jy; a11 += jy * jy
                b0 += jx * r; b1 += jy * r
            }
            let det = a00 * a11 - a01 * a01
            guard det > 1e-12 else { return nil }
            let sx = (a11 * b0 - a01 * b1) / det, sy = (a00 * b1 - a01 * b0) / det
            x += sx; y += sy
            guard x.isFinite, y.isFinite else { return nil }
            if sx * sx + sy * sy < 1e-16 { break }
        }
        return (x, y)
    }
}
