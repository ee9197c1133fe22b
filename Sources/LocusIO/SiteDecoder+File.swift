import Foundation
import LocusCore

extension SiteDecoder {
    /// Reads and decodes the site file at `path` (see `decode(_:file:)`); errors name `path` as the file.
    /// - Throws: `LocusError` `.fileUnreadable` (E5001) when the file cannot be read, otherwise the
    ///   errors of `decode(_:file:)`.
    package static func load(path: String) throws(LocusError) -> Site {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LocusError(.fileUnreadable, "cannot read the site file (missing, a directory, or no permission)",
                             context: .init(file: path))
        }
        return try decode([UInt8](data), file: path)
    }
}
