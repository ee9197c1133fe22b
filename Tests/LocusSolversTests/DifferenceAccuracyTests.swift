@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSolvers
import Testing

/// Monte Carlo accuracy of `DifferenceSolver` against the Cramér–Rao bound σ² trace F⁻¹ of
/// `DifferenceGeometry` (σ = 0.1 m per arrival), in the 20 × 15 m hall of `DifferenceScenario`:
/// 200 tag points (a new hall every 10) × 50 noise draws per mode, one uplink blink per fix with a
/// random reference.
@Suite("Difference solver accuracy")
struct DifferenceAccuracyTests {
    static let points = 200
    static let draws = 50

    @Test("clean arrivals: RMSE within 1.05 × the Cramér–Rao bound", arguments: [TrilaterationMode.planar, .spatial])
    func meetsTheBound(mode: TrilaterationMode) throws {
        let sigma = 0.1
        var g = SeededGenerator(seed: mode == .planar ? 501 : 502)
        var workspace = DifferenceWorkspace()
        var sumSquaredError = 0.0, sumBound = 0.0, fixes = 0
        var s = DifferenceScenario.hall(&g, mode: mode)
        for point in 0..<Self.points {
            if point % 10 == 0 { s = DifferenceScenario.hall(&g, mode: mode) }
            let solver = DifferenceSolver(configuration: s.configuration(sigmaMeters: sigma))
            let truth = s.point(&g)
            let reference = Int(g.next() % 8)
            for _ in 0..<Self.draws {
                let errors = (0..<8).map { _ in sigma * g.nextGaussian() }
                let pairs = s.uplink(truth: truth, reference: reference, arrivalErrors: errors)
                let solution = try solver.solve(locators: s.locators.span, pairs: pairs.span, workspace: &workspace)
                sumSquaredError += differenceSquaredError(solution.position, truth, mode: mode)
                if fixes % Self.draws == 0 {
                    sumBound += Double(Self.draws) * s.cramerRaoSquared(pairs: pairs, truth: truth, sigmaMeters: sigma)
                }
                fixes += 1
            }
        }
        let rmse = (sumSquaredError / Double(fixes)).squareRoot()
        let crb = (sumBound / Double(fixes)).squareRoot()
        print("TDoA \(mode) clean: RMSE \(rmse) m, CRB \(crb) m, ratio \(rmse / crb)")
        #expect(fixes == Self.points * Self.draws)
        #expect(rmse <= 1.05 * crb, "RMSE \(rmse) m vs CRB \(crb) m")
        #expect(rmse >= 0.9 * crb, "an RMSE far below the bound means the test is broken")
    }

