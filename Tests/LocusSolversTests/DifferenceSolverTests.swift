@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSolvers
import Testing

@Suite("Difference solver")
struct DifferenceSolverTests {
    @Test("noise-free uplink differences recover the tag to 1e-9 m", arguments: [TrilaterationMode.planar, .spatial])
    func exactUplink(mode: TrilaterationMode) throws {
        var g = SeededGenerator(seed: mode == .planar ? 401 : 402)
        var workspace = DifferenceWorkspace()
        for trial in 0..<200 {
            let s = DifferenceScenario.hall(&g, mode: mode)
            let truth = s.point(&g)
            let pairs = s.uplink(truth: truth, reference: trial % s.locators.count,
                                 arrivalErrors: [Double](repeating: 0, count: s.locators.count))
            let solution = try DifferenceSolver(configuration: s.configuration())
                .solve(locators: s.locators, pairs: pairs, workspace: &workspace)
            #expect(differenceSquaredError(solution.position, truth, mode: .spatial).squareRoot() <= 1e-9)
            #expect(solution.mode == mode)
            #expect(solution.rejectedMask == 0 && solution.rejectedCount == 0)
            #expect(solution.locatorsUsed == 8)
            #expect(solution.degreesOfFreedom == 7 - (mode == .planar ? 2 : 3))
            #expect(solution.isConverged)
        }
    }

    @Test("noise-free downlink pairs (random pairs, each its own group) recover the tag to 1e-9 m",
          arguments: [TrilaterationMode.planar, .spatial])
    func exactRandomPairs(mode: TrilaterationMode) throws {
        var g = SeededGenerator(seed: mode == .planar ? 403 : 404)
        var workspace = DifferenceWorkspace()
        var solved = 0
        for _ in 0..<200 {
            let s = DifferenceScenario.hall(&g, mode: mode)
            let truth = s.point(&g)
            let pairs = s.randomPairs(truth: truth, count: 16, sigmaMeters: 0, &g)
            let solution: TrilaterationSolution
            do {
                solution = try DifferenceSolver(configuration: s.configuration())
                    .solve(locators: s.locators, pairs: pairs, workspace: &workspace)
            } catch {
                // 16 random pairs can leave a locator out, never the geometry undetermined here.
                Issue.record("unexpected \(error)")
                continue
            }
            #expect(differenceSquaredError(solution.position, truth, mode: .spatial).squareRoot() <= 1e-9)
            #expect(solution.degreesOfFreedom == 16 - (mode == .planar ? 2 : 3))
            solved += 1
        }
        #expect(solved == 200)
    }

