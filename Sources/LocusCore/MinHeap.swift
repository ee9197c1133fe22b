/// A binary min-heap of `Comparable` elements. Push and pop O(log n); no allocation once the
/// storage has grown to its working size.
///
/// The order comes from the element's `<` (statically dispatched after specialisation), not from a
/// stored closure: a closure comparator cost an indirect call and a context retain per comparison.
/// Sifting moves a hole, not swapped pairs, inside one `withUnsafeMutableBufferPointer` (one
/// uniqueness check per operation, not one per level); the resulting layout is the one pairwise
/// swaps give.
///
/// The one heap of the package: the engine's reorder heap, the zone judge's deadlines, and the
/// out-of-order part of a `RunQueue` (the engine's due and start times). `@usableFromInline` with `@inlinable` members, so that each user's element type is
/// specialised in its own module: without the type's attribute the toolchain neither inlines nor
/// specialises `package` code across modules (the engine's per-fix instruction count tripled).
@usableFromInline package struct MinHeap<Element: Comparable & Sendable>: Sendable {
    @usableFromInline var storage: [Element] = []

    /// An empty heap.
    @inlinable package init() {}

    /// The least element, or nil when empty.
    @inlinable @inline(__always) package var top: Element? { storage.first }
    /// The number of elements.
    @inlinable package var count: Int { storage.count }
    /// True when the heap holds nothing.
    @inlinable package var isEmpty: Bool { storage.isEmpty }

    /// Adds `element` (sift up). O(log n).
    @inlinable package mutating func push(_ element: Element) {
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
    @inlinable package mutating func pop() -> Element? {
        guard let first = storage.first else { return nil }
        let last = storage.removeLast()
        if !storage.isEmpty { siftDown(last) }
        return first
    }

    /// Replaces the least element with `element` (one sift down: a pop and a push in one pass),
    /// which must not be empty. O(log n).
    @inlinable package mutating func replaceTop(with element: Element) {
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
    @inlinable mutating func removeAll() { storage.removeAll(keepingCapacity: true) }
}
