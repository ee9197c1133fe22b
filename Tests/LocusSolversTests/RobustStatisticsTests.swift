@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSolvers
import Testing

/// LocusNumerics' robust statistics, quantiles, robust weights and small dense solves: the one home
/// of each (issue #39). Exact values are compared with `==` where the rule picks an order statistic
/// or the arithmetic is exact in binary; otherwise the tolerance is stated.
@Suite("robust statistics")
struct RobustStatisticsTests {
    @Test("median: one value, odd and even counts (mean of the middle two), any order, duplicates")
    func median() {
        #expect(RobustStatistics.median([7.5]) == 7.5)
        #expect(RobustStatistics.median([3, 1, 2]) == 2)
        #expect(RobustStatistics.median([4, 1, 3, 2]) == 2.5)
        #expect(RobustStatistics.median([2, 2, 2, 9]) == 2)
        #expect(RobustStatistics.median([-1, 5]) == 2)
        // ½(a + b) in that order (the callers' bits): two middle values above half the range overflow.
        #expect(RobustStatistics.median([1e308, 1e308]) == .infinity)
        #expect(RobustStatistics.median([1e308, 1e308, 1e308]) == 1e308)
    }

    @Test("median: the quickselect agrees with sort-then-pick bit for bit on random data with ties; in place it only reorders")
    func medianAgreesWithSorting() {
        var rng = SeededGenerator(seed: 39)
        for n in [1, 2, 3, 4, 5, 10, 11, 100, 101, 1000] {
            for _ in 0..<20 {
                // Quantised values give many ties, the hard case for the partition.
                let values = (0..<n).map { _ in (rng.nextGaussian() * 10).rounded() / 4 }
                let sorted = values.sorted()
                let mid = n / 2
                let expected = n % 2 == 1 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid])
                #expect(RobustStatistics.median(values) == expected)
                var copy = values
                let inPlace = copy.withUnsafeMutableBufferPointer { RobustStatistics.median(reordering: $0) }
                #expect(inPlace == expected)
                #expect(copy.sorted() == sorted, "reordered, not changed")
            }
        }
    }

    @Test("upper median: the upper of the two middle values for an even count, the middle for odd")
    func upperMedian() {
        #expect(RobustStatistics.upperMedian(sorted: [4]) == 4)
        #expect(RobustStatistics.upperMedian(sorted: [1, 2, 3]) == 2)
        #expect(RobustStatistics.upperMedian(sorted: [1, 2, 3, 4]) == 3)
        #expect(RobustStatistics.upperMedianAbsoluteDeviation(sorted: [1, 2, 3, 4]) == 1)  // |x − 3| = 2, 1, 0, 1 → 0, 1, 1, 2
        #expect(RobustStatistics.upperMedianAbsoluteDeviation(sorted: [5]) == 0)
    }

    @Test("MAD and 1.4826·MAD: by hand, one value, and σ of Gaussian noise within 3 %")
    func madAndScale() {
        #expect(RobustStatistics.madToSigma == 1.4826)
        // median 3; |x − 3| = 2, 1, 0, 1, 97 → MAD 1 (the outlier does not move it).
        #expect(RobustStatistics.medianAbsoluteDeviation([1, 2, 3, 4, 100]) == 1)
        #expect(RobustStatistics.medianAbsoluteDeviation([1, 2, 3, 4]) == 1)  // median 2.5; 1.5, 0.5, 0.5, 1.5
        #expect(RobustStatistics.robustScale([1, 2, 3, 4, 100]) == 1.4826)
        #expect(RobustStatistics.robustScale([0.25]) == 0)
        var rng = SeededGenerator(seed: 7)
        let values = (0..<20_000).map { _ in 0.3 + 0.07 * rng.nextGaussian() }
        #expect(abs(RobustStatistics.robustScale(values) - 0.07) <= 0.002)
    }

    @Test("NaN policy: a NaN anywhere makes the median, the MAD and the scale NaN")
    func nanPolicy() {
        #expect(RobustStatistics.median([1, .nan, 3]).isNaN)
        #expect(RobustStatistics.median([.nan]).isNaN)
        #expect(RobustStatistics.median([1, 2, 3, .nan]).isNaN)
        #expect(RobustStatistics.medianAbsoluteDeviation([.nan, 1, 2]).isNaN)
        #expect(RobustStatistics.robustScale([1, 2, .nan]).isNaN)
        #expect(RobustWeight.huber(.nan, threshold: 1.345).isNaN)
        #expect(RobustWeight.tukeyBisquare(.nan, threshold: 4.685) == 0)
    }

    @Test("infinities order like numbers")
    func infinities() {
        #expect(RobustStatistics.median([.infinity, 1, 2]) == 2)
        #expect(RobustStatistics.median([-.infinity, .infinity, 0]) == 0)
    }
}

@Suite("quantiles")
struct QuantileTests {
    @Test("empty gives nil; one value is every quantile")
    func edges() {
        #expect(Quantile.nearestRank(sorted: [], 0.5) == nil)
        #expect(Quantile.linear(sorted: [], 0.5) == nil)
        for q in [0.0, 0.01, 0.5, 0.95, 1.0] {
            #expect(Quantile.nearestRank(sorted: [3.5], q) == 3.5)
            #expect(Quantile.linear(sorted: [3.5], q) == 3.5)
        }
    }

