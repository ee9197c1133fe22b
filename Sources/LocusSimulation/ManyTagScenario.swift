#if canImport(Glibc)
import Glibc
#endif
import LocusCore

/// A seeded synthetic recording of many tags, generated as a stream (nothing stored): the scenario of
/// the pipeline benchmarks. A 40 × 25 m hall (tag height 1.1 m): `locatorCount`
/// locators spread along the walls at 2.6 m, `zoneCount` random 1–4 m rectangles (inDist 1 m,
/// priority k mod 3), `tagCount` tags walking at 1.2 m/s with bounces. One ranging round per tag every
/// 0.25 s: every locator once, σ = 0.1 m, 5 % NLOS (+U(0.3, 2.5) m). All rounds of one period are
/// spread over its first 0.2 s, rows in global time order (as a live stream delivers them).
///
/// Unlike `SimulatedRecording` (waypoint walks, whole recordings in memory, the command line's
/// `simulate`), it costs O(tags) memory whatever the length, so it can feed 100,000 tags for hours.
package enum ManyTagScenario {
    package static func site(locators locatorCount: Int, zones zoneCount: Int, seed: UInt64) -> Site {
        // Locators evenly along the perimeter (130 m), alternating wall offsets so none is collinear.
        let perimeter = 2 * (40.0 + 25.0)
        var locators: [Locator] = []
        for i in 0..<locatorCount {
            var s = (Double(i) + 0.5) / Double(locatorCount) * perimeter
            var p = (0.0, 0.0)
            if s < 40 { p = (s, 0) } else {
                s -= 40
                if s < 25 { p = (40, s) } else {
                    s -= 25
                    if s < 40 { p = (40 - s, 25) } else { p = (0, 25 - (s - 40)) }
                }
            }
            locators.append(Locator(address: LocatorAddress(UInt16(0x100 + i)), position: Point3(x: p.0, y: p.1, z: 2.6)))
        }
        var rng = SeededGenerator(seed: seed)
        var zones: [Zone] = []
        zones.reserveCapacity(zoneCount)
        for k in 0..<zoneCount {
            let x = rng.uniform(1, 35), y = rng.uniform(1, 20), w = rng.uniform(1, 4), h = rng.uniform(1, 4)
            zones.append(Zone(id: ZoneID("z\(k)"),
                              polygon: [Point2(x: x, y: y), Point2(x: x + w, y: y), Point2(x: x + w, y: y + h), Point2(x: x, y: y + h)],
                              rules: ZoneRules(inDistanceMeters: 1, inCount: 1, inCountIntervalSeconds: 1, outPeriodSeconds: 3,
                                               priority: k % 3, callInout: true, dwellSeconds: 5)))
        }
        let floor = Floor(id: "1F", originX: 0, originY: 0, widthMeters: 40, heightMeters: 25, tagHeightMeters: 1.1,
                          sessionID: 1, locators: locators, zones: zones)
        return Site(building: .init(id: "bench"), floors: [floor])
    }

    /// Calls `emit(tag, slot, range, time)` for every row in time order, and `epoch(round, tag, truth)`
    /// once per round and tag. Nothing is stored here (the memory section streams through it).
    package static func generate(site: Site, tags tagCount: Int, rounds: Int, seed: UInt64,
                         epoch: (Int, Int, Point2) -> Void, emit: (Int, Int, Double, Double) -> Void) {
        let floor = site.floors[0]
        let n = floor.locators.count
        var rng = SeededGenerator(seed: seed)
        var x = (0..<tagCount).map { _ in rng.uniform(2, 38) }
        var y = (0..<tagCount).map { _ in rng.uniform(2, 23) }
        var heading = (0..<tagCount).map { _ in rng.uniform(0, 2 * Double.pi) }
        let dt = 0.2 / Double(tagCount * n)
        let h = floor.tagHeightMeters
        for k in 0..<rounds {
            for j in 0..<tagCount {
                if k > 0 {
                    heading[j] += 0.2 * rng.nextGaussian()
                    x[j] += 0.3 * cos(heading[j]); y[j] += 0.3 * sin(heading[j])  // 1.2 m/s × 0.25 s
                    if x[j] < 1 || x[j] > 39 || y[j] < 1 || y[j] > 24 {
                        heading[j] += Double.pi
                        x[j] = min(39, max(1, x[j])); y[j] = min(24, max(1, y[j]))
                    }
                }
                // The tag moves on during its round at 1.2 m/s (continuous motion, so a constant-
                // velocity filter sees the world it models); each range is taken where the tag is at
                // its own time, and the truth of the epoch is the tag at the round's last range,
                // which is the fix's time.
                let start = Double(k) * 0.25
                let vx = 1.2 * cos(heading[j]), vy = 1.2 * sin(heading[j])
                var times = [Double](repeating: 0, count: n)
                for i in 0..<n { times[i] = start + (Double(j * n + i) + 0.5 * rng.nextUnit()) * dt }
                let last = times[n - 1] - start
                epoch(k, j, Point2(x: x[j] + vx * last, y: y[j] + vy * last))
                for i in 0..<n {
                    let l = floor.locators[i].position
                    let into = times[i] - start
                    let dx = x[j] + vx * into - l.x, dy = y[j] + vy * into - l.y, dz = h - l.z
                    var r = (dx * dx + dy * dy + dz * dz).squareRoot() + 0.1 * rng.nextGaussian()
                    if rng.nextUnit() < 0.05 { r += rng.uniform(0.3, 2.5) }
                    emit(j, i, max(0, r), times[i])
                }
            }
        }
    }
}