    /// 10 % of arrivals NLOS: +U(0.5, 5) m, one in ten of them +U(20, 40) m (the Crazyflie users'
    /// report: ~0.5 m, 3–5 m and > 20 m outliers), the reference's arrival as likely as any other —
    /// harder than the "10 % NLOS differences" (the next test). Planar 1.42 × the clean bound;
    /// spatial 1.58 ×, with 4 of 5,000 fixes refused (a fit the search cannot bring back inside the
    /// site is the second solution, `DifferenceSolver`: no fix rather than one metres under the floor;
    /// before that refusal one such fix, 23 m off, made 1.84 ×). Held at 1.5 × planar, 1.65 × spatial,
    /// ≤ 5 refused.
    @Test("10 % NLOS arrivals: robust RMSE within 1.5 × (planar) / 1.65 × (spatial) the clean bound, plain least squares far worse",
          arguments: [TrilaterationMode.planar, .spatial])
    func nlosIsRejected(mode: TrilaterationMode) throws {
        let sigma = 0.1
        var g = SeededGenerator(seed: mode == .planar ? 503 : 504)
        var workspace = DifferenceWorkspace()
        var robustSum = 0.0, plainSum = 0.0, boundSum = 0.0, fixes = 0
        var outliers = 0, rejectedCorrectly = 0, rejected = 0, plainFailures = 0, refused = 0
        var s = DifferenceScenario.hall(&g, mode: mode)
        for point in 0..<Self.points {
            if point % 10 == 0 { s = DifferenceScenario.hall(&g, mode: mode) }
            let robust = DifferenceSolver(configuration: s.configuration(robust: true, sigmaMeters: sigma))
            let plain = DifferenceSolver(configuration: s.configuration(robust: false, sigmaMeters: sigma))
            let truth = s.point(&g)
            let reference = Int(g.next() % 8)
            for _ in 0..<(Self.draws / 2) {
                let (errors, mask) = DifferenceScenario.nlosArrivalErrors(&g, sigmaMeters: sigma)
                let pairs = s.uplink(truth: truth, reference: reference, arrivalErrors: errors)
                // A spatial fit left outside the site (the second solution) is refused: counted.
                guard let r = try? robust.solve(locators: s.locators.span, pairs: pairs.span, workspace: &workspace) else {
                    refused += 1
                    continue
                }
                robustSum += differenceSquaredError(r.position, truth, mode: mode)
                // Plain least squares may fail outright (a far outlier at the reference drags it
                // away until the geometry degenerates): counted as an error of 100 m.
                if let p = try? plain.solve(locators: s.locators.span, pairs: pairs.span, workspace: &workspace) {
                    plainSum += differenceSquaredError(p.position, truth, mode: mode)
                } else {
                    plainSum += 100 * 100
                    plainFailures += 1
                }
                boundSum += s.cramerRaoSquared(pairs: pairs, truth: truth, sigmaMeters: sigma)
                outliers += mask.nonzeroBitCount
                rejected += r.rejectedCount
                rejectedCorrectly += (r.rejectedMask & mask).nonzeroBitCount
                fixes += 1
            }
        }
        let crb = (boundSum / Double(fixes)).squareRoot()
        let robustRMSE = (robustSum / Double(fixes)).squareRoot(), plainRMSE = (plainSum / Double(fixes)).squareRoot()
        print("TDoA \(mode) 10 % NLOS: robust \(robustRMSE / crb) × CRB (\(refused) refused), plain \(plainRMSE / crb) × CRB "
              + "(\(plainFailures) failed); rejected \(rejected) (\(rejectedCorrectly) of \(outliers) outliers)")
        #expect(refused <= 5, "\(refused) fixes refused")
        #expect(robustRMSE <= (mode == .planar ? 1.5 : 1.65) * crb, "robust RMSE \(robustRMSE) m vs clean CRB \(crb) m")
        #expect(plainRMSE >= 3 * robustRMSE)
    }

    /// The figure as it is worded — 10 % of the *differences* NLOS — read as each
    /// difference's own arrival (B) delayed with probability 0.1 (+U(0.5, 5) m, one in ten +U(20, 40)
    /// m), the blink's reference clean: what a difference stream with independent NLOS looks like
    /// (the test above, every arrival the reference's included, is the harder one). Measured 1.16 ×
    /// planar, 1.39 × spatial (3 of 5,000 spatial fixes refused as the second solution): the issue's
    /// 1.5 ×, held, and at most 5 refused.
    @Test("10 % NLOS differences (their own arrivals; the reference clean): robust RMSE within 1.5 × the clean bound, planar and spatial",
          arguments: [TrilaterationMode.planar, .spatial])
    func nlosDifferencesAreRejected(mode: TrilaterationMode) throws {
        let sigma = 0.1
        var g = SeededGenerator(seed: mode == .planar ? 507 : 508)
        var workspace = DifferenceWorkspace()
        var robustSum = 0.0, boundSum = 0.0, fixes = 0, failures = 0
        var s = DifferenceScenario.hall(&g, mode: mode)
        for point in 0..<Self.points {
            if point % 10 == 0 { s = DifferenceScenario.hall(&g, mode: mode) }
            let robust = DifferenceSolver(configuration: s.configuration(robust: true, sigmaMeters: sigma))
            let truth = s.point(&g)
            let reference = Int(g.next() % 8)
            for _ in 0..<(Self.draws / 2) {
                let errors = DifferenceScenario.nlosArrivalErrors(&g, sigmaMeters: sigma, sparing: reference).errors
                let pairs = s.uplink(truth: truth, reference: reference, arrivalErrors: errors)
                do {
                    let r = try robust.solve(locators: s.locators.span, pairs: pairs.span, workspace: &workspace)
                    robustSum += differenceSquaredError(r.position, truth, mode: mode)
                } catch {
                    failures += 1
                    continue
                }
                boundSum += s.cramerRaoSquared(pairs: pairs, truth: truth, sigmaMeters: sigma)
                fixes += 1
            }
        }
        let crb = (boundSum / Double(fixes)).squareRoot(), robustRMSE = (robustSum / Double(fixes)).squareRoot()
        print("TDoA \(mode) 10 % NLOS differences: robust \(robustRMSE / crb) × CRB, \(failures) of \(fixes + failures) failed")
        #expect(robustRMSE <= 1.5 * crb, "robust RMSE \(robustRMSE) m vs clean CRB \(crb) m")
        #expect(failures <= (mode == .planar ? 0 : 5), "\(failures) fixes failed")
    }

