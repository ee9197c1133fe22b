import Testing
@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSolvers

/// Dense, straightforward 4×4 reference arithmetic (row-major [[Double]]).
private enum Dense {
    typealias M = [[Double]]
    static func from(_ p: SIMD16<Double>) -> M { (0..<4).map { i in (0..<4).map { j in p[4 * i + j] } } }
    static func mul(_ a: M, _ b: M) -> M {
        (0..<a.count).map { i in (0..<b[0].count).map { j in (0..<b.count).reduce(0) { $0 + a[i][$1] * b[$1][j] } } }
    }
    static func t(_ a: M) -> M { (0..<a[0].count).map { j in (0..<a.count).map { i in a[i][j] } } }
    static func add(_ a: M, _ b: M, _ s: Double = 1) -> M { zip(a, b).map { zip($0, $1).map { $0 + s * $1 } } }
    static func identity(_ n: Int) -> M { (0..<n).map { i in (0..<n).map { $0 == i ? 1 : 0 } } }
    static func inv2(_ s: M) -> M {
        let d = s[0][0] * s[1][1] - s[0][1] * s[1][0]
        return [[s[1][1] / d, -s[0][1] / d], [-s[1][0] / d, s[0][0] / d]]
    }
    static func maxDiff(_ a: M, _ b: SIMD16<Double>) -> Double {
        var m = 0.0
        for i in 0..<4 { for j in 0..<4 { m = max(m, abs(a[i][j] - b[4 * i + j])) } }
        return m
    }
}

private func randomState(_ rng: inout SeededGenerator) -> KalmanState {
    // P = A Aᵀ + 0.01 I, a random SPD matrix.
    var a = [[Double]](repeating: [Double](repeating: 0, count: 4), count: 4)
    for i in 0..<4 { for j in 0..<4 { a[i][j] = rng.uniform(-0.5, 0.5) } }
    let p = Dense.add(Dense.mul(a, Dense.t(a)), Dense.identity(4), 0.01)
    var s = SIMD16<Double>(repeating: 0)
    for i in 0..<4 { for j in 0..<4 { s[4 * i + j] = p[i][j] } }
    return KalmanState(x: SIMD4(rng.uniform(0, 10), rng.uniform(0, 10), rng.uniform(-1, 1), rng.uniform(-1, 1)), p: s)
}

@Suite struct KalmanKernelTests {
    @Test("C predict equals F·P·Fᵀ + Q computed densely", arguments: [0.0, 0.01, 0.25, 3.0])
    func predictMatchesDense(dt: Double) {
        var rng = SeededGenerator(seed: 11)
        let s0 = randomState(&rng)
        var s = s0
        let q = 0.7
        #expect(KalmanKernels.predict(&s, overSeconds: dt, processNoiseDensity: q) == .accepted)
        let f: Dense.M = [[1, 0, dt, 0], [0, 1, 0, dt], [0, 0, 1, 0], [0, 0, 0, 1]]
        let a = dt * dt * dt / 3 * q, b = dt * dt / 2 * q, c = dt * q
        let qm: Dense.M = [[a, 0, b, 0], [0, a, 0, b], [b, 0, c, 0], [0, b, 0, c]]
        let p = Dense.add(Dense.mul(Dense.mul(f, Dense.from(s0.p)), Dense.t(f)), qm)
        #expect(Dense.maxDiff(p, s.p) < 1e-12)
        #expect(abs(s.x[0] - (s0.x[0] + dt * s0.x[2])) < 1e-12)
        #expect(abs(s.x[1] - (s0.x[1] + dt * s0.x[3])) < 1e-12)
    }

