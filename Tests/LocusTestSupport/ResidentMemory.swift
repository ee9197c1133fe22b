#if canImport(Glibc)
import Glibc
#endif

/// The process's resident memory, for the soak test and the soak executable.
public enum ResidentMemory {
    /// Resident set size in MiB, from /proc/self/statm (the second field, in pages); 0 where it
    /// cannot be read.
    public static func megabytes() -> Double {
        guard let file = fopen("/proc/self/statm", "r") else { return 0 }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 256)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return 0 }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let fields = text.split(separator: " ")
        guard fields.count >= 2, let pages = Int(fields[1]) else { return 0 }
        return Double(pages) * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }

    /// False when the tests run under a sanitizer (`scripts/sanitize` sets `LOCUS_SANITIZER`): the
    /// address sanitizer keeps freed memory in quarantine (256 MB) and its shadow grows with the
    /// heap, so resident memory then measures the sanitizer, not the code. Memory bounds are checked
    /// in the normal runs only.
    public static let measuresTheCode = getenv("LOCUS_SANITIZER") == nil

    /// Why a memory bound was not checked.
    public static let sanitizerMessage = "resident memory is not checked under a sanitizer (LOCUS_SANITIZER is set)"
}
