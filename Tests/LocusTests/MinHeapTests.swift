@testable import Locus
import LocusCore
import Testing

@Suite("The engine's min-heap")
struct MinHeapTests {
    /// A total order with many equal keys (ties broken by the second field), as the engine's entries are.
    struct Entry: Comparable, Sendable {
        var key: Double
        var id: Int
        static func < (a: Entry, b: Entry) -> Bool { a.key < b.key || (a.key == b.key && a.id < b.id) }
    }

    @Test("pushes, pops and top replacements in any mix come out exactly as a sorted reference, for sizes up to 500",
          arguments: [1, 2, 3, 4, 5, 16, 17, 100, 500])
    func againstSortedReference(size: Int) {
        var rng = SeededGenerator(seed: UInt64(size))
        var heap = MinHeap<Entry>()
        var reference: [Entry] = []
        var nextID = 0
        for step in 0..<(10 * size + 50) {
            let roll = rng.next() % 10
            if roll < 5 || reference.count < size / 2 {
                let e = Entry(key: Double(rng.next() % 50), id: nextID)
                nextID += 1
                heap.push(e)
                reference.append(e)
            } else if roll < 8 {
                let popped = heap.pop()
                let least = reference.min()
                #expect(popped == least, "step \(step)")
                if let least, let i = reference.firstIndex(of: least) { reference.remove(at: i) }
            } else if !reference.isEmpty {
                // The engine's requeue: the top replaced by a later key.
                let top = heap.top!
                #expect(top == reference.min(), "step \(step)")
                let later = Entry(key: top.key + Double(rng.next() % 5), id: top.id)
                heap.replaceTop(with: later)
                reference[reference.firstIndex(of: top)!] = later
            }
            #expect(heap.count == reference.count)
            #expect(heap.top == reference.min())
        }
        var drained: [Entry] = []
        while let e = heap.pop() { drained.append(e) }
        #expect(drained == reference.sorted())
    }
}
