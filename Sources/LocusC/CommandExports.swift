#if canImport(Glibc)
import Glibc
#endif
import LocusCommandLine
import LocusCore
import Synchronization

/// `locus_command`: a `locus` subcommand run in-process, exactly as the command line runs it
/// (`LocusTool.run`): what it prints is captured, its exit status returned. For bindings that
/// mirror the command line (the Python package's `locus.geometry`, `locus.calibrate`).
/// - Parameters: `argv` (`argc` UTF-8 strings, the subcommand first, e.g. `geometry --site S --json`),
///   `out`/`err` buffers (NUL-terminated output; `outLength`/`errLength` get the lengths without the
///   NUL even when a buffer is too small), `exitStatus` (0, 1 or 2 as the command documents).
/// - Returns: 0, or E1003 (NULL pointer, bad text, a buffer too small: call again with the lengths).
@c(locus_command)
public func locusCommand(_ argv: UnsafePointer<UnsafePointer<CChar>?>?, _ argc: Int,
                         _ out: UnsafeMutablePointer<CChar>?, _ outCapacity: Int, _ outLength: UnsafeMutablePointer<Int>?,
                         _ err: UnsafeMutablePointer<CChar>?, _ errCapacity: Int, _ errLength: UnsafeMutablePointer<Int>?,
                         _ exitStatus: UnsafeMutablePointer<Int32>?) -> Int32 {
    Status.guarded { () throws(LocusError) in
        guard let argv, argc >= 1 else { throw LocusError(.invalidArgument, "argv is NULL or empty") }
        var arguments: [String] = []
        for k in 0..<argc {
            guard let p = argv[k] else { throw LocusError(.invalidArgument, "argv[\(k)] is NULL") }
            arguments.append(try CText.string(p, field: "argv[\(k)]"))
        }
        let printed = Mutex((out: "", err: ""))
        let console = Console(out: { text in printed.withLock { $0.out += text } }, err: { text in printed.withLock { $0.err += text } })
        let status = LocusTool.run(arguments, console: console)
        exitStatus?.pointee = status
        let (outText, errText) = printed.withLock { ($0.out, $0.err) }
        outLength?.pointee = outText.utf8.count
        errLength?.pointee = errText.utf8.count
        guard outCapacity > outText.utf8.count, errCapacity > errText.utf8.count else {
            throw LocusError(.invalidArgument, "buffer too small: \(outText.utf8.count + 1) and \(errText.utf8.count + 1) bytes needed")
        }
        try CText.copy(Array(outText.utf8), to: out, capacity: outCapacity, length: outLength)
        try CText.copy(Array(errText.utf8), to: err, capacity: errCapacity, length: errLength)
    }
}
