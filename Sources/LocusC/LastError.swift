#if canImport(Glibc)
import Glibc
#endif
import LocusCore

/// The calling thread's last failure: its status and message (a pthread key; freed when the thread ends).
///
/// Each failing entry point records its error here before returning the status; successful calls
/// leave it alone (like `errno`). Only the owning thread touches its slot.
enum LastError {
    /// One thread's record.
    final class Slot {
        var status: Int32 = 0
        var message: [UInt8] = []
    }

    /// The pthread key of the slots; its destructor releases a thread's slot at thread exit.
    private struct Key: Sendable { let value: pthread_key_t }
    private static let key: Key = {
        var value = pthread_key_t()
        _ = pthread_key_create(&value) { pointer in
            guard let pointer else { return }
            Unmanaged<Slot>.fromOpaque(pointer).release()
        }
        return Key(value: value)
    }()

    /// This thread's slot, created on first use.
    static var slot: Slot {
        if let pointer = pthread_getspecific(key.value) {
            return Unmanaged<Slot>.fromOpaque(pointer).takeUnretainedValue()
        }
        let slot = Slot()
        _ = pthread_setspecific(key.value, Unmanaged.passRetained(slot).toOpaque())
        return slot
    }

    /// Records `error` as this thread's last failure and returns its status.
    @discardableResult
    static func record(_ error: LocusError) -> Int32 {
        let s = slot
        s.status = Status.code(error.code)
        s.message = Array(error.description.utf8)
        return s.status
    }
}

/// Status codes: `LOCUS_OK` (0) or the number of a `LocusErrorCode` (E3104 → 3104).
enum Status {
    /// `LOCUS_OK`.
    static let ok: Int32 = 0

    /// The status of `code`: its digits as a number.
    static func code(_ code: LocusErrorCode) -> Int32 {
        Int32(String(code.rawValue.dropFirst())) ?? 1003
    }

    /// Runs an entry point's body: `LOCUS_OK` when it returns, the error's status (recorded as the
    /// thread's last error) when it throws.
    static func guarded(_ body: () throws(LocusError) -> Void) -> Int32 {
        do {
            try body()
            return ok
        } catch {
            return LastError.record(error)
        }
    }

    /// Static names by status: "E3104" for every `LocusErrorCode` (never freed).
    private struct Names: @unchecked Sendable {
        let byStatus: [Int32: UnsafePointer<CChar>]
    }
    private static let names: Names = {
        var table: [Int32: UnsafePointer<CChar>] = [:]
        for c in LocusErrorCode.allCases {
            if let text = CText.permanent(c.rawValue) { table[code(c)] = text }
        }
        return Names(byStatus: table)
    }()

    /// The static name of `status`: "OK", "E3104", or "unknown".
    static func name(_ status: Int32) -> UnsafePointer<CChar> {
        if status == ok { return cString("OK") }
        return names.byStatus[status] ?? cString("unknown")
    }

    /// The NUL-terminated bytes of a static string literal.
    static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