    @Test("the pseudo-range form equals generalised least squares on Σ = σ²(I + 11ᵀ) built densely",
          arguments: [TrilaterationMode.planar, .spatial])
    func equalsDenseGLS(mode: TrilaterationMode) throws {
        var g = SeededGenerator(seed: mode == .planar ? 405 : 406)
        let sigma = 0.1
        for trial in 0..<60 {
            let s = DifferenceScenario.hall(&g, mode: mode)
            let truth = s.point(&g)
            // Two uplink blinks with different references, then four downlink pairs.
            let errors1 = (0..<8).map { _ in sigma * g.nextGaussian() }
            let errors2 = (0..<8).map { _ in sigma * g.nextGaussian() }
            var pairs = s.uplink(truth: truth, reference: trial % 8, arrivalErrors: errors1, timeSeconds: 0)
            pairs += s.uplink(truth: truth, reference: (trial + 3) % 8, arrivalErrors: errors2, timeSeconds: 0.1)
            pairs += s.randomPairs(truth: truth, count: 4, sigmaMeters: sigma, &g)
            let solution = try DifferenceSolver(configuration: s.configuration(robust: false, sigmaMeters: sigma))
                .solve(locators: s.locators, pairs: pairs)
            let oracle = try #require(DenseDifferenceGLS.solve(locators: s.locators, pairs: pairs, planar: mode == .planar,
                                                               tagHeightMeters: s.tagHeightMeters, start: truth,
                                                               sigmaMeters: sigma))
            #expect(differenceSquaredError(solution.position, oracle.position, mode: .spatial).squareRoot() <= 1e-8)
            // The covariance is the formal one times max(1, χ²/dof).
            let inflation = max(1, solution.chiSquare / Double(solution.degreesOfFreedom))
            let c = solution.covariance
            let o = oracle.covariance
            #expect(abs(c.xx / inflation - o[0]) <= 1e-6 * o[0])
            #expect(abs(c.yy / inflation - o[4]) <= 1e-6 * o[4])
            #expect(abs(c.xy / inflation - o[1]) <= 1e-6 * (o[0] * o[4]).squareRoot())
            if mode == .spatial { #expect(abs(c.zz / inflation - o[8]) <= 1e-6 * o[8]) }
        }
    }

    @Test("too few differences: E4001 (3 locators planar, 4 spatial, none, two blinks of the same 3 locators)")
    func tooFew() {
        let square = [Point3(x: 0, y: 0, z: 3), Point3(x: 10, y: 0, z: 3), Point3(x: 10, y: 8, z: 3),
                      Point3(x: 0, y: 8, z: 0.5), Point3(x: 5, y: 4, z: 0.3)]
        let truth = Point3(x: 4, y: 3, z: 1)
        func blink(_ n: Int) -> [DifferencePair] {
            let d = square.prefix(n).map { $0.distance(to: truth) - square[0].distance(to: truth) }
            return DifferencePair.uplink(count: n, reference: 0, differencesMeters: d)
        }
        let planar = DifferenceSolver(configuration: TrilaterationConfiguration(mode: .planar, tagHeightMeters: 1))
        let spatial = DifferenceSolver(configuration: TrilaterationConfiguration(mode: .spatial))
        #expect(throws: LocusError.self) { try planar.solve(locators: square, pairs: blink(3)) }
        #expect((try? planar.solve(locators: square, pairs: blink(4))) != nil)
        #expect(throws: LocusError.self) { try spatial.solve(locators: square, pairs: blink(4)) }
        #expect(differenceErrorCode { try planar.solve(locators: square, pairs: blink(3)) } == .tooFewRanges)
        #expect(differenceErrorCode { try spatial.solve(locators: square, pairs: blink(4)) } == .tooFewRanges)
        #expect(differenceErrorCode { try planar.solve(locators: square, pairs: []) } == .tooFewRanges)
        // 4 differences from 3 locators (two blinks): still too few locators.
        let twice = blink(3) + blink(3).map { DifferencePair(reference: Int($0.reference), locator: Int($0.locator),
                                                             differenceMeters: $0.differenceMeters, timeSeconds: 1) }
        #expect(differenceErrorCode { try planar.solve(locators: square, pairs: twice) } == .tooFewRanges)
    }

    @Test("collinear locators (planar) and coplanar ones (spatial): E4002")
    func degenerate() {
        let line = (0..<6).map { Point3(x: Double($0) * 3, y: 0, z: 3) }
        let truth = Point3(x: 7, y: 4, z: 1)
        let d = line.map { $0.distance(to: truth) - line[0].distance(to: truth) }
        let pairs = DifferencePair.uplink(count: 6, reference: 0, differencesMeters: d)
        let planar = DifferenceSolver(configuration: TrilaterationConfiguration(mode: .planar, tagHeightMeters: 3))
        #expect(differenceErrorCode { try planar.solve(locators: line, pairs: pairs) } == .degenerateGeometry)
        let flat = [Point3(x: 0, y: 0, z: 3), Point3(x: 10, y: 0, z: 3), Point3(x: 10, y: 8, z: 3),
                    Point3(x: 0, y: 8, z: 3), Point3(x: 5, y: 9, z: 3), Point3(x: 5, y: -1, z: 3)]
        let df = flat.map { $0.distance(to: truth) - flat[0].distance(to: truth) }
        let spatial = DifferenceSolver(configuration: TrilaterationConfiguration(mode: .spatial))
        #expect(differenceErrorCode { try spatial.solve(locators: flat, pairs: DifferencePair.uplink(count: 6, reference: 0, differencesMeters: df)) }
                == .degenerateGeometry)
    }

    @Test("a non-finite difference is E4003; bad pairs, locators and settings are E1003")
    func invalidInput() {
        var g = SeededGenerator(seed: 407)
        let s = DifferenceScenario.hall(&g, mode: .planar)
        let truth = s.point(&g)
        var pairs = s.uplink(truth: truth, reference: 0, arrivalErrors: [Double](repeating: 0, count: 8))
        let solver = DifferenceSolver(configuration: s.configuration())
        for bad in [Double.nan, .infinity, -.infinity] {
            var p = pairs
            p[3].differenceMeters = bad
            #expect(differenceErrorCode { try solver.solve(locators: s.locators, pairs: p) } == .invalidRange)
        }
        pairs[2].locator = 8
        #expect(differenceErrorCode { try solver.solve(locators: s.locators, pairs: pairs) } == .invalidArgument)
        pairs[2].locator = 0
        #expect(differenceErrorCode { try solver.solve(locators: s.locators, pairs: pairs) } == .invalidArgument)
        pairs[2].locator = 3
        var locators = s.locators
        locators[1].x = .nan
        #expect(differenceErrorCode { try solver.solve(locators: locators, pairs: pairs) } == .invalidArgument)
        var badSettings = s.configuration()
        badSettings.sigmaMeters = 0
        #expect(differenceErrorCode { try DifferenceSolver(configuration: badSettings).solve(locators: s.locators, pairs: pairs) } == .invalidArgument)
    }

    @Test("hostile inputs never produce a NaN: a finite solution or a named error")
    func neverNaN() {
        var g = SeededGenerator(seed: 408)
        var workspace = DifferenceWorkspace()
        var solved = 0, failed = 0
        for trial in 0..<600 {
            let n = 4 + Int(g.next() % 9)
            var locators = (0..<n).map { _ in Point3(x: g.uniform(-20, 20), y: g.uniform(-20, 20), z: g.uniform(0, 4)) }
            if trial % 7 == 0 { locators[1] = locators[0] }                    // coincident
            if trial % 11 == 0 { for i in locators.indices { locators[i].y = 2 * locators[i].x } }   // collinear
            let truth = Point3(x: g.uniform(-40, 40), y: g.uniform(-40, 40), z: g.uniform(-2, 6))
            var errors = (0..<n).map { _ in g.nextUnit() < 0.3 ? g.uniform(-30, 60) : 0.1 * g.nextGaussian() }
            if trial % 13 == 0 { errors = errors.map { _ in g.uniform(-1e6, 1e6) } }
            let arrivals = (0..<n).map { locators[$0].distance(to: truth) + errors[$0] }
            var pairs: [DifferencePair] = []
            let reference = Int(g.next() % UInt64(n))
            for i in 0..<n where i != reference {
                pairs.append(DifferencePair(reference: reference, locator: i, differenceMeters: arrivals[i] - arrivals[reference], timeSeconds: 0))
            }
            let mode: TrilaterationMode = [.planar, .spatial, .automatic][trial % 3]
            let solver = DifferenceSolver(configuration: TrilaterationConfiguration(mode: mode, tagHeightMeters: 1,
                                                                                    isRobust: trial % 2 == 0))
            do {
                let s = try solver.solve(locators: locators.span, pairs: pairs.span, workspace: &workspace)
                #expect(s.position.isFinite && s.covariance.isFinite && s.hdop.isFinite && s.pdop.isFinite)
                #expect(s.chiSquare.isFinite && s.residualRMSMeters.isFinite)
                solved += 1
            } catch {
                failed += 1
            }
        }
        #expect(solved > 300)
        #expect(solved + failed == 600)
    }

    @Test("an NLOS reference is rejected and its group re-referenced to the other arrivals")
    func rejectsTheReference() throws {
        var g = SeededGenerator(seed: 409)
        var rejectedReference = 0
        var sumSquared = 0.0
        for trial in 0..<100 {
            let s = DifferenceScenario.hall(&g, mode: .planar)
            let truth = s.point(&g)
            let reference = trial % 8
            var errors = (0..<8).map { _ in 0.1 * g.nextGaussian() }
            errors[reference] += trial % 2 == 0 ? g.uniform(1, 5) : g.uniform(20, 40)
            let pairs = s.uplink(truth: truth, reference: reference, arrivalErrors: errors)
            let solution = try DifferenceSolver(configuration: s.configuration()).solve(locators: s.locators, pairs: pairs)
            if solution.rejectedMask == 1 << UInt64(reference) { rejectedReference += 1 }
            #expect(solution.locatorsUsed == 8 - solution.rejectedCount)
            sumSquared += differenceSquaredError(solution.position, truth, mode: .planar)
        }
        print("NLOS reference: rejected alone in \(rejectedReference) of 100, RMSE \((sumSquared / 100).squareRoot()) m")
        #expect(rejectedReference >= 95)
        #expect((sumSquared / 100).squareRoot() < 0.2)
    }

    @Test("a reused workspace: the same input gives the same bits")
    func deterministic() throws {
        var g = SeededGenerator(seed: 410)
        let s = DifferenceScenario.hall(&g, mode: .spatial)
        let truth = s.point(&g)
        var errors = (0..<8).map { _ in 0.1 * g.nextGaussian() }
        errors[5] += 3
        let pairs = s.uplink(truth: truth, reference: 2, arrivalErrors: errors)
        var workspace = DifferenceWorkspace()
        let solver = DifferenceSolver(configuration: s.configuration())
        let first = try solver.solve(locators: s.locators.span, pairs: pairs.span, workspace: &workspace)
        let bigger = s.uplink(truth: truth, reference: 0, arrivalErrors: errors) + pairs.map {
            DifferencePair(reference: Int($0.reference), locator: Int($0.locator), differenceMeters: $0.differenceMeters, timeSeconds: 1)
        }
        _ = try solver.solve(locators: s.locators.span, pairs: bigger.span, workspace: &workspace)
        let again = try solver.solve(locators: s.locators.span, pairs: pairs.span, workspace: &workspace)
        #expect(first == again)
        #expect(first.position.x.bitPattern == again.position.x.bitPattern)
        #expect(first.rejectedMask == 1 << 5)
    }
}

/// The error code `body` throws, nil when it returns.
func differenceErrorCode(_ body: () throws -> TrilaterationSolution) -> LocusErrorCode? {
    do {
        _ = try body()
        return nil
    } catch {
        return (error as? LocusError)?.code
    }
}
