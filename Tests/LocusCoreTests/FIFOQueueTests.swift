@testable import LocusCore
import Testing

@Suite("FIFO queue")
struct FIFOQueueTests {
    @Test("elements leave in the order they came, across emptying and compaction")
    func order() {
        var queue = FIFOQueue<Int>()
        #expect(queue.isEmpty && queue.popFirst() == nil)
        var next = 0, expected = 0
        // Never runs dry for 5,000 pops (the front is compacted), then drains.
        for _ in 0..<5_000 {
            queue.append(next); next += 1
            queue.append(next); next += 1
            #expect(queue.popFirst() == expected); expected += 1
        }
        #expect(queue.count == next - expected)
        while let v = queue.popFirst() { #expect(v == expected); expected += 1 }
        #expect(expected == next && queue.isEmpty)
        queue.append(7)
        #expect(queue.count == 1 && queue.popFirst() == 7 && queue.popFirst() == nil)
    }
}