    @Test("the solution's covariance is the Cramér–Rao bound: exactly on noise-free data, within 3 % on average (before the χ² inflation) on noisy data",
          arguments: [TrilaterationMode.planar, .spatial])
    func covarianceIsTheBound(mode: TrilaterationMode) throws {
        let sigma = 0.1
        var g = SeededGenerator(seed: mode == .planar ? 505 : 506)
        var worst = 0.0, ratioSum = 0.0, inflationSum = 0.0, fixes = 0
        for _ in 0..<100 {
            let s = DifferenceScenario.hall(&g, mode: mode)
            let solver = DifferenceSolver(configuration: s.configuration(robust: false, sigmaMeters: sigma))
            let truth = s.point(&g)
            let reference = Int(g.next() % 8)
            let exact = s.uplink(truth: truth, reference: reference, arrivalErrors: [Double](repeating: 0, count: 8))
            let bound = s.cramerRaoSquared(pairs: exact, truth: truth, sigmaMeters: sigma)
            let clean = try solver.solve(locators: s.locators, pairs: exact)
            let c = clean.covariance
            #expect(abs((c.xx + c.yy + c.zz) / bound - 1) <= 1e-6)
            let f = DifferenceGeometry.information(locators: s.locators.span, pairs: exact.span, at: truth, planar: mode == .planar)
            let q = try #require(DifferenceGeometry.covariance(f, planar: mode == .planar))
            #expect(abs(clean.hdop - (q.xx + q.yy).squareRoot()) <= 1e-9 * clean.hdop)
            #expect(abs(clean.pdop - (q.xx + q.yy + q.zz).squareRoot()) <= 1e-9 * clean.pdop)
            for _ in 0..<10 {
                let errors = (0..<8).map { _ in sigma * g.nextGaussian() }
                let pairs = s.uplink(truth: truth, reference: reference, arrivalErrors: errors)
                let solution = try solver.solve(locators: s.locators, pairs: pairs)
                let inflation = max(1, solution.chiSquare / Double(solution.degreesOfFreedom))
                let n = solution.covariance
                let ratio = (n.xx + n.yy + n.zz) / inflation / bound
                worst = max(worst, abs(ratio - 1))
                ratioSum += ratio
                inflationSum += inflation
                fixes += 1
            }
        }
        let meanRatio = ratioSum / Double(fixes)
        print("TDoA \(mode) covariance vs CRB: mean ratio \(meanRatio), worst \(worst), mean inflation \(inflationSum / Double(fixes))")
        #expect(abs(meanRatio - 1) <= 0.03)
        // Planar: F hardly changes over the error; spatial: the weak vertical moves F with the fix.
        #expect(worst <= (mode == .planar ? 0.05 : 0.6))
    }
}
