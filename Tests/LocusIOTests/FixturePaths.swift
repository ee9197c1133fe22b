import Foundation

/// Paths of the repository's fixtures, found from this file's location (Tests/LocusIOTests/…).
enum FixturePaths {
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `Fixtures/sites/<name>`.
    static func site(_ name: String) -> String {
        repositoryRoot.appendingPathComponent("Fixtures/sites").appendingPathComponent(name).path
    }

    /// The bytes of `Fixtures/sites/<name>`, or an empty array when missing (the test then fails on decoding).
    static func siteBytes(_ name: String) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: site(name)) else { return [] }
        return [UInt8](data)
    }
}
