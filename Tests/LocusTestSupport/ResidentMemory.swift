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
}
