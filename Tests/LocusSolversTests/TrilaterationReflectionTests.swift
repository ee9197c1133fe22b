@testable import LocusCore
@testable import LocusSolvers
import Testing

/// Locators along two lines (Fixtures/sites/corridor.json: 7 at y = 0.1, 6 at y = 2.9, z = 2.4, x 0.2 … 59.8;
/// tag height 1.2 m): a position and its reflection across the locators' line fit their ranges alike but for
/// the few far locators off it, and one NLOS range among those put the robust search in the reflection's
/// basin. The search also runs from the reflection (`reflected_search`, trilateration.c) and keeps the
/// lower penalised cost.
@Suite("Trilateration: the reflection across a line of locators")
struct TrilaterationReflectionTests {
    static let corridor: [(UInt16, Point3)] = [
        (0x1001, Point3(x: 0.2, y: 0.1, z: 2.4)), (0x1002, Point3(x: 10, y: 0.1, z: 2.4)), (0x1003, Point3(x: 20, y: 0.1, z: 2.4)),
        (0x1004, Point3(x: 30, y: 0.1, z: 2.4)), (0x1005, Point3(x: 40, y: 0.1, z: 2.4)), (0x1006, Point3(x: 50, y: 0.1, z: 2.4)),
        (0x1007, Point3(x: 59.8, y: 0.1, z: 2.4)), (0x1008, Point3(x: 5, y: 2.9, z: 2.4)), (0x1009, Point3(x: 15, y: 2.9, z: 2.4)),
        (0x100A, Point3(x: 25, y: 2.9, z: 2.4)), (0x100B, Point3(x: 35, y: 2.9, z: 2.4)), (0x100C, Point3(x: 45, y: 2.9, z: 2.4)),
        (0x100D, Point3(x: 55, y: 2.9, z: 2.4)),
    ]

    @Test("A round of a tag at (7.54, 1.87) in the corridor, 0x100B read 1.9 m long (`locus simulate --seed 19 --nlos 0.05 --dropout 0.1 --tags 4`, T3's first round): the fit is in the corridor, not at its reflection (7.56, −1.29)")
    func nlosRoundInTheCorridor() throws {
        let used: [(UInt16, Double)] = [(0x1001, 7.6185), (0x1002, 3.2221), (0x1003, 12.6686), (0x1005, 32.5917), (0x1006, 42.6847),
                                        (0x1007, 52.2198), (0x100A, 17.5412), (0x100B, 29.3397), (0x100D, 47.5814)]
        let locators = used.map { u in Self.corridor.first { $0.0 == u.0 }!.1 }
        let solver = Trilaterator(configuration: TrilaterationConfiguration(mode: .planar, tagHeightMeters: 1.2))
        let s = try solver.solve(locators: locators, rangesMeters: used.map(\.1))
        #expect(abs(s.position.x - 7.54) < 0.15 && abs(s.position.y - 1.87) < 0.15, "\(s.position)")
        #expect(s.rejectedCount == 1 && s.isRejected(index: 7), "0x100B rejected")
    }

    @Test("Random tags in the corridor, one far range off the locators' line read 0.5–3 m long: the robust fit is never the reflection (|y − truth| < 0.5 m on all 400), and the LAPACKE reference reaches the same fit")
    func randomCorridorRounds() throws {
        var g = SeededGenerator(seed: 19)
        let configuration = TrilaterationConfiguration(mode: .planar, tagHeightMeters: 1.2)
        let solver = Trilaterator(configuration: configuration)
        var workspace = LapackOracleWorkspace()
        var reflected = 0
        for _ in 0..<400 {
            let tag = Point3(x: Double.random(in: 1...59, using: &g), y: Double.random(in: 0.6...2.4, using: &g), z: 1.2)
            var ranges = Self.corridor.map { $0.1.distance(to: tag) + 0.1 * g.nextGaussian() }
            // The NLOS range: one of the far locators on the line at y = 2.9.
            let far = (7..<13).max { abs(Self.corridor[$0].1.x - tag.x) < abs(Self.corridor[$1].1.x - tag.x) }!
            ranges[far] += Double.random(in: 0.5...3, using: &g)
            let locators = Self.corridor.map(\.1)
            let s = try solver.solve(locators: locators, rangesMeters: ranges)
            if abs(s.position.y - tag.y) >= 0.5 { reflected += 1 }
            let reference = try locators.withUnsafeBufferPointer { lp in
                try ranges.withUnsafeBufferPointer { rp in
                    try LapackTrilaterator(configuration: configuration).solve(locators: lp, rangesMeters: rp, workspace: &workspace)
                }
            }
            #expect(s.position.distance(to: reference.position) <= 1e-9 && s.rejectedMask == reference.rejectedMask)
        }
        #expect(reflected == 0)
    }
}
