import Foundation

/// A `locus` child process for the live tests: standard input kept open and written piece by piece,
/// standard output and error read as they come, signals sent, the exit awaited.
final class LiveProcess: @unchecked Sendable {
    private let process = Process()
    private let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    private let lock = NSLock()
    private var outBytes: [UInt8] = []
    private var errBytes: [UInt8] = []
    private var readers: [Thread] = []

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: StreamingReplayTests.locusPath)
        process.arguments = arguments
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        for (pipe, isOut) in [(stdout, true), (stderr, false)] {
            let t = Thread { [self] in
                while true {
                    let d = pipe.fileHandleForReading.availableData
                    if d.isEmpty { break }
                    lock.withLock { if isOut { outBytes += d } else { errBytes += d } }
                }
            }
            t.start()
            readers.append(t)
        }
    }

    var out: [UInt8] { lock.withLock { outBytes } }
    var outText: String { String(decoding: out, as: UTF8.self) }
    var err: String { lock.withLock { String(decoding: errBytes, as: UTF8.self) } }

    /// Waits (at most `seconds`) until `predicate` holds; returns whether it did.
    @discardableResult
    func wait(seconds: Double = 30, until predicate: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if predicate() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return predicate()
    }

    /// The stream's first stderr line: "locus stream: INPUT → OUTPUT…" (it has opened its input).
    func started() -> String? {
        guard wait(until: { err.contains("\n") }) else { return nil }
        return err.split(separator: "\n").first.map(String.init)
    }

    func write(_ bytes: [UInt8]) { stdin.fileHandleForWriting.write(Data(bytes)) }
    func closeInput() { try? stdin.fileHandleForWriting.close() }
    func signal(_ s: Int32) { kill(process.processIdentifier, s) }

    /// Waits for the exit; its status.
    func finish() -> Int32 {
        process.waitUntilExit()
        for t in readers { while !t.isFinished { Thread.sleep(forTimeInterval: 0.01) } }
        return process.terminationStatus
    }
}
