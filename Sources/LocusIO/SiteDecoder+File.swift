import Foundation
import LocusCore

extension SiteDecoder {
    /// Reads and decodes the site file at `path` (see `decode(_:file:)`); errors name `path` as the file.
    /// - Throws: `LocusError` `.fileUnreadable` (E5001) when the file cannot be read, otherwise the
    ///   errors of `decode(_:file:)`.
    public static func load(path: String) throws(LocusError) -> Site {
        try decode(bytes(path: path), file: path)
    }

    /// `validate(_:file:)` of the file at `path`: every problem, not just the first. A file that
    /// cannot be read gives the one error E5001.
    public static func validate(path: String) -> (site: Site?, errors: [LocusError]) {
        do {
            return validate(try bytes(path: path), file: path)
        } catch {
            return (nil, [error])
        }
    }

    /// `load(path:)`, and how each locator address was written (see `decodeNotated(_:file:)`).
    /// - Throws: as `load(path:)`.
    public static func loadNotated(path: String) throws(LocusError) -> (site: Site, addressNotation: SiteAddressNotation) {
        try decodeNotated(bytes(path: path), file: path)
    }

    /// The file's bytes.
    /// - Throws: `E5001` when the file cannot be read.
    private static func bytes(path: String) throws(LocusError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LocusError(.fileUnreadable, "cannot read the site file (missing, a directory, or no permission)",
                             context: .init(file: path))
        }
        return [UInt8](data)
    }
}
