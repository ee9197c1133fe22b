// FloorSessionExample: a FloorSession fed by a TraceProvider, printing positions and zone events.
//
//   swift run FloorSessionExample [SITE.json] [TRACE.csv]
//
// Defaults: Fixtures/sites/hall.json and Fixtures/traces/hall-walk.csv (two tags walking through
// the hall's zones for 90 s), played as fast as possible. Exits as `locus` does: 0 success, 1 the
// work failed at run time, 2 invalid input (a missing or invalid site or trace), with the error on
// stderr.
import Foundation
import Locus

let arguments = CommandLine.arguments
let sitePath = arguments.count > 1 ? arguments[1] : "Fixtures/sites/hall.json"
let tracePath = arguments.count > 2 ? arguments[2] : "Fixtures/traces/hall-walk.csv"

/// A sink that counts what it is handed (a real one would upload the batch).
struct CountingSink: PositionSink {
    func deliver(_ batch: PositionBatch) throws {
        print("  → batch \(batch.sequence): \(batch.positions.count) positions delivered")
    }
}

func format(_ value: Double) -> String {
    let scaled = (value * 100).rounded() / 100
    return "\(scaled)"
}

do throws(LocusError) {
    let session = try FloorSession(sitePath: sitePath, sink: CountingSink())
    session.setDebugLog(minimumLevel: .info) { level, text in print("[\(level)] \(text)") }
    try session.setLanguage("en")
    let firstFloor = session.site.floors[0]  // a site has at least one floor (E3107 otherwise)
    try session.setFloorMap(firstFloor.id, buildingID: session.site.building.id)

    session.onPosition = { fix in
        // Print one position per tag and second to keep the output short.
        let t = fix.timeSeconds
        guard (t - t.rounded(.down)) < 0.25 else { return }
        print("t=\(format(t)) \(fix.tag): (\(format(fix.position.x)), \(format(fix.position.y))) ±\(format(fix.horizontalAccuracyMeters)) m")
    }
    session.onZoneEnter = { zone, event in print("t=\(format(event.timeSeconds)) \(event.tag) entered \(zone.id) \(zone.name)") }
    session.onZoneExit = { zone, event in print("t=\(format(event.timeSeconds)) \(event.tag) left \(zone.id)") }
    session.onZoneDwell = { zone, seconds, event in print("t=\(format(event.timeSeconds)) \(event.tag) in \(zone.id) for \(format(seconds)) s") }

    try session.begin(provider: try TraceProvider(path: tracePath, pace: .asFastAsPossible))
    await session.waitForProvider()
    session.end()
    // Rows the session could not use are counted by reason, never dropped in silence.
    let skipped = session.diagnostics.skipped
    print("skipped rows: \(skipped.total)" + skipped.nonZero.map { " \($0.reason.rawValue)=\($0.count)" }.joined())
} catch {
    FileHandle.standardError.write(Data("FloorSessionExample: error: \(error)\n".utf8))
    exit(error.code.isRunTimeFailure ? 1 : 2)
}
