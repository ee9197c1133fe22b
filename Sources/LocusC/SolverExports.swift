import LocusCore
import LocusSolvers

// The stateless half of include/locus.h: one epoch solved, DOP at a point.

/// `locus_solve`: one epoch's weighted least-squares fix without an engine.
///
/// Minimises χ² = Σ wᵢ (rᵢ − ‖p − pᵢ‖)², wᵢ = 1/σ² (planar: p = (x, y, h) with h the tag height),
/// with NLOS rejection unless disabled; covariance (JᵀWJ)⁻¹ · max(1, s²), m².
/// - Returns: 0, E1003 (null pointer, count > 4096, bad option, non-finite locator), E4001, E4002,
///   E4003, E4004.
@c(locus_solve)
public func locusSolve(_ locators: UnsafeRawPointer?, _ rangesMeters: UnsafePointer<Double>?, _ count: Int,
                       _ options: UnsafeRawPointer?, _ out: UnsafeMutableRawPointer?) -> Int32 {
    Status.guarded { () throws(LocusError) in
        guard let out else { throw LocusError(.invalidArgument, "out is NULL") }
        let points = try SolverExports.points(locators, count: count)
        guard let rangesMeters else { throw LocusError(.invalidArgument, "ranges_m is NULL") }
        let ranges = Array(UnsafeBufferPointer(start: rangesMeters, count: count))
        let configuration = try SolverExports.configuration(options)
        let s = try Trilaterator(configuration: configuration).solve(locators: points, rangesMeters: ranges)
        typealias F = CLayout.Fix
        out.initializeMemory(as: UInt8.self, repeating: 0, count: F.size)
        func put(_ v: Double, _ offset: Int) { out.storeBytes(of: v, toByteOffset: offset, as: Double.self) }
        put(s.position.x, F.x); put(s.position.y, F.y); put(s.position.z, F.z)
        CLayout.store(s.covariance, to: out, at: F.covariance)
        put(s.hdop, F.hdop); put(s.vdop ?? 0, F.vdop); put(s.pdop, F.pdop)
        put(s.residualRMSMeters, F.residualRMS); put(s.chiSquare, F.chiSquare)
        out.storeBytes(of: s.rejectedMask, toByteOffset: F.rejectedMask, as: UInt64.self)
        out.storeBytes(of: s.mode == .spatial ? CLayout.modeSpatial : CLayout.modePlanar, toByteOffset: F.mode, as: Int32.self)
        out.storeBytes(of: Int32(clamping: s.locatorsUsed), toByteOffset: F.anchorsUsed, as: Int32.self)
        out.storeBytes(of: Int32(clamping: s.rejectedCount), toByteOffset: F.rejectedCount, as: Int32.self)
        out.storeBytes(of: Int32(clamping: s.iterations), toByteOffset: F.iterations, as: Int32.self)
        out.storeBytes(of: Int32(s.isConverged ? 1 : 0), toByteOffset: F.converged, as: Int32.self)
    }
}

