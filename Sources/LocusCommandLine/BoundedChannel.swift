import Foundation

/// A first-in first-out queue between two threads with room for `capacity` items: `send` waits
/// while it is full, `receive` while it is empty (nil once closed and drained). The stages of a
/// streamed replay (read, solve, write) hand each other blocks through it, so that each runs on
/// its own core and memory stays bounded by the blocks in flight.
final class BoundedChannel<Element: Sendable>: @unchecked Sendable {
    // Guarded by `condition`.
    private var items: [Element] = []
    private var isClosed = false
    private let capacity: Int
    private let condition = NSCondition()

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Appends `item`, waiting for room; false (the item dropped) when the channel was closed.
    @discardableResult
    func send(_ item: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= capacity && !isClosed { condition.wait() }
        guard !isClosed else { return false }
        items.append(item)
        condition.broadcast()
        return true
    }

    /// The next item, waiting for one; nil when the channel is closed and empty.
    func receive() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !isClosed { condition.wait() }
        guard !items.isEmpty else { return nil }
        // Removed at once (a few items at most): a consumed block's memory goes with it.
        let item = items.removeFirst()
        condition.broadcast()
        return item
    }

    /// No more items: `receive` drains what is there, then gives nil; `send` refuses.
    func close() {
        condition.lock()
        isClosed = true
        condition.broadcast()
        condition.unlock()
    }
}
