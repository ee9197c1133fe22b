@testable import Locus
import LocusCore
@testable import LocusSolvers
import LocusTestSupport
import Testing

/// The engine hands its tightly coupled filter an epoch's ranges when the epoch closes (in one call),
/// except a range the epoch table cannot hold for it — a locator's second range in the epoch, a
/// negative corrected range —, which the filter takes at once. Either way the fixes must be those of a
/// filter fed every range as it comes, closed at the same epoch times.
@Suite("The engine's tight filter: epochs applied at their close are ranges applied as they come")
struct EngineRoundFilterTests {
    /// A floor whose locator 0x105 sits at tag height and carries a 2 m bias in the site: near it the
    /// corrected range is negative.
    static let floor = Floor(id: "1F", widthMeters: 20, heightMeters: 12, tagHeightMeters: 1.1, locators: [
        Locator(address: LocatorAddress(0x101), position: Point3(x: 0, y: 0, z: 2.5)),
        Locator(address: LocatorAddress(0x102), position: Point3(x: 20, y: 0, z: 2.5)),
        Locator(address: LocatorAddress(0x103), position: Point3(x: 20, y: 12, z: 2.5)),
        Locator(address: LocatorAddress(0x104), position: Point3(x: 0, y: 12, z: 2.5)),
        Locator(address: LocatorAddress(0x105), position: Point3(x: 10, y: 6, z: 1.1), biasMeters: 2),
        Locator(address: LocatorAddress(0x106), position: Point3(x: 20, y: 6, z: 2.5)),
    ])

    /// One tag walking through the middle of the floor (past 0x105), every locator ranging it at
    /// `hertz`, staggered: a continuous stream, so each 0.25 s epoch holds several ranges of a locator.
    /// Ranges are the true distances plus a deterministic ripple, every 17th long by 2 m (NLOS).
    static func rows(seconds: Double, hertz: Double) -> [RangeMeasurement] {
        var rows: [RangeMeasurement] = []
        let locators = floor.locators
        let step = 1 / (hertz * Double(locators.count))
        var k = 0
        var t = 0.0
        while t < seconds {
            let l = locators[k % locators.count]
            let x = 2 + 16 * t / seconds, y = 6 + 1.5 * (t / 3).truncatingRemainder(dividingBy: 1)
            let dx = x - l.position.x, dy = y - l.position.y, dz = floor.tagHeightMeters - l.position.z
            var r = (dx * dx + dy * dy + dz * dz).squareRoot() + 0.05 * ((Double(k).squareRoot() * 7.3).truncatingRemainder(dividingBy: 2) - 1)
            if k % 17 == 16 { r += 2 }
            rows.append(RangeMeasurement(timeSeconds: t, tag: "T", locator: l.address, rangeMeters: max(0, r)))
            k += 1
            t = Double(k) * step
        }
        return rows
    }

    @Test("a continuous stream with repeated locators and negative corrected ranges", arguments: [20.0, 60.0])
    func sameAsRangeByRange(hertz: Double) throws {
        let site = Site(building: Site.Building(id: "B"), floors: [Self.floor])
        let rows = Self.rows(seconds: 20, hertz: hertz)
        // The rounds that start a track are judged as a whole by design (`TrackFilter.updateRound`), and so
        // is a round that refuses ranges and keeps two or fewer (`scoreUncheckedRound`), which a filter fed
        // range by range cannot do: off here, on both sides, to compare the hand-over alone.
        var filterConfiguration = TrackFilterConfiguration(judgesStartingRounds: false)
        filterConfiguration.gateCountsUncheckedRounds = false
        var engine = try PositioningEngine(site: site, configuration: EngineConfiguration(tracking: .kalman(filterConfiguration),
                                                                                         tagRangeOffset: .off))
        for m in rows { engine.ingest(m) }
        engine.finish()
        let fixes = engine.drainFixes()
        #expect(fixes.count > 50)

        // The reference: one filter, every range as it comes (corrected as the engine corrects it),
        // closed at each of the engine's fix times before the first range after it.
        let byAddress = Dictionary(uniqueKeysWithValues: Self.floor.locators.map { ($0.address, $0) })
        var filter = TrackFilter(configuration: filterConfiguration, tag: "T", floor: Self.floor.id,
                                 tagHeightMeters: Self.floor.tagHeightMeters)
        var reference: [PositionFix] = []
        var next = 0, negative = 0
        for m in rows {
            while next < fixes.count, fixes[next].timeSeconds < m.timeSeconds {
                if let f = filter.closeEpoch(atSeconds: fixes[next].timeSeconds) { reference.append(f) }
                next += 1
            }
            let l = byAddress[m.locator]!
            let corrected = l.correctedRange(m.rangeMeters)
            if corrected < 0 { negative += 1 }
            filter.update(correctedRangeMeters: corrected, timeSeconds: m.timeSeconds, address: l.address, anchor: l.position)
        }
        while next < fixes.count {
            if let f = filter.closeEpoch(atSeconds: fixes[next].timeSeconds) { reference.append(f) }
            next += 1
        }
        #expect(negative > 5, "the walk should pass close to the biased locator")
        #expect(reference.count == fixes.count)
        for (k, (a, b)) in zip(fixes, reference).enumerated() {
            #expect(a.bitPatterns == b.bitPatterns, "fix \(k) at \(a.timeSeconds) s")
        }
    }
}
