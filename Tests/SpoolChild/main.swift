// SpoolChild: the child process of the durable-spool kill test (Tests/LocusTests/SpoolKillTests.swift).
//
//   SpoolChild run     SITE TRACE SPOOL DELIVERED EMITTED [SPEED]
//   SpoolChild recover SITE TRACE SPOOL DELIVERED EMITTED
//
// `run` plays TRACE into a FloorSession (floor map: the site's first floor) whose sink appends each
// batch to DELIVERED (`sequence<TAB>t<TAB>tag<TAB>x<TAB>y` per position, fsynced before it
// acknowledges) with a durable spool in SPOOL and 50 positions per batch; every position seen by
// `onPosition` is appended to EMITTED. The trace plays through a TraceProvider at SPEED × real time
// (default 30: 3 s for the 90 s hall walk) so that a parent can kill it mid-stream. `recover` starts a session on the same spool and ends it: pending
// batches are delivered first.
#if canImport(Glibc)
import Glibc
#endif
import Locus

/// Appends lines to a file with `write` (O_APPEND), optionally fsyncing.
final class AppendFile: Sendable {
    let descriptor: Int32
    init(_ path: String) {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        precondition(descriptor >= 0, "cannot open \(path)")
    }
    func append(_ text: String, sync: Bool) {
        var bytes = Array(text.utf8)
        let n = bytes.withUnsafeMutableBytes { write(descriptor, $0.baseAddress, $0.count) }
        precondition(n == bytes.count, "short write")
        if sync { precondition(fsync(descriptor) == 0, "fsync failed") }
    }
}

/// The sink: one line per position, fsynced, then acknowledged.
struct FileSink: PositionSink {
    let file: AppendFile
    func deliver(_ batch: PositionBatch) throws {
        var text = ""
        for p in batch.positions {
            text += "\(batch.sequence)\t\(p.timeSeconds)\t\(p.tag.rawValue)\t\(p.position.x)\t\(p.position.y)\n"
        }
        file.append(text, sync: true)
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 7 else {
    print("usage: SpoolChild run|recover SITE TRACE SPOOL DELIVERED EMITTED [SPEED]")
    exit(2)
}
let mode = arguments[1], sitePath = arguments[2], tracePath = arguments[3]
let spool = arguments[4], delivered = AppendFile(arguments[5]), emitted = AppendFile(arguments[6])
let speed = arguments.count > 7 ? Double(arguments[7]) ?? 30 : 30

do {
    let configuration = FloorSession.Configuration(delivery: DeliveryPolicy(maximumPositions: 50, spoolDirectory: spool))
    let session = try FloorSession(sitePath: sitePath, configuration: configuration, sink: FileSink(file: delivered))
    session.setDebugLog(minimumLevel: .warn) { level, text in print("\(level): \(text)") }
    try session.setFloorMap(session.site.floors[0].id, buildingID: session.site.building.id)
    session.onPosition = { p in emitted.append("\(p.timeSeconds)\t\(p.tag.rawValue)\n", sync: false) }
    if mode == "run" {
        try session.begin(provider: try TraceProvider(path: tracePath, pace: .realTime(speed: speed)))
        await session.waitForProvider()
    } else {
        try session.begin()
    }
    session.end()
    print("done")
} catch {
    print("error: \(error)")
    exit(1)
}
