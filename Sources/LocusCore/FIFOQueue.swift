/// A first-in first-out queue on one array and a head index: `append` at the back, `popFirst` from
/// the front in O(1) amortised, no allocation once the array has grown. The array is emptied (its
/// capacity kept) whenever the queue runs dry, and the taken front is dropped once it is at least
/// 1,024 elements and half the array, so a queue that never runs dry stays bounded by twice what it
/// holds. For a queue guarded by its owner's lock (the shard workers' tasks, an MQTT client's
/// incoming messages); `RunQueue` is the priority queue.
package struct FIFOQueue<Element> {
    private var elements: [Element] = []
    private var head = 0

    /// An empty queue.
    package init() {}

    /// The number of elements waiting.
    package var count: Int { elements.count - head }

    /// True when nothing waits.
    var isEmpty: Bool { head == elements.count }

    /// Adds `element` at the back.
    package mutating func append(_ element: Element) { elements.append(element) }

    /// Takes the front element, or nil when the queue is empty.
    package mutating func popFirst() -> Element? {
        guard head < elements.count else { return nil }
        let element = elements[head]
        head += 1
        if head == elements.count {
            elements.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1_024 && head * 2 >= elements.count {
            elements.removeFirst(head)
            head = 0
        }
        return element
    }
}

extension FIFOQueue: Sendable where Element: Sendable {}
