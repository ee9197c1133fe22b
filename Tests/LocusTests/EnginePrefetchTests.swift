@testable import Locus
import LocusCore
import LocusNumerics
import LocusSimulation
import Testing

@Suite("The engine's prefetch of the next tag's state")
struct EnginePrefetchTests {
    /// Every row of `tags` tags' rounds in time order (`ManyTagScenario`: each tag's round of 8
    /// ranges together, the tags in the same order every round).
    static func rows(site: Site, tags: Int, rounds: Int) -> [RangeMeasurement] {
        let addresses = site.floors[0].locators.map(\.address)
        var rows: [RangeMeasurement] = []
        ManyTagScenario.generate(site: site, tags: tags, rounds: rounds, seed: 5, epoch: { _, _, _ in }) { tag, slot, range, time in
            rows.append(RangeMeasurement(timeSeconds: time, tag: TagID("T\(tag)"), locator: addresses[slot], rangeMeters: range))
        }
        return rows
    }

    @Test("with enough tags to prefetch, each tag's fixes are those of an engine that sees that tag alone")
    func prefetchChangesNothing() throws {
        let site = ManyTagScenario.site(locators: 8, zones: 20, seed: 3)
        let tagCount = CachePrefetch.minimumTags + 40
        let all = Self.rows(site: site, tags: tagCount, rounds: 5)
        var engine = try PositioningEngine(site: site)
        for m in all { engine.ingest(m) }
        #expect(engine.tagCount >= CachePrefetch.minimumTags)
        // The round order was learnt: tag k's successor is tag k + 1 (the last tag's is the first).
        let first = engine.tagIndex(for: "T0").rawValue, second = engine.tagIndex(for: "T1").rawValue
        #expect(engine.nextToOpen[first] == Int32(second))
        engine.finish()
        let fixes = engine.drainFixes()
        #expect(fixes.count >= tagCount * 4)
        for k in [0, 1, 257, tagCount - 1] {
            let tag = TagID("T\(k)")
            var alone = try PositioningEngine(site: site)
            for m in all where m.tag == tag { alone.ingest(m) }
            alone.finish()
            #expect(fixes.filter { $0.tag == tag } == alone.drainFixes(), "tag \(tag)")
        }
    }
}
