import BenchHarness
import Foundation
import Locus
import LocusCore
import LocusIO
import LocusSimulation
import LocusSolvers

// Whole-pipeline benchmarks: parsing a trace from bytes, and ranges → fixes → zone events in
// memory (8 locators, 50 zones), with and without the filter. Setup stays outside the timed part.
Bench.banner("PipelineBench")

/// A 40 × 25 m hall: 8 locators on the walls at 2.6 m, tag height 1.1 m, 50 random 2–5 m zones.
func benchSite(zones zoneCount: Int, seed: UInt64) -> Site {
    let positions: [(Double, Double)] = [(0, 0), (20, 0), (40, 0), (40, 12.5), (40, 25), (20, 25), (0, 25), (0, 12.5)]
    let locators = positions.enumerated().map { i, p in
        Locator(address: LocatorAddress(UInt16(0x100 + i)), position: Point3(x: p.0, y: p.1, z: 2.6))
    }
    var rng = SeededGenerator(seed: seed)
    var zones: [Zone] = []
    for k in 0..<zoneCount {
        let x = rng.uniform(1, 35), y = rng.uniform(1, 20), w = rng.uniform(2, 5), h = rng.uniform(2, 5)
        zones.append(Zone(id: ZoneID("z\(k)"), polygon: [Point2(x: x, y: y), Point2(x: x + w, y: y), Point2(x: x + w, y: y + h), Point2(x: x, y: y + h)],
                          rules: ZoneRules(inDistanceMeters: 1, inCount: 1, inCountIntervalSeconds: 1, outPeriodSeconds: 3,
                                           priority: k % 3, callInout: true, dwellSeconds: 5)))
    }
    let floor = Floor(id: "1F", originX: 0, originY: 0, widthMeters: 40, heightMeters: 25, tagHeightMeters: 1.1,
                      sessionID: 1, locators: locators, zones: zones)
    return Site(building: .init(id: "bench"), floors: [floor])
}

let site = benchSite(zones: 50, seed: 11)
let tags = Bench.isSmoke ? 2 : 40
let duration = Bench.isSmoke ? 10.0 : 120.0
let recording = SimulatedRecording.simulate(floor: site.floors[0], tagCount: tags, durationSeconds: duration, seed: 3,
                                            ranging: RangeSimulationConfiguration(sigmaMeters: 0.1, nlosProbability: 0.05))
let ranges = recording.ranges
let epochs = ranges.count / 8

// 1. Parsing trace bytes.
var csv = Array("t,tag,anchor,range_m\n".utf8)
for r in ranges {
    DecimalText.append(r.timeSeconds, decimals: 4, to: &csv); csv.append(UInt8(ascii: ","))
    csv.append(contentsOf: r.tag.rawValue.utf8); csv.append(UInt8(ascii: ","))
    DecimalText.append(Int(r.locator.rawValue), to: &csv); csv.append(UInt8(ascii: ","))
    DecimalText.append(r.rangeMeters, decimals: 4, to: &csv); csv.append(UInt8(ascii: "\n"))
}
Bench.measure("parse_trace_rows", operations: ranges.count, extra: ["bytes": "\(csv.count)"]) {
    csv.withUnsafeBufferPointer { buffer in
        let trace = try? TraceReader.parse(buffer, file: "bench.csv")
        precondition(trace?.count == ranges.count, "parse lost rows")
        Bench.blackHole(trace?.count)
    }
}

// 2. The engine: ranges → fixes (→ zone events), in memory, per fix.
func runEngine(_ tracking: EngineConfiguration.Tracking) -> (Int, Int) {
    var engine = (try? PositioningEngine(site: site, configuration: EngineConfiguration(tracking: tracking)))!
    for m in ranges { engine.ingest(m) }
    engine.finish()
    let f = engine.drainFixes().count, e = engine.drainEvents().count
    return (f, e)
}
for (name, tracking) in [("pipeline_raw_ls_50_zones", EngineConfiguration.Tracking.none),
                         ("pipeline_kalman_tight_50_zones", .kalman(.standard)),
                         ("pipeline_kalman_loose_50_zones", .kalman(TrackFilterConfiguration(coupling: .loose)))] {
    let (fixes, events) = runEngine(tracking)
    precondition(fixes > epochs * 9 / 10, "\(name): too few fixes \(fixes) of \(epochs)")
    let r = Bench.measure(name, operations: fixes, runs: 10, extra: ["fixes": "\(fixes)", "events": "\(events)", "tags": "\(tags)"]) {
        Bench.blackHole(runEngine(tracking))
    }
    FileHandle.standardError.write(Data("# \(name): \(Bench.fmt(r.medianNanosecondsPerOp)) ns/fix, \(Bench.fmt(r.opsPerSecond)) fixes/s, \(Bench.fmt(r.opsPerSecond / 4)) tags at 4 Hz per core\n".utf8))
}
