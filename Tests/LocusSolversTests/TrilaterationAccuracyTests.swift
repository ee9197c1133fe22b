@testable import LocusCore
@testable import LocusSolvers
import Testing

@Suite("Trilateration accuracy")
struct TrilaterationAccuracyTests {
    @Test("exact ranges recover the tag to 1e-9 m on both paths", arguments: [TrilaterationMode.planar, .spatial])
    func exactRangesRecoverThePoint(mode: TrilaterationMode) throws {
        var g = SeededGenerator(seed: mode == .planar ? 11 : 12)
        var workspace = TrilaterationWorkspace()
        for _ in 0..<300 {
            let s = mode == .planar ? TrilaterationScenario.planar(&g) : .spatial(&g)
            let ranges = s.exactRanges
            let kernel = try KernelTrilaterator(configuration: s.configuration()).solve(locators: s.locators, rangesMeters: ranges)
            let lapack = try LapackTrilaterator(configuration: s.configuration())
                .solve(locators: s.locators, rangesMeters: ranges, workspace: &workspace)
            for solution in [kernel, lapack] {
                #expect(squaredError(solution.position, s.truth, mode: .spatial).squareRoot() <= 1e-9)
                #expect(solution.rejectedMask == 0)
                #expect(solution.mode == mode)
                #expect(solution.isConverged)
            }
        }
    }

    @Test("Gaussian noise: RMSE within 1.05 × the Cramér–Rao bound", arguments: [TrilaterationMode.planar, .spatial])
    func monteCarloMeetsTheBound(mode: TrilaterationMode) throws {
        let sigma = 0.1
        var g = SeededGenerator(seed: mode == .planar ? 21 : 22)
        var sumSquaredError = 0.0, sumBound = 0.0, fixes = 0
        for _ in 0..<40 {
            let s = mode == .planar ? TrilaterationScenario.planar(&g) : .spatial(&g)
            let solver = KernelTrilaterator(configuration: s.configuration(sigmaMeters: sigma))
            let bound = s.cramerRaoSquared(sigmaMeters: sigma)
            for _ in 0..<60 {
                let ranges = s.exactRanges.map { $0 + sigma * g.nextGaussian() }
                let solution = try solver.solve(locators: s.locators, rangesMeters: ranges)
                sumSquaredError += squaredError(solution.position, s.truth, mode: mode)
                sumBound += bound
                fixes += 1
            }
        }
        let rmse = (sumSquaredError / Double(fixes)).squareRoot()
        let crb = (sumBound / Double(fixes)).squareRoot()
        print("\(mode) clean: RMSE \(rmse / crb) × CRB")
        #expect(fixes == 2400)
        #expect(rmse <= 1.05 * crb, "RMSE \(rmse) m vs CRB \(crb) m")
        #expect(rmse >= 0.8 * crb, "an RMSE far below the bound means the test is broken")
    }

