/// Trace rows in memory of their own, for a reader that hands them on as they come (a replay's
/// reading stage): `TraceRowParser.parse(_:isLast:fastRows:into:)` writes each kept row straight
/// into it — no `Array.append` per row (a call and a uniqueness check through the runtime) and no
/// copy afterwards. It grows by doubling and keeps its memory when emptied.
///
/// A reference type, used by one thread at a time (hence `@unchecked Sendable`).
package final class TraceRowRun: @unchecked Sendable {
    /// The rows' memory, how many there are, and room for how many (the parser's writer sets them).
    private(set) var base: UnsafeMutablePointer<TraceRow>
    package private(set) var count = 0
    private(set) var capacity: Int

    /// An empty run with room for `capacity` rows (≥ 1).
    package init(capacity: Int = 1024) {
        self.capacity = max(1, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// The rows (valid until the run changes).
    var rows: UnsafeBufferPointer<TraceRow> { UnsafeBufferPointer(start: base, count: count) }

    /// Calls `body` with a span of the rows (read in place, no copy) and returns its result.
    @inline(__always)
    package func withRows<Result, E: Error>(_ body: (Span<TraceRow>) throws(E) -> Result) throws(E) -> Result {
        try body(rows.span)
    }

    /// Forgets the rows, keeping the memory.
    package func removeAll() { count = 0 }

    /// Takes back the memory a writer filled (grown with `UnsafeMutablePointer.doubled`).
    func adopt(base: UnsafeMutablePointer<TraceRow>, count: Int, capacity: Int) {
        self.base = base
        self.count = count
        self.capacity = capacity
    }
}

extension UnsafeMutablePointer {
    /// Memory for twice `capacity` elements with this memory's first `count` moved into it (this
    /// memory is freed): the growth step of a `TraceRowRun` the parser writes rows into.
    func doubled(count: Int, capacity: Int) -> (base: UnsafeMutablePointer<Pointee>, capacity: Int) {
        let larger = UnsafeMutablePointer<Pointee>.allocate(capacity: 2 * capacity)
        larger.moveInitialize(from: self, count: count)
        deallocate()
        return (larger, 2 * capacity)
    }
}
