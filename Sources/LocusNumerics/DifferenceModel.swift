internal import CLocusKernels
import LocusCore

/// The Swift face of the range-difference (TDoA) measurement model
/// (`CLocusKernels/include/locus_measurement_difference.h`, where every formula is spelled once):
///
/// - prediction h(p) = ρ_B − ρ_A = ‖p − b‖ − ‖p − a‖ (m), A the reference locator, B the other;
/// - Jacobian H = (p − b)/ρ_B − (p − a)/ρ_A;
/// - noise: σ² per arrival (m²), so 2σ² per difference and Σ = σ²(I + 11ᵀ) for m differences that
///   share a reference; whitened by W = I + c 11ᵀ, c = `whitening(count:)`;
/// - plausibility |z| ≤ ‖b − a‖ + margin.
///
/// Each call is the C function inlined into this module's code: the same operations as the kernels.
package enum DifferenceModel {
    /// The predicted difference ρ_B − ρ_A (m) of the tag at p between the locator at b and the reference at a.
    @inline(__always)
    package static func predicted(at p: Point3, reference a: Point3, locator b: Point3) -> Double {
        var aa = (a.x, a.y, a.z), bb = (b.x, b.y, b.z)
        return withUnsafePointer(to: &aa) { ap in
            withUnsafePointer(to: &bb) { bp in
                ap.withMemoryRebound(to: Double.self, capacity: 3) { a3 in
                    bp.withMemoryRebound(to: Double.self, capacity: 3) { b3 in
                        locus_difference_predicted(p.x, p.y, p.z, a3, b3)
                    }
                }
            }
        }
    }

    /// The predicted difference h (m) and its Jacobian H = ∂h/∂p at p (a zero line of sight where the
    /// tag is on a locator).
    @inline(__always)
    package static func jacobian(at p: Point3, reference a: Point3, locator b: Point3) -> (predicted: Double, gradient: Vector3) {
        var aa = (a.x, a.y, a.z), bb = (b.x, b.y, b.z), h = (0.0, 0.0, 0.0)
        let predicted = withUnsafePointer(to: &aa) { ap in
            withUnsafePointer(to: &bb) { bp in
                withUnsafeMutablePointer(to: &h) { hp in
                    ap.withMemoryRebound(to: Double.self, capacity: 3) { a3 in
                        bp.withMemoryRebound(to: Double.self, capacity: 3) { b3 in
                            hp.withMemoryRebound(to: Double.self, capacity: 3) { h3 in
                                locus_difference_jacobian(p.x, p.y, p.z, a3, b3, h3)
                            }
                        }
                    }
                }
            }
        }
        return (predicted, Vector3(x: h.0, y: h.1, z: h.2))
    }

    /// The whitening coefficient c = (1/√(m+1) − 1)/m of m ≥ 1 differences sharing a reference
    /// (0 for m < 1): (W z)_j = z_j + c Σ_k z_k has independent components of variance σ².
    @inline(__always)
    package static func whitening(count m: Int) -> Double { locus_difference_whitening(Int32(clamping: m)) }

    /// Whether z (m) can be a difference of two locators `baselineMeters` apart: |z| ≤ baseline + margin.
    @inline(__always)
    package static func isPlausible(_ z: Double, baselineMeters: Double, marginMeters: Double) -> Bool {
        locus_difference_plausible(z, baselineMeters, marginMeters) != 0
    }
}
