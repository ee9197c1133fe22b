import LocusCommandLine
#if canImport(Glibc)
import Glibc
#endif

LocusTool.configureProcess()
exit(LocusTool.run(Array(CommandLine.arguments.dropFirst()), console: .standard))
