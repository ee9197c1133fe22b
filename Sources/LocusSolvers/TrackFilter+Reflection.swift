import LocusCore

// A confirmed track held at the reflection of the tag across a line of locators (docs/tracking.md,
// Smoother, "A track carried across a line of locators is mirrored back").
extension TrackFilter {
    /// A range fits a position p when |r − ‖(p, h) − a‖| ≤ this × √(σ_r² + (P_xx + P_yy)/2) (m): its
    /// innovation within 3σ, the position's uncertainty taken as isotropic.
    static let reflectionFitSigmas = 3.0
    /// Locators lie on a line when their RMS distance across it is at most this fraction of the track's
    /// distance from it (a tenth: the mirror's jump is twice that distance); and the round's locators
    /// lie on the line's far side from the track up to this fraction of that distance.
    static let reflectionLineSpread = 0.1
    /// The locators of a line spread along it by at least this mean squared distance from their centroid,
    /// m² (10 cm RMS).
    static let reflectionMinimumSpreadSquareMeters = 0.01

    /// The mirror check, after a confirmed track's round gated `gated` (≥ 2) of its ranges.
    ///
    /// A track can be carried across the edge of the locators — a corridor's row of locators, a room's
    /// wall between two — by NLOS or lost ranges while it is young, and then held there: the ranges
    /// of the locators on that line fit the track and its mirror image alike (reflection across a line
    /// keeps every distance to a point on it), so they keep the gate's score low, while the ranges of
    /// the locators beyond are refused round after round (`docs/tracking.md`). The check:
    /// 1. the line: the principal axis (centroid c, unit direction d) of the locators whose ranges fit
    ///    the track's position p, less the farthest from the axis while they are not on one line; at
    ///    least two, and every locator of the round on the line or beyond it as seen from p;
    /// 2. the mirror p′ = c + R(p − c), R = 2ddᵀ − I;
    /// 3. no range fits p and not p′, at least two ranges read short at p (r < ρ(p) − the fit bound:
    ///    NLOS only lengthens a range, so a range long at p that fits p′ may be NLOS of a right track
    ///    and counts for nothing) and fit p′, and p′ fits all of the round but one.
    /// Then the track is mirrored: mean (p, v) → (p′, R v), covariance P → M P Mᵀ with M = diag(R, R),
    /// as a restart at the state's time (`reset(to:atSeconds:)`: the next round is judged as a young
    /// track's), journalled as a start at the round's last range. Nothing is allocated; rounds of more
    /// than 64 ranges are not checked.
    mutating func mirrorIfReflectionFits(rangesMeters ranges: UnsafeBufferPointer<Double>, timesSeconds times: UnsafeBufferPointer<Double>,
                                         anchors: UnsafeBufferPointer<Point3>, addresses: UnsafeBufferPointer<LocatorAddress>,
                                         gated: Int) {
        guard gated >= 2, isTracking, ranges.count <= 64, let s = state else { return }
        let p = SIMD2(s.x[0], s.x[1])
        let s2 = rangeVarianceSquareMeters + 0.5 * (s[0, 0] + s[1, 1])
        let limit = Self.reflectionFitSigmas * s2.squareRoot()
        // The ranges that fit p (bit k), and how many are usable.
        var line: UInt64 = 0
        var usable = 0
        for k in ranges.indices where Self.isUsable(rangeMeters: ranges[k], timeSeconds: times[k]) {
            usable += 1
            if abs(ranges[k] - distance(from: p, to: anchors[k])) <= limit { line |= 1 << UInt64(k) }
        }
        guard usable - line.nonzeroBitCount >= 2 else { return }
        // Step 1: the principal axis of the fitting locators, less the one farthest from it while they do
        // not lie on it (at least two kept).
        var c = SIMD2<Double>.zero, d = SIMD2<Double>(1, 0), across = 0.0, along = 0.0
        while line.nonzeroBitCount >= 2 {
            (c, d, across, along) = Self.principalAxis(anchors, line)
            let q = p - c
            let offLine = abs(q.x * d.y - q.y * d.x)  // the track's distance from the line
            guard across.squareRoot() > Self.reflectionLineSpread * offLine else { break }
            var farthest = -1, most = -1.0
            for k in anchors.indices where line & (1 << UInt64(k)) != 0 {
                let a = SIMD2(anchors[k].x, anchors[k].y) - c
                let off = abs(a.x * d.y - a.y * d.x)
                if off > most { most = off; farthest = k }
            }
            line &= ~(1 << UInt64(farthest))
        }
        // Locators stacked at one place (or within centimetres) define no line.
        guard line.nonzeroBitCount >= 2, along >= Self.reflectionMinimumSpreadSquareMeters else { return }
        // The line must bound the round's locators, with the track beyond it: a track carried across the
        // edge of the locators (a corridor's row, a room's wall). A line with locators on both sides
        // passes through the area they cover, where the mirror of a track lies outside it.
        let q = p - c
        let side = q.x * d.y - q.y * d.x  // the track's signed distance from the line
        for k in ranges.indices where Self.isUsable(rangeMeters: ranges[k], timeSeconds: times[k]) {
            let a = SIMD2(anchors[k].x, anchors[k].y) - c
            if (a.x * d.y - a.y * d.x) * side > Self.reflectionLineSpread * side * side { return }
        }
        // Step 2: R = [[a, b], [b, c]] and the mirror.
        let r = (a: 2 * d.x * d.x - 1, b: 2 * d.x * d.y, c: 2 * d.y * d.y - 1)
        let mirrored = c + SIMD2(r.a * q.x + r.b * q.y, r.b * q.x + r.c * q.y)
        // Step 3: the ranges' votes.
        var forMirror = 0, fitsMirrored = 0
        for k in ranges.indices where Self.isUsable(rangeMeters: ranges[k], timeSeconds: times[k]) {
            let dp = distance(from: p, to: anchors[k]), dm = distance(from: mirrored, to: anchors[k])
            let fitsP = abs(ranges[k] - dp) <= limit, fitsM = abs(ranges[k] - dm) <= limit
            if fitsM { fitsMirrored += 1 }
            if fitsP && !fitsM { return }  // a range that sides with the track
            // Only a range short of the track counts for the mirror: NLOS lengthens ranges, so one that
            // reads long at p and fits the mirror (a far row's NLOS range, when p is right) proves nothing.
            if fitsM && ranges[k] < dp - limit { forMirror += 1 }
        }
        guard forMirror >= 2, fitsMirrored >= usable - 1 else { return }
        // M P Mᵀ with M = diag(R, R): R is symmetric, so each 2×2 block B becomes R B R.
        var out = s
        out.x = SIMD4(mirrored.x, mirrored.y, r.a * s.x[2] + r.b * s.x[3], r.b * s.x[2] + r.c * s.x[3])
        for bi in 0..<2 {
            for bj in 0..<2 {
                let b00 = s[2 * bi, 2 * bj], b01 = s[2 * bi, 2 * bj + 1], b10 = s[2 * bi + 1, 2 * bj], b11 = s[2 * bi + 1, 2 * bj + 1]
                // R B
                let m00 = r.a * b00 + r.b * b10, m01 = r.a * b01 + r.b * b11
                let m10 = r.b * b00 + r.c * b10, m11 = r.b * b01 + r.c * b11
                // (R B) R
                out.p[4 * (2 * bi) + 2 * bj] = m00 * r.a + m01 * r.b
                out.p[4 * (2 * bi) + 2 * bj + 1] = m00 * r.b + m01 * r.c
                out.p[4 * (2 * bi + 1) + 2 * bj] = m10 * r.a + m11 * r.b
                out.p[4 * (2 * bi + 1) + 2 * bj + 1] = m10 * r.b + m11 * r.c
            }
        }
        let last = ranges.count - 1
        reset(to: out, atSeconds: stateSeconds)
        journalRestart(atSeconds: times[last], address: addresses[last])
    }

