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
    package var rows: UnsafeBufferPointer<TraceRow> { UnsafeBufferPointer(start: base, count: count) }

    /// Forgets the rows, keeping the memory.
    package func removeAll() { count = 0 }

    /// Takes back the memory a writer filled (grown with `UnsafeMutablePointer.doubled`).
    func adopt(base: UnsafeMutablePointer<TraceRow>, count: Int, capacity: Int) {
        self.base = base
        self.count = count
        self.capacity = capacity
    }
}
