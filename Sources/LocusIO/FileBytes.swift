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

    /// Writes `bytes` to `path` (literally: `-` is a file named so), whole or not at all: written
    /// aside and renamed over what was there (`StagedFile`; through a symlink, to its target).
    /// - Throws: `E5005` naming the file when it can't be written (the old file then stays).
    package static func write(_ bytes: [UInt8], to path: String) throws(LocusError) {
        let file = try StagedFile(path: path)
        try bytes.withUnsafeBytes { raw in Result { () throws(LocusError) in try ByteSink.writeAll(file.descriptor, raw, name: path) } }.get()
        try file.commit()
    }

    /// Writes each file of `files` aside, then puts them all in place: a failure writing any of them
    /// leaves every one as it was (one failing at its rename can still follow others put in place).
    /// - Throws: `E5005` naming the file that can't be written.
    package static func write(_ files: [(bytes: [UInt8], path: String)]) throws(LocusError) {
        var staged: [StagedFile] = []
        for (bytes, path) in files {
            let file = try StagedFile(path: path)
            try bytes.withUnsafeBytes { raw in Result { () throws(LocusError) in try ByteSink.writeAll(file.descriptor, raw, name: path) } }.get()
            staged.append(file)
        }
        for file in staged { try file.commit() }
    }
}