    /// Horizontal position p (m) to a locator at a, with the tag at the track's height: ‖(p, h) − a‖, m.
    @inline(__always)
    private func distance(from p: SIMD2<Double>, to a: Point3) -> Double {
        let dx = p.x - a.x, dy = p.y - a.y, dz = tagHeightMeters - a.z
        return (dx * dx + dy * dy + dz * dz).squareRoot()
    }

    /// The centroid c, unit principal direction d and mean squared distances across and along the axis
    /// (m²) of the horizontal positions of the locators `anchors[k]` with bit k of `members` set (at
    /// least two).
    private static func principalAxis(_ anchors: UnsafeBufferPointer<Point3>, _ members: UInt64)
        -> (SIMD2<Double>, SIMD2<Double>, Double, Double) {
        var sum = SIMD2<Double>.zero, count = 0.0
        for k in anchors.indices where members & (1 << UInt64(k)) != 0 {
            sum += SIMD2(anchors[k].x, anchors[k].y)
            count += 1
        }
        let c = sum / count
        var sxx = 0.0, sxy = 0.0, syy = 0.0
        for k in anchors.indices where members & (1 << UInt64(k)) != 0 {
            let dx = anchors[k].x - c.x, dy = anchors[k].y - c.y
            sxx += dx * dx; sxy += dx * dy; syy += dy * dy
        }
        // Eigenvalues of the 2×2 scatter: along λ₁ ≥ across λ₂; d the eigenvector of λ₁.
        let (along, minor) = SymmetricMatrix3.eigenvalues2x2(xx: sxx, xy: sxy, yy: syy)
        let across = max(0, minor)
        var d = abs(sxy) > 1e-12 ? SIMD2(along - syy, sxy) : (sxx >= syy ? SIMD2(1.0, 0.0) : SIMD2(0.0, 1.0))
        d /= (d * d).sum().squareRoot()
        return (c, d, across / count, along / count)
    }
}