/// `locus_dop`: dilution of precision of a locator layout at one point.
///
/// Q = (HᵀH)⁻¹ over unit line-of-sight rows; HDOP = √(Q₁₁ + Q₂₂), VDOP = √Q₃₃ (spatial), PDOP = √trace Q.
/// - Returns: 0, E1003, E4001 (fewer locators than unknowns), E4002 (singular geometry).
@c(locus_dop)
public func locusDOP(_ locators: UnsafeRawPointer?, _ count: Int, _ point: UnsafeRawPointer?,
                     _ options: UnsafeRawPointer?, _ out: UnsafeMutableRawPointer?) -> Int32 {
    Status.guarded { () throws(LocusError) in
        guard let out else { throw LocusError(.invalidArgument, "out is NULL") }
        guard let point else { throw LocusError(.invalidArgument, "point is NULL") }
        let points = try SolverExports.points(locators, count: count)
        let at = Point3(x: point.loadUnaligned(fromByteOffset: 0, as: Double.self),
                        y: point.loadUnaligned(fromByteOffset: 8, as: Double.self),
                        z: point.loadUnaligned(fromByteOffset: 16, as: Double.self))
        guard at.isFinite else { throw LocusError(.invalidArgument, "point has a non-finite coordinate") }
        let configuration = try SolverExports.configuration(options)
        let d = try GeometryQuality.dop(locators: points, at: at, mode: configuration.mode,
                                        tagHeightMeters: configuration.tagHeightMeters, configuration: configuration)
        typealias D = CLayout.DOP
        out.initializeMemory(as: UInt8.self, repeating: 0, count: D.size)
        out.storeBytes(of: d.hdop, toByteOffset: D.hdop, as: Double.self)
        out.storeBytes(of: d.vdop ?? 0, toByteOffset: D.vdop, as: Double.self)
        out.storeBytes(of: d.pdop, toByteOffset: D.pdop, as: Double.self)
        out.storeBytes(of: d.vdop == nil ? CLayout.modePlanar : CLayout.modeSpatial, toByteOffset: D.mode, as: Int32.self)
    }
}

/// Argument reading shared by `locus_solve` and `locus_dop`.
enum SolverExports {
    /// The solver mode of an `enum locus_mode` value.
    /// - Throws: E1003 for a value outside the enum.
    static func mode(_ value: Int32) throws(LocusError) -> TrilaterationMode {
        switch value {
        case CLayout.modeAutomatic: return .automatic
        case CLayout.modePlanar: return .planar
        case CLayout.modeSpatial: return .spatial
        default: throw LocusError(.invalidArgument, "mode \(value) is not a locus_mode")
        }
    }

    /// `count` `locus_point`s at `raw`.
    /// - Throws: E1003 for NULL, a count outside 0…4096, or a non-finite coordinate.
    static func points(_ raw: UnsafeRawPointer?, count: Int) throws(LocusError) -> [Point3] {
        guard count >= 0, count <= CLayout.maximumLocators else {
            throw LocusError(.invalidArgument, "count \(count) is outside 0...\(CLayout.maximumLocators)")
        }
        guard let raw else { throw LocusError(.invalidArgument, "locators is NULL") }
        var points: [Point3] = []
        points.reserveCapacity(count)
        for i in 0..<count {
            let base = i * CLayout.Point.size
            let p = Point3(x: raw.loadUnaligned(fromByteOffset: base, as: Double.self),
                           y: raw.loadUnaligned(fromByteOffset: base + 8, as: Double.self),
                           z: raw.loadUnaligned(fromByteOffset: base + 16, as: Double.self))
            guard p.isFinite else { throw LocusError(.invalidArgument, "locators[\(i)] has a non-finite coordinate") }
            points.append(p)
        }
        return points
    }

    /// The solver configuration of a `locus_solve_options` (NULL: standard).
    /// - Throws: E1003 for values outside their domains.
    static func configuration(_ raw: UnsafeRawPointer?) throws(LocusError) -> TrilaterationConfiguration {
        typealias S = CLayout.SolveOptions
        var configuration = TrilaterationConfiguration.standard
        guard let raw else { return configuration }
        let sigma = raw.loadUnaligned(fromByteOffset: S.sigmaMeters, as: Double.self)
        if sigma != 0 {
            guard (1e-6...100).contains(sigma) else { throw LocusError(.invalidArgument, "options.sigma_m \(sigma) is outside [1e-6, 100]") }
            configuration.sigmaMeters = sigma
        }
        let height = raw.loadUnaligned(fromByteOffset: S.tagHeightMeters, as: Double.self)
        guard height.isFinite else { throw LocusError(.invalidArgument, "options.tag_height_m is not finite") }
        configuration.tagHeightMeters = height
        configuration.mode = try mode(raw.loadUnaligned(fromByteOffset: S.mode, as: Int32.self))
        configuration.isRobust = raw.loadUnaligned(fromByteOffset: S.noOutlierRejection, as: Int32.self) == 0
        return configuration
    }
}
