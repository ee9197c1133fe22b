@testable import LocusCore
@testable import LocusSolvers
import Testing

/// The screened rejection search against an exhaustive oracle built from plain least-squares fits:
/// for every set E of at most 3 ranges, the plain fit without E, its χ² + λ|E| when every range of E
/// reads long there, and the minimum over all sets (E = ∅ included) — the penalised optimum that the
/// search before screening found by fitting every subset.
@Suite("Trilateration rejection search")
struct TrilaterationSearchTests {
    /// χ²₀.₉₉₅ for 6 (planar, 8 ranges) and 5 (spatial, 8 ranges) degrees of freedom.
    static func gate(_ mode: TrilaterationMode) -> Double { mode == .planar ? 18.5475841785 : 16.7496023436 }

    struct Oracle {
        var cost: Double
        var position: Point3
    }

    /// The penalised optimum over |E| ≤ 3 (only when the all-ranges χ² fails the gate, as in the solver).
    static func oracle(_ s: TrilaterationScenario, ranges: [Double], lambda: Double) throws -> Oracle {
        let plain = KernelTrilaterator(configuration: s.configuration(robust: false))
        let full = try plain.solve(locators: s.locators, rangesMeters: ranges)
        var best = Oracle(cost: full.chiSquare, position: full.position)
        guard full.chiSquare > gate(s.mode) else { return best }
        let n = s.locators.count
        for mask in 1..<(1 << n) where mask.nonzeroBitCount <= 3 {
            let kept = (0..<n).filter { mask & (1 << $0) == 0 }
            guard let fit = try? plain.solve(locators: kept.map { s.locators[$0] }, rangesMeters: kept.map { ranges[$0] })
            else { continue }
            let readsLong = (0..<n).allSatisfy { j in mask & (1 << j) == 0 || ranges[j] - fit.position.distance(to: s.locators[j]) > 0 }
            let cost = fit.chiSquare + lambda * Double(mask.nonzeroBitCount)
            if readsLong && cost < best.cost { best = Oracle(cost: cost, position: fit.position) }
        }
        return best
    }

    @Test("8 locators, 10 % NLOS: the screened search reaches the exhaustive penalised optimum and its accuracy",
          arguments: [TrilaterationMode.planar, .spatial])
    func screenedSearchMatchesTheExhaustiveOptimum(mode: TrilaterationMode) throws {
        var g = SeededGenerator(seed: mode == .planar ? 71 : 72)
        let lambda = TrilaterationConfiguration.standard.rejectionPenalty
        var fixes = 0, matched = 0, searched = 0
        var robustSum = 0.0, oracleSum = 0.0
        for _ in 0..<25 {
            let s = mode == .planar ? TrilaterationScenario.planar(&g, count: 8) : .spatial(&g, count: 8)
            var configuration = s.configuration(robust: true)
            configuration.guardsAgainstCommonBias = false   // the oracle knows no guard
            let robust = KernelTrilaterator(configuration: configuration)
            for _ in 0..<20 {
                var ranges = s.exactRanges.map { $0 + 0.1 * g.nextGaussian() }
                for i in ranges.indices where g.nextUnit() < 0.1 { ranges[i] += g.uniform(0.3, 2.5) }
                let r = try robust.solve(locators: s.locators, rangesMeters: ranges)
                let o = try Self.oracle(s, ranges: ranges, lambda: lambda)
                let cost = r.chiSquare + lambda * Double(r.rejectedCount)
                fixes += 1
                if r.rejectedCount > 0 || o.cost < r.chiSquare { searched += 1 }
                // Never worse than the oracle's optimum (a greedy level beyond |E| = 3 may do better).
                if cost <= o.cost + 1e-6 * max(1, o.cost) { matched += 1 }
                robustSum += squaredError(r.position, s.truth, mode: mode)
                oracleSum += squaredError(o.position, s.truth, mode: mode)
            }
        }
        let robustRMSE = (robustSum / Double(fixes)).squareRoot(), oracleRMSE = (oracleSum / Double(fixes)).squareRoot()
        print("\(mode) search: \(matched)/\(fixes) fixes at the exhaustive optimum (\(searched) searched); RMSE \(robustRMSE) m vs exhaustive \(oracleRMSE) m")
        #expect(searched >= fixes / 3, "the NLOS cases must exercise the search")
        if mode == .planar {
            #expect(matched == fixes)
            #expect(robustRMSE <= oracleRMSE * (1 + 1e-9))
        } else {
            // Spatial: the weak vertical makes the one-step linearisation poor for a few multi-outlier
            // fixes, where several sets explain the ranges almost equally well.
            #expect(Double(matched) >= 0.98 * Double(fixes))
            #expect(robustRMSE <= oracleRMSE * 1.02)
        }
    }
}
