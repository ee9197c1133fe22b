import LocusCommandLine
#if canImport(Glibc)
import Glibc
#endif

exit(LocusTool.run(Array(CommandLine.arguments.dropFirst()), console: .standard))
