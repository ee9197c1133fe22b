import Glibc
import LocusCore
@testable import LocusNumerics
import Testing

/// OpenBLAS splits some routines differently with more threads and their last bits change (dsyev at
/// every size, dgels on tall problems): Locus runs those on one thread whatever the process's setting
/// (`LapackThreads.onOneThread`), so every face gives the same bytes on any machine.
@Suite("LAPACK results do not depend on OpenBLAS's thread count", .serialized)
struct LapackThreadDeterminismTests {
    /// Runs `body` with the process's OpenBLAS on `threads` threads (skipped when the BLAS is not OpenBLAS).
    static func withOpenBLASThreads<T>(_ threads: Int32, _ body: () throws -> T) rethrows -> T? {
        let process = UnsafeMutableRawPointer(bitPattern: 0)
        guard let getSymbol = dlsym(process, "openblas_get_num_threads"), let setSymbol = dlsym(process, "openblas_set_num_threads") else {
            return nil
        }
        let get = unsafeBitCast(getSymbol, to: (@convention(c) () -> Int32).self)
        let set = unsafeBitCast(setSymbol, to: (@convention(c) (Int32) -> Void).self)
        let before = get()
        set(threads)
        defer { set(before) }
        #expect(get() == threads)
        return try body()
    }

    /// A seeded m×n matrix, column-major, and its Gram matrix AᵀA.
    static func problem(rows m: Int, columns n: Int, seed: UInt64) -> (a: [Double], gram: [Double], b: [Double]) {
        var g = seed
        func next() -> Double {
            g = g &* 6364136223846793005 &+ 1442695040888963407
            return Double(g >> 11) / Double(1 << 53) - 0.5
        }
        let a = (0..<(m * n)).map { _ in next() }, b = (0..<m).map { _ in next() }
        var gram = [Double](repeating: 0, count: n * n)
        for c in 0..<n { for r in 0..<n { var s = 0.0; for k in 0..<m { s += a[r * m + k] * a[c * m + k] }; gram[c * n + r] = s } }
        return (a, gram, b)
    }

    @Test("SymmetricEigen (dsyev) gives the same bits on one and on four OpenBLAS threads", arguments: [3, 8, 24, 40])
    func eigen(n: Int) throws {
        let s = Self.problem(rows: 3 * n, columns: n, seed: UInt64(n)).gram
        guard let one = try Self.withOpenBLASThreads(1, { try SymmetricEigen(s, size: n) }),
              let four = try Self.withOpenBLASThreads(4, { try SymmetricEigen(s, size: n) }) else { return }
        #expect(one.values == four.values && one.vectors == four.vectors)
    }

    @Test("CalibrationLeastSquares (dgels) gives the same bits on one and on four OpenBLAS threads, tall problems too")
    func leastSquares() throws {
        for (m, n) in [(400, 8), (5000, 16), (6000, 40)] {
            let p = Self.problem(rows: m, columns: n, seed: UInt64(m + n))
            func solve() throws -> [Double] {
                var a = p.a, b = p.b
                var work = [Double](repeating: 0, count: CalibrationLeastSquares.workspaceCount(rows: m, columns: n))
                try CalibrationLeastSquares.solve(a: &a, rows: m, columns: n, b: &b, work: &work)
                return Array(b.prefix(n))
            }
            guard let one = try Self.withOpenBLASThreads(1, solve), let four = try Self.withOpenBLASThreads(4, solve) else { return }
            #expect(one == four, "\(m) × \(n)")
        }
    }

    @Test("The process's own OpenBLAS thread count is put back after a guarded call")
    func restoresThreads() throws {
        let s = Self.problem(rows: 30, columns: 10, seed: 7).gram
        _ = try Self.withOpenBLASThreads(3) {
            _ = try SymmetricEigen(s, size: 10)
            let get = unsafeBitCast(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "openblas_get_num_threads"),
                                    to: (@convention(c) () -> Int32).self)
            #expect(get() == 3)
        }
    }
}
