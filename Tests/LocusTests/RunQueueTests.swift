@testable import Locus
@testable import LocusCore
import Testing

@Suite("The engine's run queue")
struct RunQueueTests {
    /// A total order with many equal keys (ties broken by the second field), as the engine's entries are.
    struct Entry: Comparable, Sendable {
        var key: Double
        var id: Int
        static func < (a: Entry, b: Entry) -> Bool { a.key < b.key || (a.key == b.key && a.id < b.id) }
    }

    @Test("pushes mostly in order, some out of order, pops and top replacements come out exactly as a sorted reference",
          arguments: [1, 2, 3, 17, 100, 500, 3000])
    func againstSortedReference(size: Int) {
        var rng = SeededGenerator(seed: UInt64(size) &+ 7)
        var queue = RunQueue<Entry>()
        var reference: [Entry] = []
        var nextID = 0
        var clock = 0.0
        for step in 0..<(10 * size + 50) {
            let roll = rng.next() % 10
            if roll < 5 || reference.count < size / 2 {
                // Mostly in order (the clock moves on), one in five earlier than the latest.
                clock += Double(rng.next() % 3)
                let key = rng.next() % 5 == 0 ? max(0, clock - Double(rng.next() % 20)) : clock
                let e = Entry(key: key, id: nextID)
                nextID += 1
                queue.push(e)
                reference.append(e)
            } else if roll < 8 {
                let popped = queue.pop()
                let least = reference.min()
                #expect(popped == least, "step \(step)")
                if let least, let i = reference.firstIndex(of: least) { reference.remove(at: i) }
            } else if !reference.isEmpty {
                // The engine's requeue: the top replaced by a later key.
                let top = queue.top!
                #expect(top == reference.min(), "step \(step)")
                let later = Entry(key: top.key + Double(rng.next() % 5), id: top.id)
                queue.replaceTop(with: later)
                reference[reference.firstIndex(of: top)!] = later
            }
            #expect(queue.count == reference.count)
            #expect(queue.top == reference.min())
        }
        var drained: [Entry] = []
        while let e = queue.pop() { drained.append(e) }
        #expect(drained == reference.sorted())
        #expect(queue.isEmpty)
    }

    @Test("runElement(ahead:) names the run's elements in the order they will surface, nil past its end")
    func runElementAhead() {
        var queue = RunQueue<Entry>()
        // Wrapped around the ring: pushes and pops move the head.
        for i in 0..<40 { queue.push(Entry(key: Double(i), id: i)) }
        for _ in 0..<30 { queue.pop() }
        for i in 40..<60 { queue.push(Entry(key: Double(i), id: i)) }
        for k in 0..<30 { #expect(queue.runElement(ahead: k)?.id == 30 + k) }
        #expect(queue.runElement(ahead: 30) == nil)
        // An out-of-order push goes to the heap: not part of the run.
        queue.push(Entry(key: -1, id: -1))
        #expect(queue.runElement(ahead: 0)?.id == 30)
        #expect(queue.top?.id == -1)
    }

    @Test("in-order pushes and pops keep the storage bounded by the live entries (popped slots are reused)")
    func reclaimsPoppedSlots() {
        var queue = RunQueue<Entry>()
        for i in 0..<100_000 {
            queue.push(Entry(key: Double(i), id: i))
            if i >= 2000 { #expect(queue.pop()?.id == i - 2000) }
        }
        #expect(queue.count == 2000)
        #expect(queue.ring.count <= 2 * 2048)
        #expect(queue.heap.isEmpty)
    }
}
