public import CLocusKernels
import LocusCore

/// The Swift face of the range measurement model (`CLocusKernels/include/locus_measurement_range.h`),
/// so that the Swift solvers predict a range exactly as the kernels do, from the one spelling:
///
/// - offset d = p − a (m), p the tag (planar: its z is the floor's tag height), a the locator;
/// - prediction h = ρ = ‖d‖ = √((dx² + dy²) + dz²) (m);
/// - Jacobian H = ∂h/∂p = d/ρ, the unit line of sight;
/// - noise R = σ² (m²) and the gate on ν = y/√S, y = z − ρ, S = HPHᵀ + R, stay with the filters
///   (`locus_measurement.h`).
///
/// Each call is the C function, inlined into the caller's code (the same IEEE operations in the same
/// order, so the same bits as the kernels). `@inlinable public`, not `package`, so that a caller in
/// another module (LocusSolvers' estimators and calibrations) gets the inlined body rather than a call:
/// Swift 6.3 serialises the bodies of public inlinable declarations only (`CachePrefetch` is the
/// other such face). Measured on the instruction guard: a `package` face cost the per-locator bias
/// estimator ≈ 315 instructions a fix (+1.9 % engine_raw) in calls.
public enum RangeModel {
    /// ρ² = (dx² + dy²) + dz² (m²) of the offset d = p − a.
    @inlinable @inline(__always)
    public static func squared(dx: Double, dy: Double, dz: Double) -> Double { locus_range_squared(dx, dy, dz) }

    /// The predicted range ρ = ‖d‖ (m) of the offset d = p − a.
    @inlinable @inline(__always)
    public static func predicted(dx: Double, dy: Double, dz: Double) -> Double { locus_range_predicted(dx, dy, dz) }

    /// The predicted range ρ = ‖p − a‖ (m) of the tag at p to the locator at a.
    @inlinable @inline(__always)
    public static func predicted(from p: Point3, to a: Point3) -> Double {
        locus_range_predicted(p.x - a.x, p.y - a.y, p.z - a.z)
    }

    /// The Jacobian H = d/ρ (ρ > 0), one division per component.
    @inlinable @inline(__always)
    public static func unit(dx: Double, dy: Double, dz: Double, rho: Double) -> (x: Double, y: Double, z: Double) {
        var h = (0.0, 0.0, 0.0)
        withUnsafeMutablePointer(to: &h) { hp in
            hp.withMemoryRebound(to: Double.self, capacity: 3) { locus_range_unit(dx, dy, dz, rho, $0) }
        }
        return h
    }

    /// Adds the range's unit line of sight H = (dx, dy)/ρ to an epoch's Gram matrix A = Σ HᵀH
    /// (a00, a01, a11), ρ² floored at 1e-12 m² — the sums `locus_imm_update_ranges` keeps for a round.
    @inlinable @inline(__always)
    public static func addLineOfSight(dx: Double, dy: Double, rho2: Double, a00: inout Double, a01: inout Double, a11: inout Double) {
        var a = (a00, a01, a11)
        withUnsafeMutablePointer(to: &a) { ap in
            ap.withMemoryRebound(to: Double.self, capacity: 3) { locus_range_gram_add($0, dx, dy, rho2) }
        }
        a00 = a.0; a01 = a.1; a11 = a.2
    }
}
