import Testing
@testable import LocusCore
@testable import LocusSolvers

/// A confirmed track carried across a line of locators (a corridor's row) is mirrored back when the
/// round's other ranges fit its mirror image (`TrackFilter.mirrorIfReflectionFits`), and only then.
@Suite struct TrackFilterReflectionTests {
    /// `Fixtures/sites/corridor.json`: a row at y = 0.1 and a row at y = 2.9, locators at 2.4 m, the tag at 1.2 m.
    static let nearRow: [(LocatorAddress, Point3)] = [0.2, 10, 20, 30].enumerated().map {
        (LocatorAddress(UInt16(0x1001 + $0.offset)), Point3(x: $0.element, y: 0.1, z: 2.4))
    }
    static let farRow: [(LocatorAddress, Point3)] = [5, 15, 25].enumerated().map {
        (LocatorAddress(UInt16(0x1008 + $0.offset)), Point3(x: $0.element, y: 2.9, z: 2.4))
    }
    static let height = 1.2

    static func distance(_ p: SIMD2<Double>, _ a: Point3) -> Double {
        let dx = p.x - a.x, dy = p.y - a.y, dz = height - a.z
        return (dx * dx + dy * dy + dz * dz).squareRoot()
    }

    /// A confirmed track standing at `track` (σ 0.1 m, still), fed one round at 0.25 s of the exact
    /// ranges from `tag` to every locator of both rows (4 ms apart), plus `excess[k]` on the far row's
    /// k-th range; returns the track's position after the round and whether the round restarted it.
    static func round(track: SIMD2<Double>, tag: SIMD2<Double>, farExcess excess: [Double] = [0, 0, 0],
                      mirrors: Bool = true) -> (position: SIMD2<Double>, restarted: Bool) {
        var configuration = TrackFilterConfiguration.standard
        configuration.mirrorsAcrossLocatorLines = mirrors
        var filter = TrackFilter(configuration: configuration, tag: "T1", floor: "1F", tagHeightMeters: height)
        filter.reset(to: KalmanState(px: track.x, py: track.y, positionSigmaMeters: 0.1, velocitySigmaMetersPerSecond: 0.05),
                     atSeconds: 0)
        filter.isConfirmed = true
        let count = filter.initializationCount
        var ranges: [Double] = [], times: [Double] = [], anchors: [Point3] = [], addresses: [LocatorAddress] = []
        for (k, (address, anchor)) in (nearRow + farRow).enumerated() {
            ranges.append(distance(tag, anchor) + (k >= nearRow.count ? excess[k - nearRow.count] : 0))
            times.append(0.25 + 0.004 * Double(k))
            anchors.append(anchor)
            addresses.append(address)
        }
        filter.update(rangesMeters: ranges.span, timesSeconds: times.span, anchors: anchors.span, addresses: addresses.span)
        let s = filter.state!
        return (SIMD2(s.x[0], s.x[1]), filter.initializationCount != count)
    }

    @Test("A track held at the reflection across the near row (y = −1.6 for a tag at y = 1.8) is mirrored to the tag: the far row's ranges read metres short of it and fit the mirror")
    func mirrorsATrackBeyondTheRow() {
        let tag = SIMD2(12.0, 1.8)
        let (p, restarted) = Self.round(track: SIMD2(12.0, -1.6), tag: tag)
        #expect(restarted)
        #expect(((p - tag) * (p - tag)).sum().squareRoot() < 0.1, "\(p)")
        // Without the check the track stays beyond the row: the far row is refused.
        let (q, kept) = Self.round(track: SIMD2(12.0, -1.6), tag: tag, mirrors: false)
        #expect(!kept)
        #expect(q.y < -1.4, "\(q)")
    }

    @Test("A track that is right is never mirrored: NLOS on the far row (the tag inside), or the tag really beyond the row with two of the far row's ranges NLOS")
    func leavesARightTrack() {
        // Inside the corridor, the far row 1–3 m long: the near row's line does not bound the locators as
        // seen from the track (the far row lies on its side).
        let inside = SIMD2(12.0, 1.8)
        let (p, restarted) = Self.round(track: inside, tag: inside, farExcess: [1.2, 2.5, 3.4])
        #expect(!restarted)
        #expect(((p - inside) * (p - inside)).sum().squareRoot() < 0.1, "\(p)")
        // Beyond the near row (another room), two far-row ranges NLOS: the third fits the track and not
        // its mirror, and vetoes.
        let beyond = SIMD2(12.0, -1.6)
        let (q, again) = Self.round(track: beyond, tag: beyond, farExcess: [0.9, 1.5, 0])
        #expect(!again)
        #expect(((q - beyond) * (q - beyond)).sum().squareRoot() < 0.1, "\(q)")
    }
}