    @Test("C Joseph-form position update equals the textbook update K = PHᵀS⁻¹")
    func positionUpdateMatchesTextbook() {
        var rng = SeededGenerator(seed: 12)
        for _ in 0..<20 {
            let s0 = randomState(&rng)
            var s = s0
            let z = (rng.uniform(0, 10), rng.uniform(0, 10))
            let r: Dense.M = [[0.01, 0.002], [0.002, 0.02]]
            var innovation = KalmanInnovation()
            #expect(KalmanKernels.updatePosition(&s, zx: z.0, zy: z.1, rxx: 0.01, rxy: 0.002, ryy: 0.02, gate: .infinity,
                                                 innovation: &innovation) == .accepted)
            let p = Dense.from(s0.p)
            let h: Dense.M = [[1, 0, 0, 0], [0, 1, 0, 0]]
            let sm = Dense.add(Dense.mul(Dense.mul(h, p), Dense.t(h)), r)
            let k = Dense.mul(Dense.mul(p, Dense.t(h)), Dense.inv2(sm))
            let y = [z.0 - s0.x[0], z.1 - s0.x[1]]
            let pRef = Dense.mul(Dense.add(Dense.identity(4), Dense.mul(k, h), -1), p)
            #expect(Dense.maxDiff(pRef, s.p) < 1e-12)
            for i in 0..<4 { #expect(abs(s0.x[i] + k[i][0] * y[0] + k[i][1] * y[1] - s.x[i]) < 1e-12) }
            let si = Dense.inv2(sm)
            let nis = y[0] * (si[0][0] * y[0] + si[0][1] * y[1]) + y[1] * (si[1][0] * y[0] + si[1][1] * y[1])
            #expect(abs(innovation.statistic - nis) < 1e-9 * max(1, nis))
        }
    }

    @Test("C range update uses the analytic Jacobian, which matches a numerical derivative of h(x)")
    func rangeUpdateMatchesNumericalJacobian() {
        var rng = SeededGenerator(seed: 13)
        let anchor = Point3(x: 1, y: 2, z: 2.5), h = 1.1
        func range(_ x: Double, _ y: Double) -> Double {
            ((x - anchor.x) * (x - anchor.x) + (y - anchor.y) * (y - anchor.y) + (h - anchor.z) * (h - anchor.z)).squareRoot()
        }
        for _ in 0..<20 {
            let s0 = randomState(&rng)
            var s = s0
            let measured = range(s0.x[0], s0.x[1]) + rng.uniform(-0.2, 0.2)
            var innovation = KalmanInnovation()
            #expect(KalmanKernels.updateRange(&s, anchor: anchor, tagHeightMeters: h, rangeMeters: measured, varianceSquareMeters: 0.01,
                                              gateLong: .infinity, gateShort: .infinity, innovation: &innovation) == .accepted)
            let e = 1e-6
            let hx = (range(s0.x[0] + e, s0.x[1]) - range(s0.x[0] - e, s0.x[1])) / (2 * e)
            let hy = (range(s0.x[0], s0.x[1] + e) - range(s0.x[0], s0.x[1] - e)) / (2 * e)
            let p = Dense.from(s0.p)
            let hm: Dense.M = [[hx, hy, 0, 0]]
            let sv = Dense.mul(Dense.mul(hm, p), Dense.t(hm))[0][0] + 0.01
            let k = Dense.mul(p, Dense.t(hm)).map { $0[0] / sv }
            let y = measured - range(s0.x[0], s0.x[1])
            let pRef = Dense.mul(Dense.add(Dense.identity(4), Dense.mul(k.map { [$0] }, hm), -1), p)
            #expect(Dense.maxDiff(pRef, s.p) < 1e-8)
            for i in 0..<4 { #expect(abs(s0.x[i] + k[i] * y - s.x[i]) < 1e-8) }
            #expect(abs(innovation.statistic - y / sv.squareRoot()) < 1e-8)
        }
    }

    @Test("A gated measurement leaves the state untouched and still reports its statistic")
    func gatedLeavesStateUnchanged() {
        var rng = SeededGenerator(seed: 14)
        let s0 = randomState(&rng)
        var s = s0
        var innovation = KalmanInnovation()
        let far = KalmanKernels.updatePosition(&s, zx: s0.x[0] + 100, zy: s0.x[1], rxx: 0.01, rxy: 0, ryy: 0.01, gate: 13.82,
                                               innovation: &innovation)
        #expect(far == .gated)
        #expect(s == s0)
        #expect(innovation.statistic > 13.82)
        let long = KalmanKernels.updateRange(&s, anchor: Point3(x: 0, y: 0, z: 2.5), tagHeightMeters: 1.1, rangeMeters: 1000,
                                             varianceSquareMeters: 0.01, gateLong: 2.5, gateShort: 4, innovation: &innovation)
        #expect(long == .gated)
        #expect(s == s0)
        #expect(innovation.statistic > 2.5)
    }

    @Test("Non-finite or out-of-domain inputs are refused and never leave a NaN in the state")
    func nonFiniteRefused() {
        var rng = SeededGenerator(seed: 15)
        let s0 = randomState(&rng)
        var s = s0
        var innovation = KalmanInnovation()
        #expect(KalmanKernels.predict(&s, overSeconds: -1, processNoiseDensity: 1) == .invalidArgument)
        #expect(KalmanKernels.predict(&s, overSeconds: .nan, processNoiseDensity: 1) == .invalidArgument)
        #expect(KalmanKernels.updatePosition(&s, zx: .nan, zy: 0, rxx: 0.01, rxy: 0, ryy: 0.01, gate: .infinity,
                                             innovation: &innovation) == .notFinite)
        #expect(KalmanKernels.updatePosition(&s, zx: 1e300, zy: 1e300, rxx: 1e-300, rxy: 0, ryy: 1e-300, gate: .infinity,
                                             innovation: &innovation) != .accepted)
        #expect(KalmanKernels.updateRange(&s, anchor: Point3(x: s0.x[0], y: s0.x[1], z: 1.1), tagHeightMeters: 1.1,
                                          rangeMeters: 1, varianceSquareMeters: 0.01, gateLong: .infinity, gateShort: .infinity,
                                          innovation: &innovation) == .invalidArgument)
        #expect(s == s0)
        #expect(s.isFinite)
    }

    @Test("C RTS step equals the dense formula G = P_f Fᵀ P_p⁻¹")
    func rtsStepMatchesDense() {
        var rng = SeededGenerator(seed: 16)
        let f0 = randomState(&rng)
        var pred = f0
        let dt = 0.25
        #expect(KalmanKernels.predict(&pred, overSeconds: dt, processNoiseDensity: 0.5) == .accepted)
        let next = randomState(&rng)
        var out = KalmanState(x: .zero, p: .zero)
        #expect(KalmanKernels.smoothStep(filtered: f0, predictedNext: pred, smoothedNext: next, overSeconds: dt, into: &out) == .accepted)
        // G by solving Pp Gᵀ = F Pf with the adjugate-free dense Gauss–Jordan.
        let f: Dense.M = [[1, 0, dt, 0], [0, 1, 0, dt], [0, 0, 1, 0], [0, 0, 0, 1]]
        var a = Dense.from(pred.p), bm = Dense.mul(f, Dense.from(f0.p))
        for c in 0..<4 {
            let d = a[c][c]
            for j in 0..<4 { a[c][j] /= d; bm[c][j] /= d }
            for r in 0..<4 where r != c {
                let m = a[r][c]
                for j in 0..<4 { a[r][j] -= m * a[c][j]; bm[r][j] -= m * bm[c][j] }
            }
        }
        let g = Dense.t(bm)
        let dx = (0..<4).map { next.x[$0] - pred.x[$0] }
        for i in 0..<4 {
            let ref = f0.x[i] + (0..<4).reduce(0) { $0 + g[i][$1] * dx[$1] }
            #expect(abs(ref - out.x[i]) < 1e-10)
        }
        let pRef = Dense.add(Dense.from(f0.p), Dense.mul(Dense.mul(g, Dense.add(Dense.from(next.p), Dense.from(pred.p), -1)), Dense.t(g)))
        #expect(Dense.maxDiff(pRef, out.p) < 1e-10)
    }
}

