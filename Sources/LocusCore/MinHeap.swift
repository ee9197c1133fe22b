/// A binary min-heap of `Comparable` elements. Push and pop O(log n); no allocation once the
/// storage has grown to its working size.
///
/// The order comes from the element's `<` (statically dispatched after specialisation), not from a
/// stored closure: a closure comparator cost an indirect call and a context retain per comparison.
/// Sifting moves a hole, not swapped pairs, inside one `withUnsafeMutableBufferPointer` (one
/// uniqueness check per operation, not one per level); the resulting layout is the one pairwise
/// swaps give.
///
/// The one heap of the package: the engine's due, start and reorder heaps and the zone judge's
/// deadlines. Public and inlinable, so that each user's element type is specialised in its own
/// module (with `package` access the toolchain did not specialise it across modules: the engine's
/// per-fix instruction count tripled); `import Locus` does not re-export it.
public struct MinHeap<Element: Comparable & Sendable>: Sendable {
    @usableFromInline var storage: [Element] = []

    /// An empty heap.
    @inlinable public init() {}

    /// The least element, or nil when empty.
    @inlinable @inline(__always) public var top: Element? { storage.first }
    /// The number of elements.
    @inlinable public var count: Int { storage.count }
    /// True when the heap holds nothing.
    @inlinable public var isEmpty: Bool { storage.isEmpty }

    /// Adds `element` (sift up). O(log n).
    @inlinable public mutating func push(_ element: Element) {
        storage.append(element)
        storage.withUnsafeMutableBufferPointer { h in
            var i = h.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard element < h[parent] else { break }
                h[i] = h[parent]
                i = parent
            }
            h[i] = element
        }
    }

    /// Removes and returns the least element (sift down). O(log n).
    @discardableResult
    @inlinable public mutating func pop() -> Element? {
        guard let first = storage.first else { return nil }
        let last = storage.removeLast()
        if !storage.isEmpty { siftDown(last) }
        return first
    }

    /// Replaces the least element with `element` (one sift down: a pop and a push in one pass),
    /// which must not be empty. O(log n).
    @inlinable public mutating func replaceTop(with element: Element) {
        precondition(!storage.isEmpty, "MinHeap.replaceTop: empty heap")
        siftDown(element)
    }

    /// Puts `element` at the root and sifts it down.
    @inlinable mutating func siftDown(_ element: Element) {
        storage.withUnsafeMutableBufferPointer { h in
            let n = h.count
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                guard l < n else { break }
                var m = l
                if r < n, h[r] < h[l] { m = r }
                guard h[m] < element else { break }
                h[i] = h[m]
                i = m
            }
            h[i] = element
        }
    }

    /// Empties the heap, keeping its storage.
    @inlinable public mutating func removeAll() { storage.removeAll(keepingCapacity: true) }
}
