/// A binary min-heap ordered by `precedes`. Push and pop O(log n); no allocation once the
/// storage has grown to its working size.
package struct MinHeap<Element: Sendable>: Sendable {
    private var storage: [Element] = []
    private let precedes: @Sendable (Element, Element) -> Bool

    package init(precedes: @escaping @Sendable (Element, Element) -> Bool) { self.precedes = precedes }

    package var top: Element? { storage.first }
    package var count: Int { storage.count }
    package var isEmpty: Bool { storage.isEmpty }

    package mutating func push(_ element: Element) {
        storage.append(element)
        var i = storage.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard precedes(storage[i], storage[parent]) else { break }
            storage.swapAt(i, parent)
            i = parent
        }
    }

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
                if l < n, precedes(storage[l], storage[m]) { m = l }
                if r < n, precedes(storage[r], storage[m]) { m = r }
                if m == i { break }
                storage.swapAt(i, m)
                i = m
            }
        }
        return first
    }
}
