import Testing
@testable import LocusCore
@testable import LocusSimulation

@Suite struct TrackSimulationTests {
    @Test("The same seed gives the same recording; another seed gives another")
    func deterministic() {
        let a = TrackFixture.recording(seed: 7, durationSeconds: 30, nlos: 0.1, dropout: 0.05)
        let b = TrackFixture.recording(seed: 7, durationSeconds: 30, nlos: 0.1, dropout: 0.05)
        let c = TrackFixture.recording(seed: 8, durationSeconds: 30, nlos: 0.1, dropout: 0.05)
        #expect(a.ranges == b.ranges)
        #expect(a.truth == b.truth)
        #expect(a.ranges != c.ranges)
    }

    @Test("Walks keep to 0.8–1.5 m/s while moving, stop for seconds, turn, and stay inside the floor")
    func walkShape() {
        let rec = TrackFixture.recording(seed: 3, durationSeconds: 240)
        guard let walk = rec.walk(of: "T1") else { Issue.record("no walk"); return }
        var maxSpeed = 0.0, stillRun = 0.0, longestStill = 0.0, headingChanges = 0
        var lastHeading: Double?
        for k in 0..<2400 {
            let t = Double(k) * 0.1
            let v = walk.velocity(atSeconds: t).horizontalNorm
            maxSpeed = max(maxSpeed, v)
            if v < 1e-6 { stillRun += 0.1; longestStill = max(longestStill, stillRun) } else { stillRun = 0 }
            let p = walk.position(atSeconds: t)
            #expect(p.x >= 0 && p.x <= 20 && p.y >= 0 && p.y <= 12)
            if v > 0.5 {
                let vv = walk.velocity(atSeconds: t)
                let h = (vv.y >= 0 ? 1.0 : -1.0) * (vv.x / v > 1 ? 0 : (vv.x / v < -1 ? Double.pi : acosApprox(vv.x / v)))
                if let l = lastHeading, abs(h - l) > 0.5 { headingChanges += 1 }
                lastHeading = h
            }
        }
        #expect(maxSpeed <= 1.5 + 1e-9)
        #expect(maxSpeed >= 0.8)
        #expect(longestStill >= 2)
        #expect(headingChanges >= 5)
    }

    private func acosApprox(_ c: Double) -> Double {
        // Bisection acos, enough to detect turns without importing a math library here.
        var lo = 0.0, hi = Double.pi
        for _ in 0..<40 {
            let mid = 0.5 * (lo + hi)
            if cosTaylor(mid) > c { lo = mid } else { hi = mid }
        }
        return 0.5 * (lo + hi)
    }

    private func cosTaylor(_ x: Double) -> Double {
        var term = 1.0, sum = 1.0
        for n in 1..<20 { term *= -x * x / Double((2 * n - 1) * (2 * n)); sum += term }
        return sum
    }

    @Test("NLOS biases are long only and within 0.3–2.5 m; dropouts remove about the requested share")
    func nlosAndDropouts() {
        let floor = TrackFixture.floor()
        let rec = SimulatedRecording.simulate(floor: floor, durationSeconds: 60, seed: 4,
                                              ranging: RangeSimulationConfiguration(sigmaMeters: 0, nlosProbability: 1))
        guard let walk = rec.walk(of: "T1") else { Issue.record("no walk"); return }
        for r in rec.ranges {
            guard let l = floor.locator(r.locator) else { Issue.record("unknown locator"); continue }
            let p = walk.position(atSeconds: r.timeSeconds)
            let d = Point3(x: p.x, y: p.y, z: floor.tagHeightMeters).distance(to: l.position)
            #expect(r.rangeMeters - d >= 0.3 - 1e-9 && r.rangeMeters - d <= 2.5 + 1e-9)
        }
        let full = SimulatedRecording.simulate(floor: floor, durationSeconds: 60, seed: 4).ranges.count
        let dropped = SimulatedRecording.simulate(floor: floor, durationSeconds: 60, seed: 4,
                                                  ranging: RangeSimulationConfiguration(dropoutProbability: 0.25)).ranges.count
        #expect(full == 60 * 4 * 8)
        #expect(abs(Double(dropped) / Double(full) - 0.75) < 0.03)
    }

    @Test("Ranges are sorted by time, each locator ranged at its own timestamp a few ms apart, several tags interleaved")
    func timestamps() {
        let rec = SimulatedRecording.simulate(floor: TrackFixture.floor(), tagCount: 3, durationSeconds: 10, seed: 1)
        #expect(zip(rec.ranges, rec.ranges.dropFirst()).allSatisfy { $0.timeSeconds <= $1.timeSeconds })
        #expect(Set(rec.ranges.map(\.timeSeconds)).count == rec.ranges.count)
        #expect(Set(rec.ranges.map(\.tag)) == ["T1", "T2", "T3"])
        #expect(rec.truth.count == 3 * 101)
        let t1 = rec.ranges.filter { $0.tag == "T1" }.prefix(8).map(\.timeSeconds)
        #expect(zip(t1, t1.dropFirst()).allSatisfy { abs($1 - $0 - 0.004) < 1e-12 })
    }
}
