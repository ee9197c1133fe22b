@testable import Locus
import LocusCore
import LocusSimulation
import Testing

/// The reorder buffer after a stream's start-up burst: the first round of every tag closes a pause
/// after its last range, the next rounds close complete, so thousands of fixes wait at once; once
/// they have gone, the buffer's storage is released (memory per live tag), and nothing else changes.
@Suite("The reorder buffer after a start-up burst")
struct ReorderBurstTests {
    @Test("a burst of parked fixes is released in order, its storage freed, each tag's fixes those of an engine that sees it alone")
    func burstReleasesStorage() throws {
        let site = ManyTagScenario.site(locators: 8, zones: 20, seed: 3)
        let tagCount = 12_000, rounds = 3
        let rows = EnginePrefetchTests.rows(site: site, tags: tagCount, rounds: rounds)
        var engine = try PositioningEngine(site: site, configuration: EngineConfiguration(tracking: .none))
        var peakSlots = 0
        var fixes: [PositionFix] = []
        for (i, m) in rows.enumerated() {
            engine.ingest(m)
            if i & 1023 == 1023 {
                peakSlots = max(peakSlots, engine.retainedCounts.parkingSlots)
                fixes += engine.drainFixes()
            }
        }
        // The burst happened (the second rounds waited for the first rounds of the later tags) …
        #expect(peakSlots >= ReorderBuffer.releaseSlots, "peak \(peakSlots) parking slots")
        // … and its storage is gone now that the rounds close complete.
        #expect(engine.retainedCounts.parkingSlots == 0)
        engine.finish()
        fixes += engine.drainFixes()
        #expect(fixes.count == tagCount * rounds)
        #expect(zip(fixes, fixes.dropFirst()).allSatisfy { $0.timeSeconds <= $1.timeSeconds })
        for k in [0, 1, 4_500, tagCount - 1] {
            let tag = TagID("T\(k)")
            var alone = try PositioningEngine(site: site, configuration: EngineConfiguration(tracking: .none))
            for m in rows where m.tag == tag { alone.ingest(m) }
            alone.finish()
            #expect(fixes.filter { $0.tag == tag } == alone.drainFixes(), "tag \(tag)")
        }
    }
}
