import Foundation
import LocusCore

/// Whole-file reads and writes with errors that name the file.
package enum FileBytes {
    /// The file's bytes.
    /// - Throws: `E5001` naming the file when it can't be read.
    static func read(path: String) throws(LocusError) -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot read file" : "no such file"
            throw LocusError(.fileUnreadable, reason, context: .init(file: path))
        }
    }

    /// Writes `bytes` to `path`, replacing it.
    /// - Throws: `E5005` naming the file when it can't be written.
    package static func write(_ bytes: [UInt8], to path: String) throws(LocusError) {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        } catch {
            throw LocusError(.fileUnwritable, "cannot write file", context: .init(file: path))
        }
    }
}
