/// A binary min-heap of `Comparable` elements. Push and pop O(log n); no allocation once the
/// storage has grown to its working size.
///
/// The order comes from the element's `<` (statically dispatched after specialisation), not from a
/// stored closure: a closure comparator cost an indirect call and a context retain per comparison.
package struct MinHeap<Element: Comparable & Sendable>: Sendable {
    private var storage: [Element] = []

    /// An empty heap.
    package init() {}

    /// The least element, or nil when empty.
    @inline(__always) package var top: Element? { storage.first }
    /// The number of elements.
    package var count: Int { storage.count }
    /// True when the heap holds nothing.
    package var isEmpty: Bool { storage.isEmpty }

    /// Adds `element` (sift up). O(log n).
    package mutating func push(_ element: Element) {
        storage.append(element)
        var i = storage.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard storage[i] < storage[parent] else { break }
            storage.swapAt(i, parent)
            i = parent
        }
    }

    /// Removes and returns the least element (sift down). O(log n).
    @discardableResult
    package mutating func pop() -> Element? {
        guard let first = storage.first else { return nil }
        let last = storage.removeLast()
        if !storage.isEmpty {
            storage[0] = last
            var i = 0
            let n = storage.count
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < n, storage[l] < storage[m] { m = l }
                if r < n, storage[r] < storage[m] { m = r }
                if m == i { break }
                storage.swapAt(i, m)
                i = m
            }
        }
        return first
    }

    /// Empties the heap, keeping its storage.
    package mutating func removeAll() { storage.removeAll(keepingCapacity: true) }
}
