internal import CLocusKernels
import LocusCore

extension DifferenceModel {
    /// The normal equations of one Gauss–Newton step of the range-difference fit at p, per unit σ²
    /// (σ the per-arrival noise), over an epoch's `pairs` whose locators are `locators`, leaving out
    /// every arrival of a locator i with `excluded[i] ≠ 0`:
    ///
    ///   N = Σ_groups [Σ vᵢvᵢᵀ − (Σ vᵢ)(Σ vᵢ)ᵀ/(m+1)],  b = Σ_groups [Σ vᵢeᵢ − (Σ vᵢ)(Σ eᵢ)/(m+1)],
    ///   c = Σ_groups [Σ eᵢ² − (Σ eᵢ)²/(m+1)]  (χ²·σ², m²),
    ///
    /// vᵢ = ∂(ρᵢ − ρ_A)/∂p and eᵢ = zᵢ − (ρᵢ − ρ_A) one group's rows and residuals (`DifferencePair`
    /// groups; the reference's own row 0), m + 1 its arrivals in the fit: generalised least squares
    /// with Σ = σ²(I + 11ᵀ), re-referenced when the reference is left out; groups of fewer than 2
    /// arrivals add nothing. Planar (p.z the tag height): the z entries are 0. The C kernel
    /// `locus_difference_linearize` forms the sums with this model's functions inlined. O(pairs), no
    /// allocation.
    /// - Returns: N (m⁰), b (m) and c (m²).
    package static func normalEquations(at p: Point3, locators: Span<Point3>, pairs: Span<DifferencePair>,
                                        excluded: Span<Int32>, planar: Bool)
        -> (information: SymmetricMatrix3, gradient: Vector3, residualSquares: Double) {
        precondition(DifferencePair.layoutMatchesKernel, "DifferencePair or Point3 is not laid out as the C kernel reads it")
        precondition(excluded.count >= locators.count, "one exclusion flag per locator")
        var raw = locus_difference_normal()
        locators.withUnsafeBufferPointer { xyz in
            pairs.withUnsafeBufferPointer { pairBuffer in
                excluded.withUnsafeBufferPointer { flags in
                    UnsafeRawPointer(xyz.baseAddress).map { xyzRaw in
                        let coordinates = xyzRaw.assumingMemoryBound(to: Double.self)
                        let kernelPairs = UnsafeRawPointer(pairBuffer.baseAddress)?.assumingMemoryBound(to: locus_difference_pair.self)
                        locus_difference_linearize(coordinates, kernelPairs, Int32(truncatingIfNeeded: pairBuffer.count),
                                                   flags.baseAddress, planar ? 1 : 0, p.x, p.y, p.z, &raw)
                    }
                }
            }
        }
        return (SymmetricMatrix3(xx: raw.n.0, xy: raw.n.1, xz: raw.n.2, yy: raw.n.3, yz: raw.n.4, zz: raw.n.5),
                Vector3(x: raw.b.0, y: raw.b.1, z: raw.b.2), raw.c)
    }
}

extension DifferencePair {
    /// Whether `DifferencePair` and `Point3` are laid out as `locus_difference_pair` and three packed
    /// doubles, as `DifferenceModel.normalEquations` hands them to the C kernel.
    static let layoutMatchesKernel: Bool =
        MemoryLayout<DifferencePair>.stride == MemoryLayout<locus_difference_pair>.stride
        && MemoryLayout<DifferencePair>.offset(of: \DifferencePair.reference) == 0
        && MemoryLayout<DifferencePair>.offset(of: \DifferencePair.locator) == 4
        && MemoryLayout<DifferencePair>.offset(of: \DifferencePair.differenceMeters) == 8
        && MemoryLayout<DifferencePair>.offset(of: \DifferencePair.timeSeconds) == 16
        && MemoryLayout<Point3>.stride == 3 * MemoryLayout<Double>.stride
        && MemoryLayout<Point3>.offset(of: \Point3.x) == 0 && MemoryLayout<Point3>.offset(of: \Point3.z) == 16
}