/// The 3-D state's height pseudo-measurement (`locus_kalman_cv3_update_height`, the height prior of
/// spatial floors): the scalar linear update by hand.
@Suite("3-D Kalman height update")
struct SpatialHeightUpdateTests {
    @Test("z = 3 ± 2 m (correlated with x) observed as 1 m ± 1 m: z, P_zz and x move as K = P Hᵀ / S says")
    func byHand() {
        let c = SymmetricMatrix3(xx: 1, xy: 0, xz: 0.5, yy: 1, yz: 0, zz: 4)
        var s = SpatialKalmanState(position: Point3(x: 2, y: 5, z: 3), covariance: c, velocityVarianceSquareMetersPerSecondSquared: 1)
        #expect(s.updateHeight(heightMeters: 1, varianceSquareMeters: 1) == .accepted)
        // S = 4 + 1 = 5, y = −2, K = (0.5, 0, 4)/5: x 2 − 0.2, z 3 − 1.6; P_zz = 4 − 16/5, P_xx = 1 − 0.25/5, P_xz = 0.5 − 2/5.
        #expect(abs(s.position.x - 1.8) < 1e-12 && abs(s.position.y - 5) < 1e-12 && abs(s.position.z - 1.4) < 1e-12)
        let p = s.positionCovariance
        #expect(abs(p.zz - 0.8) < 1e-12 && abs(p.xx - 0.95) < 1e-12 && abs(p.xz - 0.1) < 1e-12 && abs(p.yy - 1) < 1e-12)
        // A variance that is not positive, or a height that is not finite, changes nothing.
        let before = s.position
        #expect(s.updateHeight(heightMeters: 1, varianceSquareMeters: 0) != .accepted)
        #expect(s.updateHeight(heightMeters: .nan, varianceSquareMeters: 1) != .accepted)
        #expect(s.position == before)
    }
}
