// ZonesBench — per-fix cost of the zone judge against the number of zones.
//
// Scene A ("fixed floor", the target scene): a 1,000 × 1,000 m floor; n random convex quadrilateral
// zones (sides 3–12 m, default rules, priority 0 or 1); 100 tags walking at 1.4 m/s with 4 Hz fixes,
// interleaved in time order (a shared clock, as in a live stream). With more zones on the same floor
// a fix has more zones in reach (≈ 0.002 at 10 zones, ≈ 1.8 at 10,000), so part of the growth is
// real judgement work, not index overhead.
// Scene B ("fixed density"): the same, with the floor's area grown with n (100 m² per zone, as
// scene A at 10,000 zones), so every size has the same zones in reach per fix: its ratio isolates
// how the index scales.
// Setup (scene, judge construction) is outside the timed part; each run judges every fix from a
// fresh copy of the judge, so tag and pair state are built as in a stream.
// Targets: ns/fix at 10,000 zones ≤ 3 × ns/fix at 10 zones; ≥ 5,000,000 fixes/s at 50 zones.
import BenchHarness
import Foundation
import LocusCore
import LocusZones

Bench.banner("ZonesBench")

let tagCount = 100
let stepsPerTag = Bench.isSmoke ? 20 : 400

func makeZones(_ count: Int, floorSideMeters: Double, seed: UInt64) -> [Zone] {
    var rng = SeededGenerator(seed: seed)
    return (0..<count).map { i in
        let x = rng.uniform(0, floorSideMeters - 12), y = rng.uniform(0, floorSideMeters - 12)
        let w = rng.uniform(3, 12), h = rng.uniform(3, 12)
        var r = ZoneRules.standard
        r.priority = Int(rng.next() % 2)
        let polygon = [Point2(x: x, y: y), Point2(x: x + w, y: y + rng.uniform(-1, 1)),
                       Point2(x: x + w, y: y + h), Point2(x: x + rng.uniform(-1, 1), y: y + h)]
        return Zone(id: ZoneID("zone-\(i)"), polygon: polygon, rules: r)
    }
}

/// A fix and its tag's index (the engine's `TagIndex`: tags are registered once, judges take the index).
struct IndexedFix { var fix: ZoneFix; var tag: TagIndex }

func makeFixes(floorSideMeters: Double, seed: UInt64) -> [IndexedFix] {
    var rng = SeededGenerator(seed: seed)
    var x = (0..<tagCount).map { _ in rng.uniform(0, floorSideMeters) }
    var y = (0..<tagCount).map { _ in rng.uniform(0, floorSideMeters) }
    var heading = (0..<tagCount).map { _ in rng.uniform(0, 2 * Double.pi) }
    let tags = (0..<tagCount).map { TagID("T\($0)") }
    var fixes: [IndexedFix] = []
    fixes.reserveCapacity(tagCount * stepsPerTag)
    for step in 0..<stepsPerTag {
        for k in 0..<tagCount {
            heading[k] += 0.3 * rng.nextGaussian()
            x[k] += 0.35 * cos(heading[k]); y[k] += 0.35 * sin(heading[k])  // 1.4 m/s × 0.25 s
            if x[k] < 0 || x[k] > floorSideMeters || y[k] < 0 || y[k] > floorSideMeters {
                heading[k] += Double.pi
                x[k] = min(floorSideMeters, max(0, x[k])); y[k] = min(floorSideMeters, max(0, y[k]))
            }
            let t = Double(step) * 0.25 + Double(k) * 0.25 / Double(tagCount)
            fixes.append(IndexedFix(fix: ZoneFix(timeSeconds: t, tag: tags[k], point: Point2(x: x[k], y: y[k])), tag: TagIndex(k)))
        }
    }
    return fixes
}

// `--zones 10000` (repeatable) measures only those sizes, e.g. for `perf stat`.
var sizes: [Int] = []
for (i, a) in CommandLine.arguments.enumerated() where a == "--zones" && i + 1 < CommandLine.arguments.count {
    if let n = Int(CommandLine.arguments[i + 1]) { sizes.append(n) }
}
if sizes.isEmpty { sizes = [10, 50, 1_000, 10_000] }

