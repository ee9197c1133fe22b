#if canImport(Glibc)
import Glibc
#endif

/// Reads the process environment (for the locale only; the engine never reads it).
enum ProcessEnvironment {
    /// The value of environment variable `name`, or nil when unset.
    static func value(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        return String(cString: raw)
    }
}
