/// A min-priority queue for elements that mostly arrive in order: an ascending **run** (a FIFO,
/// read from its head) takes every push not less than its last element, a `MinHeap` the others.
/// The least element is the lesser of the run's head and the heap's top, so elements leave in the
/// order of one heap holding them all.
///
/// Cost: a push in order and a pop from the run are O(1) and touch memory sequentially (the head
/// and the tail of one array, which the hardware prefetches); only out-of-order pushes pay the
/// heap's O(log n), with a cache miss per level once the heap outgrows the caches. The engine's
/// due and start times arrive in data-time order, so with 100,000 live tags almost every entry
/// takes the run. The run is a ring (a power-of-two array read at `head`, written at
/// `head + runCount`, indices masked): a pop frees its slot at once, and the ring doubles only when
/// full — no allocation once it has grown to its working size. (`head` and `runCount` never exceed
/// the capacity, so the index sums are formed with wrapping arithmetic: no overflow branches.)
///
/// The engine's own (its `EpochScheduler` and `TagEviction`), so it lives in Locus, internal: the
/// `MinHeap` behind it is LocusCore's, `@usableFromInline` with `@inlinable` members, specialised
/// here for the engine's entries. (The attributes here are kept as they were in LocusCore, so the
/// code generated for the engine does not change.)
@usableFromInline struct RunQueue<Element: Comparable & Sendable>: Sendable {
    /// The run's ring: `runCount` elements, ascending, from slot `head` on (indices mod the
    /// capacity, a power of two; empty until the first push).
    @usableFromInline var ring: [Element] = []
    /// The slot of the run's first element.
    @usableFromInline var head = 0
    /// The number of elements in the run.
    @usableFromInline var runCount = 0
    /// Elements pushed out of order.
    @usableFromInline var heap = MinHeap<Element>()

    /// An empty queue.
    @inlinable init() {}

    /// The number of elements.
    @inlinable var count: Int { runCount + heap.count }
    /// True when the queue holds nothing.
    @inlinable var isEmpty: Bool { count == 0 }

    /// The least element, or nil when empty.
    @inlinable @inline(__always) var top: Element? {
        guard runCount > 0 else { return heap.top }
        let first = ring[head]
        if let h = heap.top, h < first { return h }
        return first
    }

    /// The run's element `k` places after its head (nil past the run's end): what will surface
    /// soon when the run leads — for prefetching what it refers to.
    @inlinable @inline(__always) func runElement(ahead k: Int) -> Element? {
        guard k < runCount else { return nil }
        return ring[(head &+ k) & (ring.count &- 1)]
    }

    /// Adds `element`: to the run when it is not less than the run's last element, else to the
    /// heap. O(1) in order (amortised: the ring doubles when full), O(log n) otherwise.
    @inlinable mutating func push(_ element: Element) {
        let mask = ring.count &- 1
        guard runCount == 0 || !(element < ring[(head &+ runCount &- 1) & mask]) else {
            heap.push(element)
            return
        }
        if runCount == ring.count { grow(filler: element) }
        ring[(head &+ runCount) & (ring.count &- 1)] = element
        runCount += 1
    }

    /// Removes and returns the least element. O(1) from the run, O(log n) from the heap.
    @discardableResult
    @inlinable mutating func pop() -> Element? {
        guard runCount > 0 else { return heap.pop() }
        let first = ring[head]
        if let h = heap.top, h < first { return heap.pop() }
        head = (head &+ 1) & (ring.count &- 1)
        runCount -= 1
        return first
    }

    /// Replaces the least element with `element` (a pop and a push: the engine's requeue of an
    /// entry at a later key); the queue must not be empty.
    @inlinable mutating func replaceTop(with element: Element) {
        precondition(!isEmpty, "RunQueue.replaceTop: empty queue")
        pop()
        push(element)
    }

    /// Doubles the ring (at least 16 slots), the run moved to its front in order; new slots hold
    /// `filler` until written.
    @inlinable mutating func grow(filler: Element) {
        var grown = [Element](repeating: filler, count: max(16, 2 * ring.count))
        let mask = ring.count - 1
        for k in 0..<runCount { grown[k] = ring[(head + k) & mask] }
        ring = grown
        head = 0
    }
}
