import LocusCommandLine
import LocusIO
import LocusNumerics
#if canImport(Glibc)
import Glibc
#endif

// Blocks of 4 MiB and more get their own mappings (glibc's threshold otherwise rises as the engine's
// growing per-tag arrays free their old buffers, and the heap keeps freed pages resident: with
// 100,000 tracked tags ≈ 1.7 KB a tag instead of ≈ 1.6 KB; see locus_memory.h).
MemoryHints.fixMmapThreshold()
// A signal that ends a run removes the outputs it was staging (the old files stay as they were).
StagedFileCleanup.installSignalHandlers()
exit(LocusTool.run(Array(CommandLine.arguments.dropFirst()), console: .standard))
