import Foundation
import LocusTestSupport
import Testing

@Suite("FloorSessionExample (a client of the public API)")
struct ExampleTests {
    /// Runs the built example with `arguments`; returns its exit status and stderr.
    static func run(_ arguments: [String]) throws -> (status: Int32, err: String) {
        let process = Process()
        process.executableURL = SessionFixtures.productsDirectory.appendingPathComponent("FloorSessionExample")
        process.arguments = arguments
        process.currentDirectoryURL = TestPaths.repositoryRoot
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test("the example exits 0 on the bundled hall, and 2 with the error on stderr for a missing or invalid site or trace")
    func exitStatus() throws {
        let ok = try Self.run([])
        #expect(ok.status == 0, "\(ok.err)")
        let missingSite = try Self.run(["/nonexistent/site.json"])
        #expect(missingSite.status == 2 && missingSite.err.contains("E5001"), "\(missingSite.err)")
        let invalidSite = try Self.run([TestPaths.fixture("sites/invalid/duplicate-address.json")])
        #expect(invalidSite.status == 2 && invalidSite.err.contains("E3104"), "\(invalidSite.err)")
        let missingTrace = try Self.run([TestPaths.fixture("sites/hall.json"), "/nonexistent/trace.csv"])
        #expect(missingTrace.status == 2 && missingTrace.err.contains("error:"), "\(missingTrace.err)")
    }
}
