internal import CLocusKernels

/// Software prefetch: a hint that memory is about to be read and written, so that its cache lines
/// travel from memory while other work runs (no effect on results; no fault on any address).
///
/// (The zone judge, in LocusZones, calls `locus_prefetch_for_write` itself: a Swift function calling
/// a C inline function is not inlined into another module.)
///
/// With 100,000 live tags the engine's per-tag state (≈ 1.8 KB a tag) is far beyond the caches and a
/// tag's fix would otherwise wait on one miss after another (≈ 100 ns each) as it reaches its epoch,
/// its filter, its offset estimator and its zone state in turn. Asked for ahead, the misses overlap.
enum CachePrefetch {
    /// The number of tags from which the engine prefetches their state: below it (≈ 1.8 KB a tag,
    /// a core's L2 cache ≈ 1 MB) the state stays in the caches and prefetches would only cost
    /// their instructions.
    static let minimumTags = 512

    /// Prefetches element `index` of `elements` (every line of its `MemoryLayout<T>.stride` bytes)
    /// ahead of a write. `index` must be in bounds.
    @inline(__always)
    static func element<T>(_ index: Int, of elements: UnsafeBufferPointer<T>) {
        locus_prefetch_for_write(elements.baseAddress! + index, MemoryLayout<T>.stride)
    }

    /// Prefetches `bytes` bytes from `pointer` ahead of a write.
    @inline(__always)
    static func bytes(_ pointer: UnsafeRawPointer, count bytes: Int) {
        locus_prefetch_for_write(pointer, bytes)
    }
}
