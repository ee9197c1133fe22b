// The heap's mmap threshold, fixed for a process that holds many tags (Sources/locus/main.swift).
#pragma once
#include <stddef.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/// The threshold `locus` fixes (4 MiB): per-tag arrays beyond it get their own mappings, while batches
/// and buffers below it stay on the heap, reused without a system call.
static const size_t LOCUS_MMAP_THRESHOLD_BYTES = (size_t)4 << 20;

/// Fixes glibc's mmap threshold at `bytes` (`mallopt(M_MMAP_THRESHOLD, bytes)`; elsewhere nothing).
///
/// By default the threshold is dynamic: each time a block allocated with mmap is freed, it rises to
/// that block's size (up to 32 MB). An engine's per-tag arrays double as tags arrive, freeing their
/// old buffers, so after the first large one the next buffers of up to 32 MB come from the heap —
/// and the heap keeps the pages of freed buffers resident. With 100,000 tracked tags that is ≈ 9 % more
/// resident memory than the engine holds (PipelineBench `--section memory`; the engine returns the
/// free pages after a start-up burst itself, `locus_release_free_heap`). A fixed threshold keeps
/// every block from `bytes` up in its own mapping, returned to the system when freed. Process-wide:
/// for the process's owner (the `locus` command line) to set, before its first allocations.
static inline void locus_fix_mmap_threshold(size_t bytes) {
#if defined(__GLIBC__)
    (void)mallopt(M_MMAP_THRESHOLD, (int)bytes);
#else
    (void)bytes;
#endif
}

/// Returns the heap's free pages to the system (`malloc_trim(0)`: glibc ≥ 2.8 releases every whole
/// free page, not only the heap's top; elsewhere nothing). For a process that does not fix the mmap
/// threshold, whose heap keeps freed buffers' pages resident. O(heap) (0.4–3.5 ms with 100,000 tags),
/// so for rare moments: the engine's reorder buffer calls it once it has released the storage of a
/// burst of waiting fixes (a stream's first rounds).
static inline void locus_release_free_heap(void) {
#if defined(__GLIBC__)
    (void)malloc_trim(0);
#endif
}