struct Row { var zones: Int; var nsPerFix: Double; var events: Int }

func measureScene(_ scene: String, sizes: [Int], floorSide: (Int) -> Double) -> [Row] {
    var table: [Row] = []
    var fixesBySide: [Double: [IndexedFix]] = [:]
    for zoneCount in sizes {
        let side = floorSide(zoneCount)
        let fixes = fixesBySide[side] ?? makeFixes(floorSideMeters: side, seed: 7)
        fixesBySide[side] = fixes
        let floor = Floor(id: "1F", widthMeters: side, heightMeters: side,
                          zones: makeZones(zoneCount, floorSideMeters: side, seed: UInt64(zoneCount)))
        let base: ZoneJudge
        do { base = try ZoneJudge(floor: floor) } catch { fatalError("bench scene invalid: \(error)") }
        var events: [ZoneEvent] = []
        events.reserveCapacity(fixes.count)
        var eventCount = 0
        let result = Bench.measure("judge_fix_\(scene)_\(zoneCount)_zones", operations: fixes.count,
                                   extra: ["zones": "\(zoneCount)", "tags": "\(tagCount)",
                                           "floor_side_m": Bench.fmt(side)]) {
            var judge = base
            events.removeAll(keepingCapacity: true)
            do {
                for f in fixes { try judge.judge(f.fix, tag: f.tag, into: &events) }
            } catch {
                fatalError("judge failed: \(error)")
            }
            judge.finish(into: &events)
            eventCount = events.count
            Bench.blackHole(events.count)
        }
        // Correctness: the stream is in §4.7 order (plain precedes: no zero-length visits at outPeriod 3).
        for (a, b) in zip(events, events.dropFirst()) where !ZoneEvent.precedes(a, b) {
            fatalError("events out of order: \(a) then \(b)")
        }
        table.append(Row(zones: zoneCount, nsPerFix: result.medianNanosecondsPerOp, events: eventCount))
    }
    return table
}

func printTable(_ title: String, _ table: [Row]) {
    guard let base = table.first?.nsPerFix else { return }
    print("")
    print(title)
    print("| zones  | ns/fix (median) | fixes/s     | × cost of \(table[0].zones) zones | events |")
    print("|-------:|----------------:|------------:|-------------------:|-------:|")
    for row in table {
        print("| \(row.zones.description.padding(toLength: 6, withPad: " ", startingAt: 0)) | "
              + "\(Bench.fmt(row.nsPerFix).padding(toLength: 15, withPad: " ", startingAt: 0)) | "
              + "\(Bench.fmt(1e9 / row.nsPerFix).padding(toLength: 11, withPad: " ", startingAt: 0)) | "
              + "\(String(format: "%.2f", row.nsPerFix / base).padding(toLength: 18, withPad: " ", startingAt: 0)) | "
              + "\(row.events) |")
    }
}

let fixedFloor = measureScene("fixed_floor", sizes: sizes) { _ in 1000 }
let fixedDensity = measureScene("fixed_density", sizes: sizes) { n in (100 * Double(n)).squareRoot() }
printTable("Scene A — fixed 1,000 × 1,000 m floor:", fixedFloor)
printTable("Scene B — fixed density (100 m² of floor per zone):", fixedDensity)

guard fixedFloor.count == 4 else { exit(0) }
for (name, table) in [("fixed floor", fixedFloor), ("fixed density", fixedDensity)] {
    let ratio = table[3].nsPerFix / table[0].nsPerFix, rate50 = 1e9 / table[1].nsPerFix
    print("")
    print("\(name): 10,000 zones / 10 zones = \(String(format: "%.2f", ratio))× (target ≤ 3×): \(ratio <= 3 ? "met" : "NOT met"); "
          + "50 zones: \(Bench.fmt(rate50)) fixes/s (target ≥ 5,000,000): \(rate50 >= 5_000_000 ? "met" : "NOT met")")
}
