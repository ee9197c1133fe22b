import Foundation

/// Paths the tests use: the repository's fixtures and the shared real datasets beside the project.
public enum TestPaths {
    /// The repository root, found from this file's location (Tests/LocusTestSupport/…).
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `Fixtures/<relative>`.
    public static func fixture(_ relative: String) -> String {
        repositoryRoot.appendingPathComponent("Fixtures").appendingPathComponent(relative).path
    }

    /// `../shared/datasets/<name>` when it exists, else nil (tests then skip with a message).
    public static func dataset(_ name: String) -> String? {
        let url = repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/datasets").appendingPathComponent(name)
        return FileManager.default.fileExists(atPath: url.appendingPathComponent("site.json").path) ? url.path : nil
    }

    /// `../datasets-extra/<relative>` (data kept beside the project, outside the repository: licence or
    /// size) when it holds a `site.json`, else nil (tests then skip with a message).
    public static func extraDataset(_ relative: String) -> String? {
        let url = repositoryRoot.deletingLastPathComponent().appendingPathComponent("datasets-extra").appendingPathComponent(relative)
        return FileManager.default.fileExists(atPath: url.appendingPathComponent("site.json").path) ? url.path : nil
    }

    /// A fresh temporary directory for a test's outputs, inside one directory per test process
    /// (`locus-tests-<pid>` in the system temporary directory) that is removed when the process exits.
    public static func temporaryDirectory() -> String {
        let url = URL(fileURLWithPath: processScratch).appendingPathComponent(UUID().uuidString)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    /// The per-process parent of `temporaryDirectory()`, created on first use with its removal
    /// registered for exit.
    private static let processScratch: String = {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("locus-tests-\(ProcessInfo.processInfo.processIdentifier)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit {
            let path = FileManager.default.temporaryDirectory
                .appendingPathComponent("locus-tests-\(ProcessInfo.processInfo.processIdentifier)").path
            try? FileManager.default.removeItem(atPath: path)
        }
        return path
    }()
}

extension TestPaths {
    /// The bytes of the file at `path`, or an empty array when it is missing (the test then fails
    /// on decoding).
    public static func bytes(_ path: String) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return [UInt8](data)
    }
}