    @Test("nearest rank: x₍⌈qN⌉₎, clamped; always one of the values")
    func nearestRank() {
        let s = [1.0, 2, 3, 4]
        #expect(Quantile.nearestRank(sorted: s, 0) == 1)       // ⌈0⌉ = 0 → clamped to rank 1
        #expect(Quantile.nearestRank(sorted: s, 0.25) == 1)    // ⌈1⌉ = 1
        #expect(Quantile.nearestRank(sorted: s, 0.26) == 2)    // ⌈1.04⌉ = 2
        #expect(Quantile.nearestRank(sorted: s, 0.5) == 2)     // even count: the lower middle value
        #expect(Quantile.nearestRank(sorted: s, 0.95) == 4)
        #expect(Quantile.nearestRank(sorted: s, 1) == 4)
        #expect(Quantile.nearestRank(sorted: s, 1.5) == 4)     // clamped
        #expect(Quantile.nearestRank(sorted: [1, 2, 3, 4, 5], 0.5) == 3)
        // The 5 % of 20 values: rank ⌈1⌉ = 1; the 95 %: rank 19.
        let twenty = (1...20).map(Double.init)
        #expect(Quantile.nearestRank(sorted: twenty, 0.05) == 1)
        #expect(Quantile.nearestRank(sorted: twenty, 0.95) == 19)
    }

    @Test("linear (type 7): h = q·(N − 1), interpolated; the ends are the extremes")
    func linear() {
        let s = [1.0, 1.5, 3, 6]
        #expect(Quantile.linear(sorted: s, 0) == 1)
        #expect(Quantile.linear(sorted: s, 1) == 6)
        #expect(abs((Quantile.linear(sorted: s, 0.5) ?? 0) - 2.25) < 1e-15)   // h = 1.5
        #expect(abs((Quantile.linear(sorted: s, 0.95) ?? 0) - 5.55) < 1e-12)  // h = 2.85
        #expect(Quantile.linear(sorted: [1, 2, 3], 0.5) == 2)                   // odd count: the middle value
        #expect(Quantile.linear(sorted: [2, 4], 0.5) == 3)                      // even count: the midpoint
    }
}

@Suite("robust weights")
struct RobustWeightTests {
    @Test("Huber: 1 inside k (boundary included), k/|u| beyond, even in u")
    func huber() {
        let k = 1.345
        #expect(RobustWeight.huber(0, threshold: k) == 1)
        #expect(RobustWeight.huber(k, threshold: k) == 1)
        #expect(RobustWeight.huber(-k, threshold: k) == 1)
        #expect(RobustWeight.huber(2 * k, threshold: k) == 0.5)
        #expect(RobustWeight.huber(-4 * k, threshold: k) == 0.25)
        #expect(RobustWeight.huber(.infinity, threshold: k) == 0)
    }

    @Test("Tukey bisquare: (1 − (u/c)²)² inside c, 0 at and beyond c, even in u")
    func tukey() {
        let c = 4.685
        #expect(RobustWeight.tukeyBisquare(0, threshold: c) == 1)
        #expect(RobustWeight.tukeyBisquare(c, threshold: c) == 0)
        #expect(RobustWeight.tukeyBisquare(-2 * c, threshold: c) == 0)
        #expect(RobustWeight.tukeyBisquare(2, threshold: 4) == 0.5625)  // (1 − ¼)²
        #expect(RobustWeight.tukeyBisquare(-2, threshold: 4) == 0.5625)
        #expect(RobustWeight.tukeyBisquare(.infinity, threshold: c) == 0)
    }
}

@Suite("small dense solves")
struct SmallDenseSolveTests {
    @Test("3×3: A·A⁻¹ = I and A·x = b to 1e-12; 2×2 uses the leading block and zeros the rest")
    func inverseAndSolve() throws {
        let a: [Double] = [4, 1, 2, 1, 3, 0.5, 2, 0.5, 5]
        let inverse = try #require(SmallDenseSolve.inverse(a, order: 3))
        for r in 0..<3 {
            for c in 0..<3 {
                var sum = 0.0
                for k in 0..<3 { sum += a[3 * r + k] * inverse[3 * k + c] }
                #expect(abs(sum - (r == c ? 1 : 0)) < 1e-12)
            }
        }
        let b: [Double] = [1, -2, 3]
        let x = try #require(SmallDenseSolve.solve(a, b, order: 3))
        for r in 0..<3 { #expect(abs(a[3 * r] * x[0] + a[3 * r + 1] * x[1] + a[3 * r + 2] * x[2] - b[r]) < 1e-12) }

        // Leading 2×2 [[4, 1], [1, 3]] (det 11); the third row and column are ignored.
        let two = try #require(SmallDenseSolve.inverse(a, order: 2))
        #expect(abs(two[0] - 3.0 / 11) < 1e-15 && abs(two[1] + 1.0 / 11) < 1e-15)
        #expect(abs(two[3] + 1.0 / 11) < 1e-15 && abs(two[4] - 4.0 / 11) < 1e-15)
        #expect(two[2] == 0 && two[5] == 0 && two[6] == 0 && two[7] == 0 && two[8] == 0)
        let x2 = try #require(SmallDenseSolve.solve(a, [5, 4, 99], order: 2))  // 4x + y = 5, x + 3y = 4
        #expect(abs(x2[0] - 1) < 1e-15 && abs(x2[1] - 1) < 1e-15 && x2[2] == 0)
    }

    @Test("singular blocks give nil")
    func singular() {
        #expect(SmallDenseSolve.inverse([1, 2, 0, 2, 4, 0, 0, 0, 0], order: 2) == nil)
        #expect(SmallDenseSolve.inverse([1, 2, 3, 2, 4, 6, 1, 1, 1], order: 3) == nil)
        #expect(SmallDenseSolve.solve([Double](repeating: 0, count: 9), [1, 1, 1], order: 3) == nil)
    }
}
