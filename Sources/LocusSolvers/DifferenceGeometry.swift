import LocusCore
import LocusNumerics

/// How range-difference (TDoA) noise maps to position noise: the Fisher information of the position
/// and its dilution of precision, for the `DifferencePair`s heard at a point. The one home of the
/// difference geometry: the solver's tests hold its covariance to this bound (the Cramér–Rao bound
/// σ² · I⁻¹), and `locus geometry --tdoa` maps its DOP.
///
/// With hⱼ = ∂zⱼ/∂p (`DifferenceModel`: the difference of the two unit lines of sight) and a group
/// of m differences sharing one arrival at the reference (Σ = σ²(I + 11ᵀ), Σ⁻¹ = σ⁻²(I − 11ᵀ/(m+1))),
/// the information per unit σ² is
///   F = Σ_groups [ Σⱼ hⱼhⱼᵀ − (Σⱼ hⱼ)(Σⱼ hⱼ)ᵀ / (m + 1) ],
/// identical to the information of the m + 1 arrivals as pseudo-ranges with one unknown offset per
/// group. Q = F⁻¹ (m² per σ², σ the per-arrival noise): HDOP = √(Q₁₁ + Q₂₂), VDOP = √Q₃₃,
/// PDOP = √trace Q. Planar: p = (x, y) at the floor's tag height (the rows' z parts dropped).
package enum DifferenceGeometry {
    /// F (per unit σ²) at `point`: a 2×2 block in `xx, xy, yy` (planar: the rest 0) or 3×3 (spatial).
    /// `point.z` is the tag's height. O(pairs). Indices of `pairs` must be valid for `locators`.
    static func information(locators: Span<Point3>, pairs: Span<DifferencePair>, at point: Point3,
                            planar: Bool) -> SymmetricMatrix3 {
        // Over the spans' buffers: the same loop indexing the spans directly crashed the Swift 6.3.1
        // optimiser in release builds ("Found a leaked owned value" in CopyPropagation).
        locators.withUnsafeBufferPointer { locators in
            pairs.withUnsafeBufferPointer { pairs in information(locators: locators, pairs: pairs, at: point, planar: planar) }
        }
    }

    /// `information(locators:pairs:at:planar:)` over buffers.
    private static func information(locators: UnsafeBufferPointer<Point3>, pairs: UnsafeBufferPointer<DifferencePair>,
                                    at point: Point3, planar: Bool) -> SymmetricMatrix3 {
        var f = SymmetricMatrix3.zero
        var start = 0
        while start < pairs.count {
            var end = start + 1
            // (Not `end < n && pairs[end]…`: the autoclosure of `&&` capturing the span crashes the 6.3.1
            // optimiser in release builds — "leaked owned value" in CopyPropagation.)
            while end < pairs.count {
                guard pairs[end].sharesArrival(with: pairs[start]) else { break }
                end += 1
            }
            var s = (0.0, 0.0, 0.0)
            for k in start..<end {
                let pair = pairs[k]
                var h = DifferenceModel.jacobian(at: point, reference: locators[Int(pair.reference)],
                                                 locator: locators[Int(pair.locator)]).gradient
                if planar { h.z = 0 }
                f.xx += h.x * h.x; f.xy += h.x * h.y; f.xz += h.x * h.z
                f.yy += h.y * h.y; f.yz += h.y * h.z; f.zz += h.z * h.z
                s.0 += h.x; s.1 += h.y; s.2 += h.z
            }
            let w = 1 / Double(end - start + 1)
            f.xx -= s.0 * s.0 * w; f.xy -= s.0 * s.1 * w; f.xz -= s.0 * s.2 * w
            f.yy -= s.1 * s.1 * w; f.yz -= s.1 * s.2 * w; f.zz -= s.2 * s.2 * w
            start = end
        }
        return f
    }

    /// Q = F⁻¹ (m² per unit σ²; planar: the 2×2 block, zz = 0), or nil when F is singular (reciprocal
    /// condition below `minimumReciprocalCondition`) or not finite.
    package static func covariance(_ f: SymmetricMatrix3, planar: Bool,
                                   minimumReciprocalCondition: Double = 1e-10) -> SymmetricMatrix3? {
        if planar {
            let det = f.xx * f.yy - f.xy * f.xy
            let scale = max(abs(f.xx), abs(f.yy))
            guard det.isFinite, scale > 0, det > minimumReciprocalCondition * scale * scale else { return nil }
            return SymmetricMatrix3(xx: f.yy / det, xy: -f.xy / det, yy: f.xx / det, zz: 0)
        }
        let c00 = f.yy * f.zz - f.yz * f.yz, c01 = f.xz * f.yz - f.xy * f.zz, c02 = f.xy * f.yz - f.xz * f.yy
        let det = f.xx * c00 + f.xy * c01 + f.xz * c02
        let scale = max(abs(f.xx), abs(f.yy), abs(f.zz))
        guard det.isFinite, scale > 0, det > minimumReciprocalCondition * scale * scale * scale else { return nil }
        return SymmetricMatrix3(xx: c00 / det, xy: c01 / det, xz: c02 / det,
                                yy: (f.xx * f.zz - f.xz * f.xz) / det, yz: (f.xy * f.xz - f.xx * f.yz) / det,
                                zz: (f.xx * f.yy - f.xy * f.xy) / det)
    }

    /// The DOP of the differences `pairs` at `point` (planar: `point.z` is the tag height, VDOP nil).
    /// - Throws: E4001 too few independent differences (2 planar, 3 spatial: fewer locators than
    ///   unknowns + 1), E4002 a singular geometry or PDOP above `maximumDOP`.
    static func dop(locators: Span<Point3>, pairs: Span<DifferencePair>, at point: Point3, planar: Bool,
                    maximumDOP: Double = 1e4) throws(LocusError) -> DilutionOfPrecision {
        let unknowns = planar ? 2 : 3
        guard pairs.count >= unknowns else {
            throw LocusError(.tooFewRanges, "too few differences for a DOP: \(unknowns) needed, \(pairs.count) given")
        }
        let f = information(locators: locators, pairs: pairs, at: point, planar: planar)
        guard let q = covariance(f, planar: planar) else {
            throw LocusError(.degenerateGeometry, "the differences' geometry is singular at (\(point.x), \(point.y))")
        }
        let hdop = (q.xx + q.yy).squareRoot()
        let pdop = (q.xx + q.yy + q.zz).squareRoot()
        guard pdop.isFinite, pdop <= maximumDOP else {
            throw LocusError(.degenerateGeometry, "difference PDOP \(pdop) above \(maximumDOP)")
        }
        return DilutionOfPrecision(hdop: hdop, vdop: planar ? nil : q.zz.squareRoot(), pdop: pdop)
    }
}
