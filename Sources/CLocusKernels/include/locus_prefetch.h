// Software prefetch for the engine's per-tag state (see PositioningEngine+Prefetch.swift).
#pragma once
#include <stddef.h>

/// Asks for the cache lines of [p, p + bytes) ahead of a write (`__builtin_prefetch(…, 1, 3)`: into
/// every cache level): one instruction per 64-byte line, no fault on any address, no effect on
/// results. Inlined into the Swift caller (a static inline function of an imported header).
static inline __attribute__((always_inline)) void locus_prefetch_for_write(const void *p, size_t bytes) {
    const char *c = (const char *)p;
    const char *end = c + bytes;
    // The line holding p, then every following line up to the one holding the last byte.
    for (const char *q = (const char *)((size_t)c & ~(size_t)63); q < end; q += 64) __builtin_prefetch(q, 1, 3);
}
