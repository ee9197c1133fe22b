@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSolvers
import Testing

@Suite("Trilateration solution mapping")
struct TrilaterationSolutionTests {
    @Test("a fix names the rejected locators by address and carries the solution's figures")
    func positionFixNamesRejectedLocators() throws {
        var g = SeededGenerator(seed: 80)
        let s = TrilaterationScenario.planar(&g, count: 8)
        var ranges = s.exactRanges.map { $0 + 0.01 * g.nextGaussian() }
        ranges[2] += 1.5
        ranges[6] += 2.0
        let addresses = (0..<8).map { LocatorAddress(UInt16(0x9D00 + $0)) }
        let solution = try Trilaterator(configuration: s.configuration(sigmaMeters: 0.02))
            .solve(locators: s.locators, rangesMeters: ranges)
        #expect(solution.rejectedMask == 0b0100_0100)
        let fix = solution.positionFix(timeSeconds: 12.5, tag: "T1", floor: "1F") { addresses[$0] }
        #expect(Array(fix.quality.rejected) == [addresses[2], addresses[6]])
        #expect(fix.quality.locatorsUsed == 6)
        #expect(fix.position == solution.position)
        #expect(fix.covariance == solution.covariance)
        #expect(fix.quality.hdop == solution.hdop && fix.quality.vdop == nil)
        #expect(fix.velocity == nil && fix.timeSeconds == 12.5)
        #expect(squaredError(fix.position, s.truth, mode: .planar).squareRoot() <= 0.05)
    }

    @Test("the covariance is inflated by χ²/dof when the residuals exceed σ, never shrunk")
    func covarianceScaling() throws {
        var g = SeededGenerator(seed: 81)
        let s = TrilaterationScenario.planar(&g, count: 8)
        let noisy = s.exactRanges.map { $0 + 0.3 * g.nextGaussian() }
        let formal = try KernelTrilaterator(configuration: s.configuration(robust: false, sigmaMeters: 0.1))
            .solve(locators: s.locators, rangesMeters: s.exactRanges)
        let inflated = try KernelTrilaterator(configuration: s.configuration(robust: false, sigmaMeters: 0.1))
            .solve(locators: s.locators, rangesMeters: noisy)
        let factor = inflated.chiSquare / Double(inflated.degreesOfFreedom)
        #expect(factor > 1)
        let expected = (formal.covariance.xx + formal.covariance.yy) * factor
        #expect(abs(inflated.covariance.xx + inflated.covariance.yy - expected) <= 0.05 * expected)
        #expect(formal.covariance.xx + formal.covariance.yy > 0)
    }
}
