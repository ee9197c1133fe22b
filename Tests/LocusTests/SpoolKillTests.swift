import Foundation
@testable import Locus
import LocusCore
import LocusTestSupport
import Testing

@Suite("Durable spool under SIGKILL")
struct SpoolKillTests {
    /// Runs SpoolChild with `arguments`; returns the process (started).
    static func child(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = SessionFixtures.productsDirectory.appendingPathComponent("SpoolChild")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    static func lines(_ path: String) -> [String] {
        (try? String(contentsOfFile: path, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
    }

    @Test("a child killed with SIGKILL mid-stream loses no position: the next start delivers every one it emitted")
    func killMidStream() throws {
        let directory = TestPaths.temporaryDirectory()
        let spool = directory + "/spool", delivered = directory + "/delivered.tsv", emitted = directory + "/emitted.tsv"
        let common = [SessionFixtures.hallSite, SessionFixtures.hallWalk, spool, delivered, emitted]

        // Reference: the same trace through an uninterrupted child.
        let referenceDirectory = TestPaths.temporaryDirectory()
        let reference = try Self.child(["run", SessionFixtures.hallSite, SessionFixtures.hallWalk, referenceDirectory + "/spool",
                                        referenceDirectory + "/delivered.tsv", referenceDirectory + "/emitted.tsv", "1000"])
        reference.waitUntilExit()
        #expect(reference.terminationStatus == 0)
        let expected = Self.lines(referenceDirectory + "/delivered.tsv").map { $0.split(separator: "\t").dropFirst().joined(separator: "\t") }
        #expect(expected.count > 600)

        // Kill the child once it has emitted at least 120 positions (the trace plays for ~3 s).
        let running = try Self.child(["run"] + common + ["30"])
        var waited = 0
        while Self.lines(emitted).count < 120 && running.isRunning && waited < 60_000 {
            usleep(5_000)
            waited += 5
        }
        #expect(running.isRunning, "the child finished before it could be killed")
        kill(running.processIdentifier, SIGKILL)
        running.waitUntilExit()
        #expect(running.terminationReason == .uncaughtSignal)
        let emittedBeforeKill = Self.lines(emitted)
        #expect(emittedBeforeKill.count >= 120)
        #expect(emittedBeforeKill.count < expected.count)

        // Restart on the same spool: pending batches first.
        let recovery = try Self.child(["recover"] + common)
        recovery.waitUntilExit()
        #expect(recovery.terminationStatus == 0)

        // Every batch once (a batch delivered twice has the same sequence number and lines).
        var seen: Set<String> = []
        var positions: [String] = []
        var bySequence: [String: [String]] = [:]
        for line in Self.lines(delivered) {
            let fields = line.split(separator: "\t", maxSplits: 1)
            bySequence[String(fields[0]), default: []].append(String(fields[1]))
        }
        for key in bySequence.keys.sorted(by: { (UInt64($0) ?? 0) < (UInt64($1) ?? 0) }) {
            guard seen.insert(key).inserted, let batch = bySequence[key] else { continue }
            // A redelivered batch appears twice in a row in the file: keep one copy.
            let half = batch.count / 2
            let once = batch.count % 2 == 0 && half > 0 && Array(batch[..<half]) == Array(batch[half...]) ? Array(batch[..<half]) : batch
            positions += once
        }
        // Every emitted position was delivered, and what was delivered is exactly the reference's prefix.
        #expect(positions.count >= emittedBeforeKill.count)
        #expect(Array(expected.prefix(positions.count)) == positions)
        let deliveredKeys = Set(positions.map { $0.split(separator: "\t").prefix(2).joined(separator: "\t") })
        #expect(emittedBeforeKill.allSatisfy { deliveredKeys.contains($0) })
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool).isEmpty)
    }
}
