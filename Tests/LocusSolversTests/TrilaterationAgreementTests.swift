@testable import LocusCore
@testable import LocusSolvers
import Testing

/// The C search (the one implementation) against the LAPACKE reference oracle (`LapackTrilaterator`,
/// this target).
@Suite("Kernel and LAPACKE paths agree")
struct TrilaterationAgreementTests {
    @Test("both paths reach the same optimum to 1e-9 m and reject the same ranges",
          arguments: [TrilaterationMode.planar, .spatial], [0.0, 0.15])
    func pathsAgree(mode: TrilaterationMode, nlosProbability: Double) throws {
        var g = SeededGenerator(seed: 50 + (mode == .planar ? 0 : 1) + (nlosProbability > 0 ? 2 : 0))
        var workspace = TrilaterationWorkspace(capacity: 8)
        var rejectionsSeen = 0
        for _ in 0..<250 {
            let s = mode == .planar ? TrilaterationScenario.planar(&g) : .spatial(&g)
            var ranges = s.exactRanges.map { $0 + 0.1 * g.nextGaussian() }
            for i in ranges.indices where g.nextUnit() < nlosProbability { ranges[i] += g.uniform(0.3, 2.5) }
            let kernel = try KernelTrilaterator(configuration: s.configuration()).solve(locators: s.locators, rangesMeters: ranges)
            let lapack = try LapackTrilaterator(configuration: s.configuration())
                .solve(locators: s.locators, rangesMeters: ranges, workspace: &workspace)
            #expect(squaredError(kernel.position, lapack.position, mode: .spatial).squareRoot() <= 1e-9)
            #expect(kernel.rejectedMask == lapack.rejectedMask)
            #expect(kernel.locatorsUsed == lapack.locatorsUsed)
            #expect(kernel.mode == lapack.mode)
            #expect(abs(kernel.chiSquare - lapack.chiSquare) <= 1e-7 * max(1, kernel.chiSquare))
            #expect(abs(kernel.hdop - lapack.hdop) <= 1e-9 * kernel.hdop)
            let c1 = kernel.covariance, c2 = lapack.covariance
            let scale = c1.xx + c1.yy + c1.zz
            for (a, b) in [(c1.xx, c2.xx), (c1.xy, c2.xy), (c1.yy, c2.yy), (c1.xz, c2.xz), (c1.yz, c2.yz), (c1.zz, c2.zz)] {
                #expect(abs(a - b) <= 1e-7 * scale)
            }
            rejectionsSeen += kernel.rejectedCount
        }
        if nlosProbability > 0 {
            #expect(rejectionsSeen >= 50, "the outlier cases must exercise rejection")
        } else {
            #expect(rejectionsSeen <= 5, "clean data: the 99.5 % gate lets few fixes into the search")
        }
    }

    @Test("both paths agree on larger layouts where the search turns greedy", arguments: [16, 24, 40, 65, 100])
    func pathsAgreeOnGreedyLevels(count: Int) throws {
        var g = SeededGenerator(seed: UInt64(55 + count))
        var workspace = TrilaterationWorkspace()
        var rejections = 0
        for trial in 0..<60 {
            let s = trial % 2 == 0 ? TrilaterationScenario.planar(&g, count: count) : .spatial(&g, count: count)
            var ranges = s.exactRanges.map { $0 + 0.1 * g.nextGaussian() }
            for i in ranges.indices where g.nextUnit() < 0.2 { ranges[i] += g.uniform(0.3, 2.5) }
            let kernel = try KernelTrilaterator(configuration: s.configuration())
                .solve(locators: s.locators, rangesMeters: ranges, workspace: &workspace)
            let kernelActive = workspace.isActive
            var oracleWorkspace = LapackOracleWorkspace()
            let lapack = try s.locators.withUnsafeBufferPointer { lp in
                try ranges.withUnsafeBufferPointer { rp in
                    try LapackTrilaterator(configuration: s.configuration())
                        .solve(locators: lp, rangesMeters: rp, workspace: &oracleWorkspace)
                }
            }
            #expect(squaredError(kernel.position, lapack.position, mode: .spatial).squareRoot() <= 1e-9)
            #expect(kernel.rejectedMask == lapack.rejectedMask)
            #expect(kernel.rejectedCount == lapack.rejectedCount)
            #expect(abs(kernel.chiSquare - lapack.chiSquare) <= 1e-7 * max(1, kernel.chiSquare))
            if count > KernelTrilaterator.maximumLocators {   // beyond 64 the flags name every rejection
                #expect(Array(kernelActive.prefix(count)) == Array(oracleWorkspace.isActive.prefix(count)))
            }
            rejections += kernel.rejectedCount
        }
        // K = 8 rejections at most per fix (TrilaterationConfiguration.maximumRejections).
        #expect(rejections >= 60 * min(count / 10, 8), "20 % outliers must exercise the greedy levels")
    }

    @Test("the C search solves more than 64 locators in the workspace's scratch and matches exact ranges")
    func lapackHandlesManyLocators() throws {
        var g = SeededGenerator(seed: 60)
        var locators: [Point3] = []
        for i in 0..<100 {
            let a = Double(i) / 100 * 2 * Double.pi
            locators.append(Point3(x: 20 * cosine(a), y: 15 * sine(a), z: g.uniform(2.5, 3)))
        }
        let truth = Point3(x: 1.5, y: -2, z: 1.2)
        var ranges = locators.map { $0.distance(to: truth) }
        let config = TrilaterationConfiguration(mode: .planar, tagHeightMeters: 1.2)
        let exact = try Trilaterator(configuration: config).solve(locators: locators, rangesMeters: ranges)
        #expect(squaredError(exact.position, truth, mode: .planar).squareRoot() <= 1e-9)
        #expect(exact.locatorsUsed == 100)
        // Three long ranges among 100 are found and rejected (greedy levels beyond C(n, k) > 1000).
        for i in [3, 40, 60] { ranges[i] += 2.0 }
        let robust = try Trilaterator(configuration: config).solve(locators: locators, rangesMeters: ranges)
        #expect(robust.rejectedCount == 3)
        #expect(robust.isRejected(index: 3) && robust.isRejected(index: 40) && robust.isRejected(index: 60))
        #expect(squaredError(robust.position, truth, mode: .planar).squareRoot() <= 1e-9)
        // Beyond index 63 the workspace's flags tell (the mask covers indices below 64).
        var workspace = TrilaterationWorkspace()
        ranges[60] -= 2.0
        ranges[90] += 2.0
        let far = try Trilaterator(configuration: config).solve(locators: locators, rangesMeters: ranges, workspace: &workspace)
        #expect(far.rejectedCount == 3)
        #expect(!workspace.isActive[90] && !workspace.isActive[3] && !workspace.isActive[40])
        #expect(squaredError(far.position, truth, mode: .planar).squareRoot() <= 1e-9)
        let oracle = try LapackTrilaterator(configuration: config).solve(locators: locators, rangesMeters: ranges)
        #expect(squaredError(far.position, oracle.position, mode: .spatial).squareRoot() <= 1e-9)
    }
}
