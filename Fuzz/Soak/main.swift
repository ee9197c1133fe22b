// locus soak (issue #9): simulated hours of many tags streamed through the engine in accelerated
// time, against a reference replay of the same rows. Run it through `scripts/soak`.
//
//   LocusSoak [--hours H] [--tags N] [--seed S] [--chunk-seconds C] [--filter kalman|none]
//             [--max-growth-mb-per-hour M]
//
// The data are generated chunk by chunk with LocusSimulation (walks and ranges, σ 0.1 m, 5 % NLOS,
// 2 % dropouts), so memory never holds more than one chunk of ranges. Two engines get the same rows:
// the reference takes them in one go per chunk; the streamed one gets timer ticks between rows and
// drains at random moments, as a live caller would (the two engines run on two threads, each chunk's
// rows shared read-only). Their fixes and events must be identical, and
// each (tag, zone) event sequence must follow enter → dwell* → exit. Resident memory is sampled
// every simulated hour; from the end of the first (warm-up) hour on, its growth per hour must stay
// under the bound (checked when the run lasts at least 2 simulated hours).
// Prints one JSON line per simulated hour and a final one; exit 0 when every check held, 1 otherwise.
import Dispatch
import Foundation
import Locus
import LocusCore
import LocusTestSupport
import LocusSimulation

struct Options {
    var hours = 1.0
    var tags = 1000
    var seed: UInt64 = 9
    var chunkSeconds = 10.0
    var filter: EngineOptions.Filter = .kalman
    var maximumGrowthMegabytesPerHour = 8.0
}

func parseOptions() -> Options {
    var o = Options()
    var arguments = CommandLine.arguments.dropFirst().makeIterator()
    func value(_ name: String) -> String {
        guard let v = arguments.next() else { fail("missing value for \(name)") }
        return v
    }
    while let a = arguments.next() {
        switch a {
        case "--hours": o.hours = Double(value(a)) ?? -1
        case "--tags": o.tags = Int(value(a)) ?? -1
        case "--seed": o.seed = UInt64(value(a)) ?? 0
        case "--chunk-seconds": o.chunkSeconds = Double(value(a)) ?? -1
        case "--filter": o.filter = value(a) == "none" ? .none : .kalman
        case "--max-growth-mb-per-hour": o.maximumGrowthMegabytesPerHour = Double(value(a)) ?? -1
        case "-h", "--help":
            print("LocusSoak [--hours H] [--tags N] [--seed S] [--chunk-seconds C] [--filter kalman|none] [--max-growth-mb-per-hour M]")
            exit(0)
        default: fail("unknown argument \(a)")
        }
    }
    guard o.hours > 0, o.tags > 0, o.chunkSeconds >= 1, o.maximumGrowthMegabytesPerHour >= 0 else { fail("invalid arguments") }
    return o
}

func fail(_ message: String) -> Never {
    warn(message)
    exit(2)
}

/// Writes a line to stdout, unbuffered (so a piped run shows each hour as it ends).
func emit(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// Writes a line to stderr.
func warn(_ message: String) { FileHandle.standardError.write(Data(("soak: " + message + "\n").utf8)) }


/// The soak venue: a 40 × 25 m hall with 8 locators and 6 zones (every zone reports enter and exit).
func soakSite() -> Site {
    var floor = Floor(id: FloorID("1F"), widthMeters: 40, heightMeters: 25, tagHeightMeters: 1.1)
    let spots: [(Double, Double)] = [(0.3, 0.3), (20, 0.3), (39.7, 0.3), (39.7, 12.5), (39.7, 24.7), (20, 24.7), (0.3, 24.7), (0.3, 12.5)]
    floor.locators = spots.enumerated().map { i, p in
        Locator(address: LocatorAddress(UInt16(0x9DD7 + i)), position: Point3(x: p.0, y: p.1, z: i == 7 ? 2.55 : 2.6))
    }
    func box(_ id: String, _ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double, inCount: Int = 1, dwell: Double = 5) -> Zone {
        var rules = ZoneRules.standard
        rules.inCount = inCount
        rules.inDistanceMeters = 0.5
        rules.dwellSeconds = dwell
        return Zone(id: ZoneID(id), polygon: [Point2(x: x0, y: y0), Point2(x: x1, y: y0), Point2(x: x1, y: y1), Point2(x: x0, y: y1)], rules: rules)
    }
    floor.zones = [box("entrance", 0, 0, 4, 3), box("reception", 8, 2, 14, 7, inCount: 2),
                   box("lounge", 18, 8, 28, 16), box("meeting-a", 30, 16, 38, 23, dwell: 60),
                   box("kitchen", 2, 18, 9, 23), box("corridor", 10, 11, 30, 13, dwell: 0)]
    return Site(building: Site.Building(id: "soak"), floors: [floor])
}

let options = parseOptions()
let site = soakSite()
guard let floor = site.floors.first else { fail("no floor") }
let configuration = EngineConfiguration(EngineOptions(filter: options.filter))
/// One engine and what it released during the current chunk, touched by one thread at a time: the
/// reference side by one `concurrentPerform` iteration, the streamed side by the other, and both by
/// the main thread only between chunks.
final class Side: @unchecked Sendable {
    var engine: PositioningEngine
    var batches: [(fixes: [PositionFix], events: [ZoneEvent])] = []
    var rng: SeededGenerator
    init(_ engine: PositioningEngine, seed: UInt64) {
        self.engine = engine
        rng = SeededGenerator(seed: seed)
    }
    func drain() { batches.append((engine.drainFixes(), engine.drainEvents())) }
}
guard let referenceEngine = try? PositioningEngine(site: site, configuration: configuration),
      let streamedEngine = try? PositioningEngine(site: site, configuration: configuration) else { fail("engine set-up failed") }
let reference = Side(referenceEngine, seed: 0)
let streamed = Side(streamedEngine, seed: options.seed ^ 0xA5A5)
var ranging = RangeSimulationConfiguration(sigmaMeters: 0.1, nlosProbability: 0.05, dropoutProbability: 0.02)
ranging.slotSeconds = 0.25 / Double(options.tags * floor.locators.count + 1)
var comparator = StreamComparator()
let chunks = Int((options.hours * 3600 / options.chunkSeconds).rounded(.up))
let chunksPerHour = max(1, Int((3600 / options.chunkSeconds).rounded()))
var rangesFed = 0
var rssSamples: [(hour: Double, megabytes: Double)] = [(0, ResidentMemory.megabytes())]
let clock = ContinuousClock()
let started = clock.now
var ok = true

func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }

