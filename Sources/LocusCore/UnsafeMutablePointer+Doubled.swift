extension UnsafeMutablePointer {
    /// Memory for twice `capacity` elements with this memory's first `count` moved into it (this
    /// memory is freed): the growth step of the plain growable runs the replay's reader writes rows
    /// into (`TraceRowRun`, `ShardRows`), which skip `Array.append`'s per-element checks.
    package func doubled(count: Int, capacity: Int) -> (base: UnsafeMutablePointer<Pointee>, capacity: Int) {
        let larger = UnsafeMutablePointer<Pointee>.allocate(capacity: 2 * capacity)
        larger.moveInitialize(from: self, count: count)
        deallocate()
        return (larger, 2 * capacity)
    }
}
