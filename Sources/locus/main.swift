import LocusCommandLine
import LocusIO
import LocusNumerics
#if canImport(Glibc)
import Glibc
#endif

// Blocks of 4 MiB and more get their own mappings (glibc's threshold otherwise rises as the engine's
// growing per-tag arrays free their old buffers, and the heap keeps freed pages resident; see
// locus_memory.h, and docs/benchmarks.md "Memory per tag" for what it saves).
MemoryHints.fixMmapThreshold()
// A signal that ends a run removes the outputs it was staging (the old files stay as they were).
StagedFileCleanup.installSignalHandlers()
exit(LocusTool.run(Array(CommandLine.arguments.dropFirst()), console: .standard))
