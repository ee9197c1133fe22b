@testable import LocusCore
import LocusTestSupport
import Testing

/// `TagRegistry.unregister` (issue #41 item 4): deletion from the open-addressing table without
/// tombstones, and freed indices reused by the next new ids.
@Suite("Tag registry: unregister and index reuse")
struct TagRegistryTests {
    @Test("ids added and removed at random (a table at up to half load, its clusters shifted back on each removal): every live id is found at its index, a removed one is not; freed indices are reused, the table does not grow")
    func unregisterKeepsLookups() {
        var registry = TagRegistry()
        var live: [(id: TagID, index: Int)] = []
        var used = Set<Int>()
        var rng = SeededGenerator(seed: 41)
        var next = 0, mostLive = 0
        for step in 0..<20_000 {
            if live.count < 300 || rng.nextUnit() < 0.5 {
                let id = TagID("T\(next)")
                next += 1
                let (index, isNew) = registry.register(id)
                #expect(isNew)
                #expect(used.insert(index.rawValue).inserted, "a live index handed out twice at step \(step)")
                live.append((id, index.rawValue))
                mostLive = max(mostLive, live.count)
            } else {
                let k = Int(rng.nextUnit() * Double(live.count))
                let victim = live[k]
                live.swapAt(k, live.count - 1)
                live.removeLast()
                registry.unregister(TagIndex(victim.index))
                used.remove(victim.index)
                #expect(registry.index(of: victim.id) == nil)
            }
        }
        for (id, index) in live {
            #expect(registry.index(of: id) == TagIndex(index))
            #expect(registry.register(id) == (TagIndex(index), false))
            #expect(registry.isLive(TagIndex(index)))
        }
        #expect(registry.liveCount == live.count)
        #expect(registry.count == mostLive, "indices reused: never more than the most live at once")
    }

    @Test("an id looked up just before it is removed is not served from the recent-lookup cache")
    func recentCacheForgets() {
        var registry = TagRegistry()
        let a = registry.register("A").index
        _ = registry.register("B")
        #expect(registry.register("A") == (a, false))
        registry.unregister(a)
        let again = registry.register("A")
        #expect(again.isNew)
        let c = registry.register("C")
        #expect(c.isNew && c.index != again.index)
    }
}
