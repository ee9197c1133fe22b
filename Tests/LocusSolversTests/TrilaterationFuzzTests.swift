import LocusCore
import LocusSolvers
import Testing

@Suite("Trilateration never lets a NaN out")
struct TrilaterationFuzzTests {
    @Test("random, duplicated, collinear and zero-range inputs give a finite solution or an E4xxx error")
    func randomInputsAreFiniteOrNamedErrors() {
        var g = SeededGenerator(seed: 90)
        let allowed: Set<LocusErrorCode> = [.tooFewRanges, .degenerateGeometry, .invalidRange, .solverDiverged]
        var solved = 0, failed = 0
        for _ in 0..<1500 {
            let n = Int(g.next() % 11)
            var locators: [Point3] = []
            for i in 0..<n {
                switch g.next() % 6 {
                case 0 where i > 0: locators.append(locators[i - 1])                                  // duplicate
                case 1: locators.append(Point3(x: g.uniform(-10, 10), y: 0, z: 3))                  // on a line
                default: locators.append(Point3(x: g.uniform(-10, 10), y: g.uniform(-10, 10), z: g.uniform(0, 4)))
                }
            }
            let ranges = (0..<n).map { _ in g.next() % 8 == 0 ? 0 : g.uniform(0, 20) }
            let mode: TrilaterationMode = [.automatic, .planar, .spatial][Int(g.next() % 3)]
            let config = TrilaterationConfiguration(mode: mode, tagHeightMeters: g.uniform(0, 2))
            for solver in [Trilaterator(configuration: config) as any Trilaterating, LapackTrilaterator(configuration: config)] {
                do {
                    let s = try solver.solve(locators: locators, rangesMeters: ranges)
                    #expect(s.position.isFinite && s.covariance.isFinite)
                    #expect(s.hdop.isFinite && s.pdop.isFinite && s.residualRMSMeters.isFinite && s.chiSquare.isFinite)
                    #expect((s.vdop ?? 0).isFinite)
                    solved += 1
                } catch {
                    #expect(allowed.contains(error.code), "\(error)")
                    failed += 1
                }
            }
        }
        #expect(solved > 300 && failed > 300, "both outcomes exercised: \(solved) solved, \(failed) failed")
    }
}
