import LocusCore
import LocusNumerics
import Testing

/// The symmetric eigen-solves: the 2×2 closed form (LocusCore) checked against LAPACKE `dsyev`
/// (LocusNumerics), and `dsyev`'s eigenpairs themselves.
@Suite("symmetric eigenvalues")
struct SymmetricEigenvalueTests {
    @Test("2×2 closed form: diagonal, rotated, and agreement with LAPACKE dsyev to 1e-12")
    func closedForm() throws {
        let diagonal = SymmetricMatrix3.eigenvalues2x2(xx: 1, xy: 0, yy: 4)
        #expect(diagonal.major == 4 && diagonal.minor == 1)
        let equal = SymmetricMatrix3.eigenvalues2x2(xx: 2, xy: 1, yy: 2)
        #expect(equal.major == 3 && equal.minor == 1)
        var rng = SeededGenerator(seed: 3)
        for _ in 0..<200 {
            let xx = rng.nextUnit() * 10, yy = rng.nextUnit() * 10, xy = (rng.nextUnit() - 0.5) * 10
            let closed = SymmetricMatrix3.eigenvalues2x2(xx: xx, xy: xy, yy: yy)
            let lapack = try SymmetricEigen([xx, xy, xy, yy], size: 2)
            #expect(abs(closed.minor - lapack.values[0]) < 1e-12 * max(1, abs(closed.major)))
            #expect(abs(closed.major - lapack.values[1]) < 1e-12 * max(1, abs(closed.major)))
        }
    }

    @Test("dsyev: 3×3 eigenpairs satisfy A·v = λ·v to 1e-12, ascending, orthonormal")
    func eigenpairs() throws {
        let a: [Double] = [4, 1, 2, 1, 3, 0.5, 2, 0.5, 5]  // symmetric, column-major = row-major
        let e = try SymmetricEigen(a, size: 3)
        #expect(e.values[0] <= e.values[1] && e.values[1] <= e.values[2])
        for k in 0..<3 {
            for r in 0..<3 {
                var av = 0.0
                for c in 0..<3 { av += a[c * 3 + r] * e.vectors[k * 3 + c] }
                #expect(abs(av - e.values[k] * e.vectors[k * 3 + r]) < 1e-12)
            }
            let norm = (0..<3).reduce(0.0) { $0 + e.vectors[k * 3 + $1] * e.vectors[k * 3 + $1] }
            #expect(abs(norm - 1) < 1e-12)
        }
    }
}
