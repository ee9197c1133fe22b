public import CLocusKernels

/// Software prefetch: a hint that memory is about to be read and written, so that its cache lines
/// travel from memory while other work runs (no effect on results; no fault on any address).
///
/// The one Swift face of `locus_prefetch.h`: the engine (Locus) and the zone judge (LocusZones) ask
/// through it. Its functions are `@inlinable`, so their bodies — one call of a C inline function —
/// are compiled into the caller's module and the prefetch is an instruction there, not a call
/// (a plain function of another module would be a call per prefetch on the per-fix path).
///
/// `public`, not `package`, for that reason alone: Swift 6.3 serialises the bodies of `@inlinable`
/// public declarations only — the `package` spelling built, and `objdump -d` of the release `locus`
/// showed 20 calls to these functions where the `public` one shows none. They take arrays, not
/// pointers: the pointer is made inside, where the body is inlined.
///
/// With 100,000 live tags the engine's per-tag state (docs/benchmarks.md, "Memory per tag") is far
/// beyond the caches and a tag's fix would otherwise wait on one miss after another as it reaches
/// its epoch, its filter, its offset estimator and its zone state in turn. Asked for ahead, the
/// misses overlap.
public enum CachePrefetch {
    /// The number of tags from which the engine prefetches their state: below it (512 tags' state,
    /// docs/benchmarks.md "Memory per tag", is about a core's L2 cache) the state stays in the
    /// caches and prefetches would only cost their instructions.
    @inlinable public static var minimumTags: Int { 512 }

    /// Prefetches element `index` of `elements` (every line of its `MemoryLayout<T>.stride` bytes)
    /// ahead of a write. An index out of bounds prefetches nothing.
    @inlinable @inline(__always)
    public static func element<T>(_ index: Int, of elements: [T]) {
        elements.withUnsafeBufferPointer { e in
            guard index >= 0, index < e.count else { return }
            locus_prefetch_for_write(e.baseAddress! + index, MemoryLayout<T>.stride)
        }
    }

    /// Prefetches elements `start ..< start + count` of `elements` ahead of a write (nothing when
    /// the range is not inside the array).
    @inlinable @inline(__always)
    public static func elements<T>(from start: Int, count: Int, of elements: [T]) {
        elements.withUnsafeBufferPointer { e in
            guard start >= 0, count > 0, start <= e.count - count else { return }
            locus_prefetch_for_write(e.baseAddress! + start, count &* MemoryLayout<T>.stride)
        }
    }
}