    /// Spatial uses 8 locators: with 6 the weak vertical direction makes one long range from a
    /// low locator indistinguishable from a tag ~2 m higher (even removing the true outliers by
    /// oracle gives 1.33 × the bound there; the robust solver measured 1.92 ×).
    /// The limits hold the accuracy measured before the screened search (planar 1.3208, spatial 1.3858
    /// × the clean bound) to within 1 %: the faster search must not give accuracy away.
    @Test("10 % NLOS ranges: robust RMSE within 1.33 × (planar) / 1.40 × (spatial) the clean bound, plain LS more than 2× worse",
          arguments: [TrilaterationMode.planar, .spatial])
    func nlosIsRejected(mode: TrilaterationMode) throws {
        let sigma = 0.1
        var g = SeededGenerator(seed: mode == .planar ? 31 : 32)
        var robustSum = 0.0, plainSum = 0.0, boundSum = 0.0, fixes = 0
        var rejectedTotal = 0, rejectedCorrectly = 0, outliersTotal = 0
        for _ in 0..<40 {
            let s = mode == .planar ? TrilaterationScenario.planar(&g) : .spatial(&g, count: 8)
            let robust = KernelTrilaterator(configuration: s.configuration(robust: true, sigmaMeters: sigma))
            let plain = KernelTrilaterator(configuration: s.configuration(robust: false, sigmaMeters: sigma))
            let bound = s.cramerRaoSquared(sigmaMeters: sigma)
            for _ in 0..<60 {
                var outlierMask: UInt64 = 0
                var ranges = s.exactRanges.map { $0 + sigma * g.nextGaussian() }
                for i in ranges.indices where g.nextUnit() < 0.1 {
                    ranges[i] += g.uniform(0.3, 2.5)
                    outlierMask |= 1 << UInt64(i)
                }
                let r = try robust.solve(locators: s.locators, rangesMeters: ranges)
                let p = try plain.solve(locators: s.locators, rangesMeters: ranges)
                robustSum += squaredError(r.position, s.truth, mode: mode)
                plainSum += squaredError(p.position, s.truth, mode: mode)
                boundSum += bound
                fixes += 1
                rejectedTotal += r.rejectedCount
                rejectedCorrectly += (r.rejectedMask & outlierMask).nonzeroBitCount
                outliersTotal += outlierMask.nonzeroBitCount
                #expect(p.rejectedMask == 0)
            }
        }
        let robustRMSE = (robustSum / Double(fixes)).squareRoot()
        let plainRMSE = (plainSum / Double(fixes)).squareRoot()
        let crb = (boundSum / Double(fixes)).squareRoot()
        print("\(mode) NLOS: robust RMSE \(robustRMSE / crb) × CRB, plain \(plainRMSE / crb) × CRB, \(rejectedCorrectly)/\(rejectedTotal) rejections hit outliers (\(outliersTotal) outliers)")
        #expect(robustRMSE <= (mode == .planar ? 1.33 : 1.40) * crb, "robust RMSE \(robustRMSE) m vs clean CRB \(crb) m")
        #expect(plainRMSE > 2 * robustRMSE, "plain LS RMSE \(plainRMSE) m vs robust \(robustRMSE) m")
        // Most rejections hit real outliers.
        #expect(Double(rejectedCorrectly) >= 0.8 * Double(rejectedTotal),
                "\(rejectedCorrectly) of \(rejectedTotal) rejections were outliers (\(outliersTotal) outliers)")
    }

    @Test("covariance equals σ²(HᵀH)⁻¹ for exact ranges and DOP matches the oracle")
    func covarianceAndDOPMatchTheOracle() throws {
        var g = SeededGenerator(seed: 41)
        for mode in [TrilaterationMode.planar, .spatial] {
            for _ in 0..<50 {
                let s = mode == .planar ? TrilaterationScenario.planar(&g) : .spatial(&g)
                let solution = try KernelTrilaterator(configuration: s.configuration(sigmaMeters: 0.2))
                    .solve(locators: s.locators, rangesMeters: s.exactRanges)
                let traceOracle = s.cramerRaoSquared(sigmaMeters: 0.2)
                let trace = solution.covariance.xx + solution.covariance.yy + solution.covariance.zz
                #expect(abs(trace - traceOracle) <= 1e-9 * traceOracle)
                #expect(abs(solution.pdop - (traceOracle / 0.04).squareRoot()) <= 1e-9 * solution.pdop)
                let dop = try GeometryQuality.dop(locators: s.locators, at: s.truth, mode: mode, tagHeightMeters: 1.0)
                #expect(abs(dop.pdop - solution.pdop) <= 1e-9 * solution.pdop)
                #expect(abs(dop.hdop - solution.hdop) <= 1e-9 * solution.hdop)
                #expect((mode == .planar) == (solution.vdop == nil))
            }
        }
    }

    @Test("a square of locators at tag height around the tag has HDOP 1")
    func squareHasUnitHDOP() throws {
        let locators = [Point3(x: -5, y: 0, z: 1), Point3(x: 5, y: 0, z: 1), Point3(x: 0, y: -5, z: 1), Point3(x: 0, y: 5, z: 1)]
        let dop = try GeometryQuality.dop(locators: locators, at: Point3(x: 0, y: 0, z: 1), mode: .planar, tagHeightMeters: 1)
        #expect(abs(dop.hdop - 1) <= 1e-12)
        #expect(dop.vdop == nil)
        let grid = GeometryQuality.dopGrid(locators: locators, points: [Point2(x: 0, y: 0), Point2(x: 1, y: 2)],
                                           mode: .planar, tagHeightMeters: 1)
        #expect(grid.count == 2)
        #expect(abs((grid[0]?.hdop ?? 0) - 1) <= 1e-12)
        #expect((grid[1]?.hdop ?? 0) > 0)
    }

    @Test("a tag outside the locators' hull still converges and meets the bound within 10 %", arguments: [1.3, 3.0])
    func outsideTheHull(factor: Double) throws {
        var g = SeededGenerator(seed: 33)
        var sumSquaredError = 0.0, sumBound = 0.0
        for _ in 0..<20 {
            var s = TrilaterationScenario.planar(&g)
            let n = Double(s.locators.count)
            let cx = s.locators.reduce(0) { $0 + $1.x } / n, cy = s.locators.reduce(0) { $0 + $1.y } / n
            let radius = s.locators.map { (($0.x - cx) * ($0.x - cx) + ($0.y - cy) * ($0.y - cy)).squareRoot() }.reduce(0, max)
            let a = g.uniform(0, 2 * Double.pi)
            s.truth = Point3(x: cx + factor * radius * cosine(a), y: cy + factor * radius * sine(a), z: 1)
            let bound = s.cramerRaoSquared(sigmaMeters: 0.1)
            let solver = KernelTrilaterator(configuration: s.configuration(robust: false))
            for _ in 0..<50 {
                let r = try solver.solve(locators: s.locators, rangesMeters: s.exactRanges.map { $0 + 0.1 * g.nextGaussian() })
                #expect(r.isConverged)
                sumSquaredError += squaredError(r.position, s.truth, mode: .planar)
                sumBound += bound
            }
        }
        #expect((sumSquaredError / sumBound).squareRoot() <= 1.1)
    }
}
