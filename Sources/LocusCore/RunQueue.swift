/// A min-priority queue for elements that mostly arrive in order: an ascending **run** (a FIFO,
/// read from its head) takes every push not less than its last element, a `MinHeap` the others.
/// The least element is the lesser of the run's head and the heap's top, so elements leave in the
/// order of one heap holding them all.
///
/// Cost: a push in order and a pop from the run are O(1) and touch memory sequentially (the head
/// and the tail of one array, which the hardware prefetches); only out-of-order pushes pay the
/// heap's O(log n), with a cache miss per level once the heap outgrows the caches. The engine's
/// due and start times arrive in data-time order, so with 100,000 live tags almost every entry
/// takes the run. Popped slots are reclaimed by moving the live part to the front when it is at
/// most half of the array (amortised O(1) per pop); no allocation once the storage has grown to
/// its working size.
///
/// `@usableFromInline` with `@inlinable` members, like `MinHeap`: each user's element type is
/// specialised in its own module.
@usableFromInline package struct RunQueue<Element: Comparable & Sendable>: Sendable {
    /// The run: ascending from `head` to the end; slots before `head` were popped.
    @usableFromInline var run: [Element] = []
    /// The first live slot of `run`.
    @usableFromInline var head = 0
    /// Elements pushed out of order.
    @usableFromInline var heap = MinHeap<Element>()

    /// An empty queue.
    @inlinable package init() {}

    /// The number of elements.
    @inlinable package var count: Int { run.count - head + heap.count }
    /// True when the queue holds nothing.
    @inlinable package var isEmpty: Bool { count == 0 }

    /// The least element, or nil when empty.
    @inlinable @inline(__always) package var top: Element? {
        guard head < run.count else { return heap.top }
        let first = run[head]
        if let h = heap.top, h < first { return h }
        return first
    }

    /// Adds `element`: to the run when it is not less than the run's last element, else to the
    /// heap. O(1) in order, O(log n) otherwise.
    @inlinable package mutating func push(_ element: Element) {
        if head == run.count || !(element < run[run.count - 1]) {
            run.append(element)
        } else {
            heap.push(element)
        }
    }

    /// Removes and returns the least element. O(1) from the run (amortised), O(log n) from the heap.
    @discardableResult
    @inlinable package mutating func pop() -> Element? {
        guard head < run.count else { return heap.pop() }
        let first = run[head]
        if let h = heap.top, h < first { return heap.pop() }
        head += 1
        if head == run.count {
            run.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024, 2 * head >= run.count {
            run.removeSubrange(0..<head)
            head = 0
        }
        return first
    }

    /// Replaces the least element with `element` (a pop and a push: the engine's requeue of an
    /// entry at a later key); the queue must not be empty.
    @inlinable package mutating func replaceTop(with element: Element) {
        precondition(!isEmpty, "RunQueue.replaceTop: empty queue")
        pop()
        push(element)
    }

    /// Empties the queue, keeping its storage.
    @inlinable package mutating func removeAll() {
        run.removeAll(keepingCapacity: true)
        head = 0
        heap.removeAll()
    }
}