for chunk in 0..<chunks {
    let start = Double(chunk) * options.chunkSeconds
    let recording = SimulatedRecording.simulate(floor: floor, tagCount: options.tags, durationSeconds: options.chunkSeconds,
                                                seed: options.seed &+ UInt64(chunk) &* 0x9E37_79B9, ranging: ranging,
                                                truthRateHertz: 1 / options.chunkSeconds)
    let rows = recording.ranges.map { m -> RangeMeasurement in
        var row = m
        row.timeSeconds += start
        return row
    }
    let endOfChunk = start + options.chunkSeconds
    DispatchQueue.concurrentPerform(iterations: 2) { side in
        if side == 0 {
            // The reference: every row in one go, drained once per chunk.
            for row in rows { reference.engine.ingest(row) }
            reference.drain()
            return
        }
        // The streamed run: timer ticks between rows and drains at random moments.
        for (i, row) in rows.enumerated() {
            streamed.engine.ingest(row)
            let u = streamed.rng.nextUnit()
            if u < 0.02 {
                // A timer tick between this row and the next (never past it).
                let next = i + 1 < rows.count ? rows[i + 1].timeSeconds : endOfChunk
                streamed.engine.advance(toSeconds: row.timeSeconds + (next - row.timeSeconds) * streamed.rng.nextUnit())
            } else if u < 0.025 {
                streamed.drain()
            }
        }
    }
    rangesFed += rows.count
    for b in reference.batches { comparator.add(side: 0, fixes: b.fixes, events: b.events) }
    for b in streamed.batches { comparator.add(side: 1, fixes: b.fixes, events: b.events) }
    reference.batches.removeAll(keepingCapacity: true)
    streamed.batches.removeAll(keepingCapacity: true)
    if (chunk + 1) % chunksPerHour == 0 || chunk + 1 == chunks {
        comparator.add(side: 1, fixes: streamed.engine.drainFixes(), events: streamed.engine.drainEvents())
        let rss = ResidentMemory.megabytes()
        rssSamples.append((Double(chunk + 1) * options.chunkSeconds / 3600, rss))
        let wall = seconds(clock.now - started)
        let hour = Double(chunk + 1) * options.chunkSeconds / 3600
        emit("{\"simulated_h\": \(hour), \"ranges\": \(rangesFed), \"fixes\": \(comparator.matchedFixes), \"events\": \(comparator.matchedEvents), \"mismatches\": \(comparator.mismatches), \"sequence_violations\": \(comparator.sequenceViolations), \"rss_mb\": \(rss), \"wall_s\": \(wall), \"ranges_per_s\": \(Double(rangesFed) / max(wall, 1e-9))}")
    }
}
reference.engine.finish()
streamed.engine.finish()
comparator.add(side: 0, fixes: reference.engine.drainFixes(), events: reference.engine.drainEvents())
comparator.add(side: 1, fixes: streamed.engine.drainFixes(), events: streamed.engine.drainEvents())
// Growth after the first (warm-up) hour, gated when at least one steady hour follows it.
let steady = rssSamples.first { $0.hour >= 1 }
let last = rssSamples[rssSamples.count - 1]
var growthPerHour: Double? = nil
if let steady, last.hour - steady.hour >= 1 { growthPerHour = (last.megabytes - steady.megabytes) / (last.hour - steady.hour) }
if comparator.mismatches > 0 || comparator.unmatched > 0 || comparator.sequenceViolations > 0 { ok = false }
if let g = growthPerHour, g > options.maximumGrowthMegabytesPerHour { ok = false }
let growthText = growthPerHour.map { "\($0)" } ?? "null"
let counts = comparator.eventCounts
emit("{\"done\": \(ok), \"simulated_h\": \(options.hours), \"tags\": \(options.tags), \"ranges\": \(rangesFed), \"fixes\": \(comparator.matchedFixes), \"enter\": \(counts[.enter] ?? 0), \"exit\": \(counts[.exit] ?? 0), \"dwell\": \(counts[.dwell] ?? 0), \"mismatches\": \(comparator.mismatches), \"unmatched\": \(comparator.unmatched), \"sequence_violations\": \(comparator.sequenceViolations), \"rss_start_mb\": \(rssSamples[0].megabytes), \"rss_1h_mb\": \(steady.map { "\($0.megabytes)" } ?? "null"), \"rss_last_mb\": \(last.megabytes), \"rss_growth_mb_per_h\": \(growthText), \"wall_s\": \(seconds(clock.now - started))}")
for p in comparator.problems { warn(p) }
exit(ok ? 0 : 1)
