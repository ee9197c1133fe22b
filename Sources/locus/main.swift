import CLocusKernels
import LocusCommandLine
#if canImport(Glibc)
import Glibc
#endif

// Blocks of 4 MiB and more get their own mappings (glibc's threshold otherwise rises as the engine's
// growing per-tag arrays free their old buffers, and the heap keeps freed pages resident: with
// 100,000 live tags ≈ 2.2 KB a tag instead of ≈ 1.9 KB). Smaller blocks — batches, buffers — stay on
// the heap, reused without a system call.
locus_fix_mmap_threshold(4 << 20)
exit(LocusTool.run(Array(CommandLine.arguments.dropFirst()), console: .standard))
