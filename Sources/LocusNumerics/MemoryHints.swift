internal import CLocusKernels

/// Hints to the heap that change no result, only where memory lives: its mmap threshold and its free
/// pages (`locus_memory.h`). The one place that names those C helpers, so the engine's reorder
/// buffer, the command line and the benchmarks need not import `CLocusKernels` for them.
///
/// (Software prefetch, `locus_prefetch.h`, is `CachePrefetch` beside it.)
package enum MemoryHints {
    /// The threshold `fixMmapThreshold()` sets, in bytes (4 MiB).
    package static var mmapThresholdBytes: Int { Int(LOCUS_MMAP_THRESHOLD_BYTES) }

    /// Fixes the heap's mmap threshold at 4 MiB (`locus_fix_mmap_threshold`, see `locus_memory.h`):
    /// per-tag arrays beyond it get mappings of their own, returned to the system when freed.
    /// Process-wide: for the process's owner (the `locus` command line, a benchmark) to call before
    /// its first allocations.
    package static func fixMmapThreshold() {
        locus_fix_mmap_threshold(LOCUS_MMAP_THRESHOLD_BYTES)
    }

    /// Returns the heap's free pages to the system (`malloc_trim(0)` on glibc). O(heap): for rare
    /// moments, such as after the storage of a burst of waiting fixes was released.
    package static func releaseFreeHeap() {
        locus_release_free_heap()
    }
}
