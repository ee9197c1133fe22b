// PipelineBench — the whole pipeline against the 4 Hz budget (issue #7).
//
// Sections (all by default; `--section NAME` runs one, `--smoke` runs everything briefly):
//   stages    per stage (parse, solve, filter, judge, deliver) and whole pipeline, ns per fix
//   latency   p50/p99 per-fix latency: stream wait (data time) + compute of the releasing call
//   memory    engine memory per tag with 100,000 live tags (RssAnon from /proc/self/status, RSS from statm),
//             each tracking in a process of its own, with glibc's default malloc and with the fixed mmap
//             threshold `locus` sets (LOCUS_MEMORY_TAGS=N: N tags; LOCUS_MEMORY_ROW=name[,fixed]: one row here)
//   locators  whole pipeline and solve (the C search) with 4–32 locators
//   zones     whole pipeline with 10–10,000 zones
//   tags      whole pipeline with 1–100,000 tags (fresh engines: tag setup included), and the steady
//             state with 10,000 and 100,000 live tags (first rounds untimed)
//   steady    only the steady state of `tags` (for `perf record`; LOCUS_STEADY_TAGS=N: one run of N tags,
//             LOCUS_STEADY_ROUNDS=K: K timed rounds instead of 4)
//   pipeline  only the default whole pipeline (kalman tight), many runs: for `perf record`
// `--replay SITE TRACE` measures the default pipeline in memory on a recorded trace (rows parsed and
// put in time order outside the timed part, as the peer in scripts/bench-peers is timed): ranges →
// positions and zone events (taken every 4,096 rows, as a live consumer would), each run a fresh
// engine; median of 31 runs after 3 warm-up runs (one run is ~6 ms: fewer runs gave medians a few
// per cent higher and less stable); one JSON line.
// The whole-pipeline items likewise take the outputs every 4,096 rows (`runEngineStreaming`).
// `--callgrind ITEM` (engine_kalman | engine_raw | engine_loose | engine_calibrated) runs only a fixed small workload inside
// `callgrindWorkload`, for scripts/check-instructions (valgrind --toggle-collect).
//
// Per-fix figures: fixes/s per core = 10⁹ / ns_per_fix, tags at 4 Hz per core = fixes/s ÷ 4,
// headroom = 250 ms ÷ ns_per_fix. Setup (scenario, site, CSV bytes) stays outside the timed part;
// results go to Bench.blackHole and are checked (fix counts, RMSE against truth).
import BenchHarness
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Locus
import LocusCore
import LocusIO
import LocusNumerics
import LocusSimulation
import LocusSolvers
import LocusZones

Bench.banner("PipelineBench")

let arguments = CommandLine.arguments
func argument(after flag: String) -> String? {
    guard let i = arguments.firstIndex(of: flag), i + 1 < arguments.count else { return nil }
    return arguments[i + 1]
}
let callgrindItem = argument(after: "--callgrind")
let smokeReplay = Bench.isSmoke
let section = argument(after: "--section")
func runs(_ name: String) -> Bool { callgrindItem == nil && (section == nil || section == name) }
/// The calling thread's CPU time, nanoseconds (CLOCK_THREAD_CPUTIME_ID).
func threadCPUNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func note(_ text: String) { FileHandle.standardError.write(Data("# \(text)\n".utf8)) }

// MARK: - Scenario

/// `ManyTagScenario` (LocusSimulation) stored as flat rows in time order, with the truth per epoch.
struct Scenario {
    var site: Site
    var tags: [TagID]
    var locatorCount: Int
    var rounds: Int
    /// Flat rows in time order.
    var tagIndex: [Int32] = []
    var slot: [Int32] = []
    var address: [UInt16] = []
    var rangeMeters: [Double] = []
    var timeSeconds: [Double] = []
    /// Truth per epoch (round-major: round · tags + tag).
    var truth: [Point2] = []

    var floor: Floor { site.floors[0] }
    var epochs: Int { rounds * tags.count }
    var rows: Int { rangeMeters.count }

    /// The hall of `ManyTagScenario`.
    static func site(locators locatorCount: Int, zones zoneCount: Int, seed: UInt64) -> Site {
        ManyTagScenario.site(locators: locatorCount, zones: zoneCount, seed: seed)
    }

    /// The rows of `ManyTagScenario`, streamed (see `ManyTagScenario.generate`).
    static func generate(site: Site, tags tagCount: Int, rounds: Int, seed: UInt64,
                         epoch: (Int, Int, Point2) -> Void, emit: (Int, Int, Double, Double) -> Void) {
        ManyTagScenario.generate(site: site, tags: tagCount, rounds: rounds, seed: seed, epoch: epoch, emit: emit)
    }

    init(locators: Int, zones: Int, tags tagCount: Int, rounds: Int, seed: UInt64 = 3) {
        site = Self.site(locators: locators, zones: zones, seed: seed &+ 11)
        tags = (0..<tagCount).map { TagID("T\($0 + 1)") }
        locatorCount = locators
        self.rounds = rounds
        let total = tagCount * rounds * locators
        tagIndex.reserveCapacity(total); slot.reserveCapacity(total); address.reserveCapacity(total)
        rangeMeters.reserveCapacity(total); timeSeconds.reserveCapacity(total)
        truth = [Point2](repeating: Point2(x: 0, y: 0), count: tagCount * rounds)
        let addresses = site.floors[0].locators.map(\.address.rawValue)
        var truth = self.truth
        var tagIndex = self.tagIndex, slot = self.slot, address = self.address, rangeMeters = self.rangeMeters, timeSeconds = self.timeSeconds
        Self.generate(site: site, tags: tagCount, rounds: rounds, seed: seed,
                      epoch: { k, j, p in truth[k * tagCount + j] = p },
                      emit: { j, i, r, t in
                          tagIndex.append(Int32(j)); slot.append(Int32(i)); address.append(addresses[i])
                          rangeMeters.append(r); timeSeconds.append(t)
                      })
        self.truth = truth
        self.tagIndex = tagIndex; self.slot = slot; self.address = address
        self.rangeMeters = rangeMeters; self.timeSeconds = timeSeconds
    }

    /// The trace as CSV bytes (SPEC §2: t,tag,anchor,range_m), as `locus simulate` writes them.
    func csvBytes() -> [UInt8] {
        var csv = Array("t,tag,anchor,range_m\n".utf8)
        csv.reserveCapacity(rows * 28)
        for i in 0..<rows {
            DecimalText.append(timeSeconds[i], decimals: 9, to: &csv); csv.append(UInt8(ascii: ","))  // 9 decimals: see the jitter note
            csv.append(contentsOf: tags[Int(tagIndex[i])].rawValue.utf8); csv.append(UInt8(ascii: ","))
            DecimalText.append(Int(address[i]), to: &csv); csv.append(UInt8(ascii: ","))
            DecimalText.append(rangeMeters[i], decimals: 4, to: &csv); csv.append(UInt8(ascii: "\n"))
        }
        return csv
    }

    /// Horizontal RMSE of fixes against the truth of their round (fix time → round = ⌊t / 0.25⌋).
    func rmseMeters(_ fixes: [PositionFix], tagIndexByID: [TagID: Int]) -> Double {
        var sse = 0.0
        var count = 0
        for f in fixes {
            guard let j = tagIndexByID[f.tag] else { continue }
            let k = Int(f.timeSeconds / 0.25)
            guard k < rounds else { continue }
            let p = truth[k * tags.count + j]
            let dx = f.position.x - p.x, dy = f.position.y - p.y
            sse += dx * dx + dy * dy
            count += 1
        }
        return count > 0 ? (sse / Double(count)).squareRoot() : .infinity
    }
}

/// An engine as every face builds one: from `EngineOptions` (the benchmarks measure what users run).
func makeEngine(_ site: Site, _ options: EngineOptions = EngineOptions()) -> PositioningEngine {
    do { return try PositioningEngine(site: site, configuration: EngineConfiguration(options)) } catch {
        fatalError("bench site rejected: \(error)")
    }
}

/// Feeds every row through the engine (the replay loop: interned tags, fast-path ingest) and
/// finishes; returns (fixes, events).
@inline(never)
func runEngine(_ s: Scenario, _ engine: inout PositioningEngine) -> (fixes: [PositionFix], events: [ZoneEvent]) {
    let tagIndex = s.tags.map { engine.tagIndex(for: $0) }
    let floor = engine.defaultFloor
    for i in 0..<s.rows {
        engine.ingest(tag: tagIndex[Int(s.tagIndex[i])], floor: floor, locator: s.address[i],
                      rangeMeters: s.rangeMeters[i], timeSeconds: s.timeSeconds[i])
    }
    engine.finish()
    return (engine.drainFixes(), engine.drainEvents())
}

/// The same loop as a live caller runs it: fixes and events are taken (and counted) every 4,096
/// rows instead of piling up in the engine — the timed form (the outputs are produced either way;
/// a consumer takes them as they come, so the output arrays stay small and warm).
@inline(never)
func runEngineStreaming(_ s: Scenario, _ engine: inout PositioningEngine) -> (fixes: Int, events: Int) {
    let tagIndex = s.tags.map { engine.tagIndex(for: $0) }
    return streamRows(&engine, floor: engine.defaultFloor, count: s.rows, tagOfRow: { tagIndex[Int(s.tagIndex[$0])] },
                      locator: s.address, rangeMeters: s.rangeMeters, timeSeconds: s.timeSeconds)
}

/// Feeds rows 0..<count (in time order) through the engine's fast path, taking and counting the
/// outputs every 4,096 rows, then finishes: (fixes, events).
@inline(__always)
func streamRows(_ engine: inout PositioningEngine, floor: FloorIndex, count: Int, tagOfRow: (Int) -> TagIndex, locator: [UInt16],
                rangeMeters: [Double], timeSeconds: [Double]) -> (fixes: Int, events: Int) {
    var (fixes, events) = feedRows(&engine, floor: floor, rows: 0..<count, tagOfRow: tagOfRow, locator: locator,
                                   rangeMeters: rangeMeters, timeSeconds: timeSeconds)
    engine.finish()
    fixes += engine.takeFixes { f, _ in f.count }
    events += engine.takeEvents { $0.count }
    return (fixes, events)
}

/// Feeds `rows` (in time order) through the engine's fast path, taking and counting the outputs
/// every 4,096 rows (by row index), without finishing: (fixes, events) taken.
@inline(__always)
func feedRows(_ engine: inout PositioningEngine, floor: FloorIndex, rows: Range<Int>, tagOfRow: (Int) -> TagIndex, locator: [UInt16],
              rangeMeters: [Double], timeSeconds: [Double]) -> (fixes: Int, events: Int) {
    var fixes = 0, events = 0
    for i in rows {
        // `line:` given, as the command line gives it (a defaulted argument is a call of its own
        // from another module).
        engine.ingest(tag: tagOfRow(i), floor: floor, locator: locator[i], rangeMeters: rangeMeters[i],
                      timeSeconds: timeSeconds[i], line: 0)
        if i & 4095 == 4095 {
            fixes += engine.takeFixes { f, _ in f.count }
            events += engine.takeEvents { $0.count }
        }
    }
    // What the last partial block released (a short run, e.g. 40 tags × a few rounds, has no full block).
    fixes += engine.takeFixes { f, _ in f.count }
    events += engine.takeEvents { $0.count }
    return (fixes, events)
}

let trackings: [(String, EngineOptions)] = [
    ("raw_ls", EngineOptions(filter: .none)),
    ("kalman_tight", EngineOptions()),
    ("kalman_loose", EngineOptions(coupling: .loose)),
]

/// Whole pipeline in memory (ranges → fixes → zone events) for one scenario; checks fix count and RMSE.
@discardableResult
func measurePipeline(_ name: String, _ s: Scenario, _ options: EngineOptions,
                     extra: [String: String] = [:], runs: Int = 15, warmup: Int = 3) -> Bench.Result {
    var engine = makeEngine(s.site, options)
    let (fixes, events) = runEngine(s, &engine)
    let tagIndexByID = Dictionary(uniqueKeysWithValues: s.tags.enumerated().map { ($1, $0) })
    let rmse = s.rmseMeters(fixes, tagIndexByID: tagIndexByID)
    precondition(fixes.count >= s.epochs * 9 / 10, "\(name): \(fixes.count) fixes of \(s.epochs) epochs")
    // A sanity bound, not an accuracy claim: with 4 locators and 5 % NLOS one range in error leaves
    // a single degree of freedom, and a few bad fixes dominate a short (smoke) run.
    precondition(rmse < (s.locatorCount <= 4 ? 2.5 : 0.5), "\(name): RMSE \(rmse) m")
    var fields = extra
    fields["fixes"] = "\(fixes.count)"; fields["events"] = "\(events.count)"; fields["tags"] = "\(s.tags.count)"
    fields["locators"] = "\(s.locatorCount)"; fields["zones"] = "\(s.floor.zones.count)"; fields["rmse_m"] = Bench.fmt(rmse)
    fields["stage"] = "\"pipeline\""
    let count = fixes.count
    return Bench.measure(name, operations: count, runs: runs, warmup: warmup, extra: fields, derived: Bench.perFix) {
        var e = makeEngine(s.site, options)
        let out = runEngineStreaming(s, &e)
        precondition(out.fixes == count && out.events == events.count, "nondeterministic output count")
        Bench.blackHole(out.events)
    }
}

// MARK: - Callgrind mode

/// The fixed workload counted by scripts/check-instructions: everything from the first range to
/// the drained outputs of one engine (engine construction and data set-up are outside).
@inline(never)
func callgrindWorkload(_ s: Scenario, _ engine: inout PositioningEngine) -> Int {
    let out = runEngineStreaming(s, &engine)
    return out.fixes &+ out.events
}

if let item = callgrindItem {
    let s = Scenario(locators: 8, zones: 50, tags: 4, rounds: 50)
    let options: EngineOptions
    switch item {
    case "engine_raw": options = EngineOptions(filter: .none)
    case "engine_kalman": options = EngineOptions()
    case "engine_loose": options = EngineOptions(coupling: .loose)
    case "engine_calibrated": options = EngineOptions(tagOffset: .off)
    default: fatalError("--callgrind: unknown item '\(item)' (engine_kalman, engine_raw, engine_loose, engine_calibrated)")
    }
    var engine = makeEngine(s.site, options)
    let produced = callgrindWorkload(s, &engine)
    Bench.blackHole(produced)
    Bench.record("callgrind_\(item)", ["fixes": "\(s.epochs)", "rows": "\(s.rows)"])
    exit(0)
}

// MARK: - Replay in memory

/// A recorded trace as the timed replay reads it: rows in time order as flat arrays (built once,
/// outside the timed part).
struct ReplayRows {
    var time: [Double] = [], range: [Double] = [], address: [UInt16] = [], tagOfRow: [Int] = []
    var tags: [TagID], floor: FloorID?
    init(_ trace: RangeTrace) {
        let order = trace.timeOrder()
        time = order.map { trace.rows[$0].timeSeconds }
        range = order.map { trace.rows[$0].rangeMeters }
        address = order.map { trace.rows[$0].locator }
        tagOfRow = order.map { Int(trace.rows[$0].tagIndex) }
        tags = trace.tags
        floor = trace.floors.first
    }
}

/// One timed replay: a fresh engine, every row through the fast path (outputs taken every 4,096
/// rows), finished.
@inline(never)
func replayInMemory(_ site: Site, _ rows: ReplayRows) -> (fixes: Int, events: Int) {
    var engine = makeEngine(site)
    let tagIndex = rows.tags.map { engine.tagIndex(for: $0) }
    let floor = rows.floor.flatMap { engine.site.floorIndex(of: $0) } ?? engine.defaultFloor
    let tagOfRow = rows.tagOfRow
    return streamRows(&engine, floor: floor, count: rows.time.count, tagOfRow: { tagIndex[tagOfRow[$0]] },
                      locator: rows.address, rangeMeters: rows.range, timeSeconds: rows.time)
}


if let sitePath = argument(after: "--replay") {
    guard let i = arguments.firstIndex(of: "--replay"), i + 2 < arguments.count else { fatalError("--replay SITE TRACE") }
    let tracePath = arguments[i + 2]
    let site: Site
    let trace: RangeTrace
    do {
        site = try SiteDecoder.decode(Array(try Data(contentsOf: URL(fileURLWithPath: sitePath))), file: sitePath)
        trace = try TraceReader.read(path: tracePath)
    } catch {
        fatalError("--replay: \(error)")
    }
    let rows = ReplayRows(trace)
    precondition(trace.floors.count <= 1, "--replay: one floor per trace")
    func run() -> (fixes: Int, events: Int) { replayInMemory(site, rows) }
    let first = run()
    Bench.measure("replay_in_memory", operations: first.fixes, runs: smokeReplay ? 1 : 31, warmup: 3,
                  extra: ["fixes": "\(first.fixes)", "events": "\(first.events)", "rows": "\(rows.time.count)",
                          "tags": "\(trace.tags.count)", "stage": "\"pipeline\""], derived: Bench.perFix) {
        let out = run()
        precondition(out == first, "nondeterministic replay")
        Bench.blackHole(out.events)
    }
    exit(0)
}

// MARK: - Stages

let smoke = Bench.isSmoke
let base = Scenario(locators: 8, zones: 50, tags: smoke ? 4 : 40, rounds: smoke ? 40 : 480)

if runs("stages") {
    let s = base
    let epochs = s.epochs
    let n = s.locatorCount
    var stageNs: [(String, Double)] = []
    let baseExtra = ["tags": "\(s.tags.count)", "locators": "\(n)", "zones": "\(s.floor.zones.count)"]

    // parse: trace bytes → columns (TraceReader), per fix = per n rows.
    let csv = s.csvBytes()
    var parseExtra = baseExtra
    parseExtra["stage"] = "\"parse\""; parseExtra["rows"] = "\(s.rows)"; parseExtra["bytes"] = "\(csv.count)"
    let parse = Bench.measure("stage_parse", operations: epochs, extra: parseExtra, derived: Bench.perFix) {
        do {
            let trace = try? TraceReader.parse(csv.span, file: "bench.csv")
            precondition(trace?.rows.count == s.rows, "parse lost rows")
            Bench.blackHole(trace?.rows.count)
        }
    }
    stageNs.append(("parse", parse.medianNanosecondsPerOp))

    // solve: each epoch's n ranges through the solver the engine uses (the C search).
    let positions = s.floor.locators.map(\.position)
    var configuration = TrilaterationConfiguration.standard
    configuration.tagHeightMeters = s.floor.tagHeightMeters
    let epochLocators: [Point3] = s.slot.map { positions[Int($0)] }
    func solveAll(_ solver: some Trilaterating, into out: inout [TrilaterationSolution?]) {
        var workspace = TrilaterationWorkspace(capacity: n)
        epochLocators.withUnsafeBufferPointer { lp in
            s.rangeMeters.withUnsafeBufferPointer { rp in
                for e in 0..<epochs {
                    let r = (e * n)..<((e + 1) * n)
                    out[e] = try? solver.solve(locators: UnsafeBufferPointer(rebasing: lp[r]).span,
                                               rangesMeters: UnsafeBufferPointer(rebasing: rp[r]).span, workspace: &workspace)
                }
            }
        }
    }
    var solutions = [TrilaterationSolution?](repeating: nil, count: epochs)
    solveAll(Trilaterator(configuration: configuration), into: &solutions)
    var solveExtra = baseExtra
    solveExtra["stage"] = "\"solve\""; solveExtra["path"] = "\"kernel\""
    let solve = Bench.measure("stage_solve_kernel", operations: epochs, extra: solveExtra, derived: Bench.perFix) {
        solveAll(Trilaterator(configuration: configuration), into: &solutions)
        Bench.blackHole(solutions.count)
    }
    stageNs.append(("solve", solve.medianNanosecondsPerOp))

    // filter: tightly coupled (n range updates + the epoch's fix) and loosely coupled (one LS fix).
    let locatorsBySlot = s.floor.locators
    let rawFixes: [PositionFix?] = (0..<epochs).map { e in
        let j = Int(s.tagIndex[e * n])
        return solutions[e]?.positionFix(timeSeconds: s.timeSeconds[e * n + n - 1], tag: s.tags[j], floor: "1F",
                                         address: { locatorsBySlot[Int(s.slot[e * n + $0])].address })
    }
    var filterExtra = baseExtra
    filterExtra["stage"] = "\"filter\""; filterExtra["coupling"] = "\"tight\""
    let tight = Bench.measure("stage_filter_tight", operations: epochs, extra: filterExtra, derived: Bench.perFix) {
        // One shared configuration for every tag's filter, as the engine keeps it.
        let shared = TrackFilterConfiguration.Shared(.standard)
        var filters = s.tags.map { TrackFilter(shared: shared, tag: $0, floor: "1F", tagHeightMeters: 1.1) }
        var produced = 0
        for e in 0..<epochs {
            let j = Int(s.tagIndex[e * n])
            for i in (e * n)..<((e + 1) * n) {
                let m = RangeMeasurement(timeSeconds: s.timeSeconds[i], tag: s.tags[j], locator: LocatorAddress(s.address[i]),
                                         rangeMeters: s.rangeMeters[i])
                let l = locatorsBySlot[Int(s.slot[i])]
                _ = filters[j].update(correctedRangeMeters: l.correctedRange(m.rangeMeters), timeSeconds: m.timeSeconds,
                                      address: l.address, anchor: l.position)
            }
            if filters[j].closeEpoch(atSeconds: s.timeSeconds[e * n + n - 1]) != nil { produced += 1 }
        }
        precondition(produced > epochs * 9 / 10, "tight filter produced \(produced) of \(epochs)")
        Bench.blackHole(produced)
    }
    stageNs.append(("filter", tight.medianNanosecondsPerOp))
    filterExtra["coupling"] = "\"loose\""
    Bench.measure("stage_filter_loose", operations: epochs, extra: filterExtra, derived: Bench.perFix) {
        let shared = TrackFilterConfiguration.Shared(TrackFilterConfiguration(coupling: .loose))
        var filters = s.tags.map { TrackFilter(shared: shared, tag: $0, floor: "1F", tagHeightMeters: 1.1) }
        var produced = 0
        for e in 0..<epochs {
            guard let fix = rawFixes[e] else { continue }
            let j = Int(s.tagIndex[e * n])
            _ = filters[j].update(fix: fix)
            if filters[j].closeEpoch(atSeconds: fix.timeSeconds) != nil { produced += 1 }
        }
        precondition(produced > epochs * 9 / 10, "loose filter produced \(produced) of \(epochs)")
        Bench.blackHole(produced)
    }

    // judge: the engine's released fixes (causal filter) through a fresh zone judge.
    var engine = makeEngine(s.site)
    let (fixes, events) = runEngine(s, &engine)
    var judgeExtra = baseExtra
    judgeExtra["stage"] = "\"judge\""; judgeExtra["events"] = "\(events.count)"
    let judgeBase: ZoneJudge
    do { judgeBase = try ZoneJudge(floor: s.floor) } catch { fatalError("judge: \(error)") }
    var judged: [ZoneEvent] = []
    judged.reserveCapacity(events.count * 2)
    // Tags registered once, as the engine does: the judge takes their index.
    var registry = TagRegistry()
    let fixTags = fixes.map { registry.register($0.tag).index }
    let judge = Bench.measure("stage_judge", operations: fixes.count, extra: judgeExtra, derived: Bench.perFix) {
        var j = judgeBase
        judged.removeAll(keepingCapacity: true)
        for (k, f) in fixes.enumerated() { try? j.judge(f, tag: fixTags[k], into: &judged) }
        j.finish(into: &judged)
        Bench.blackHole(judged.count)
    }
    precondition(judged.count == events.count, "judge stage gave \(judged.count) events, the engine \(events.count)")
    stageNs.append(("judge", judge.medianNanosecondsPerOp))

    // deliver: positions CSV and events JSON Lines bytes.
    var deliverExtra = baseExtra
    deliverExtra["stage"] = "\"deliver\""; deliverExtra["events"] = "\(events.count)"
    var bytes = 0
    let deliver = Bench.measure("stage_deliver", operations: fixes.count, extra: deliverExtra, derived: Bench.perFix) {
        var positions = PositionsWriter()
        var eventWriter = ZoneEventWriter()
        for f in fixes { positions.append(f) }
        for e in events { eventWriter.append(e) }
        bytes = positions.bytes.count + eventWriter.bytes.count
        Bench.blackHole(bytes)
    }
    stageNs.append(("deliver", deliver.medianNanosecondsPerOp))

    // Whole pipeline in memory, each tracking mode.
    var whole: [String: Double] = [:]
    for (name, options) in trackings {
        whole[name] = measurePipeline("pipeline_\(name)", s, options).medianNanosecondsPerOp
    }
    // The same with calibrated locator biases (as after `locus calibrate`): no online per-tag offset.
    measurePipeline("pipeline_kalman_tight_calibrated_site", s, EngineOptions(tagOffset: .off),
                    extra: ["site": "\"calibrated (tagRangeOffset off)\""])

    // End to end, bytes to bytes: parse + engine (default causal filter) + writers.
    let endCount = fixes.count
    var e2eExtra = baseExtra
    e2eExtra["stage"] = "\"end_to_end\""; e2eExtra["bytes_in"] = "\(csv.count)"
    let e2e = Bench.measure("pipeline_end_to_end_bytes", operations: endCount, runs: 10, extra: e2eExtra, derived: Bench.perFix) {
        do {
            guard let trace = try? TraceReader.parse(csv.span, file: "bench.csv") else { fatalError("parse failed") }
            var e = makeEngine(s.site)
            let tagIndex = trace.tags.map { e.tagIndex(for: $0) }
            let floor = e.defaultFloor
            for i in trace.timeOrder() {
                let row = trace.rows[i]
                e.ingest(tag: tagIndex[Int(row.tagIndex)], floor: floor, locator: row.locator,
                         rangeMeters: row.rangeMeters, timeSeconds: row.timeSeconds)
            }
            e.finish()
            var positions = PositionsWriter()
            var eventWriter = ZoneEventWriter()
            let out = e.drainFixes()
            for f in out { positions.append(f) }
            for ev in e.drainEvents() { eventWriter.append(ev) }
            precondition(out.count == endCount, "end to end: \(out.count) fixes, expected \(endCount)")
            Bench.blackHole(positions.bytes.count + eventWriter.bytes.count)
        }
    }
    let sum = stageNs.reduce(0) { $0 + $1.1 }
    note("stages (ns/fix): " + stageNs.map { "\($0.0) \(Bench.fmt($0.1))" }.joined(separator: ", ")
         + "; sum \(Bench.fmt(sum)); whole pipeline in memory (kalman tight) \(Bench.fmt(whole["kalman_tight"] ?? 0))"
         + "; end to end bytes→bytes \(Bench.fmt(e2e.medianNanosecondsPerOp)) ns/fix = \(Bench.fmt(1e9 / e2e.medianNanosecondsPerOp / 4)) tags at 4 Hz per core")
}

// MARK: - Latency

/// p-th percentile (0…1) of sorted values.
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count) * p).rounded(.up)) - 1))]
}

if section == "pipeline" && callgrindItem == nil {
    measurePipeline("pipeline_kalman_tight", base, EngineOptions(), runs: smoke ? 1 : 100)
}

if runs("latency") {
    // Each fix's latency = stream wait (engine clock at release − fix time: how long, in the data's
    // own time, the epoch waits for the pause rule and the time-order release) + compute (wall time
    // of the ingest call that released it, which also judges zones for every fix it releases).
    for (name, options) in trackings {
        let s = base
        var engine = makeEngine(s.site, options)
        let tagIndex = s.tags.map { engine.tagIndex(for: $0) }
        let floor = engine.defaultFloor
        var waitMs: [Double] = [], computeUs: [Double] = [], totalMs: [Double] = []
        waitMs.reserveCapacity(s.epochs); computeUs.reserveCapacity(s.epochs); totalMs.reserveCapacity(s.epochs)
        for i in 0..<s.rows {
            let t0 = Bench.nowNanoseconds()
            engine.ingest(tag: tagIndex[Int(s.tagIndex[i])], floor: floor, locator: s.address[i],
                          rangeMeters: s.rangeMeters[i], timeSeconds: s.timeSeconds[i])
            let t1 = Bench.nowNanoseconds()
            if !engine.fixes.isEmpty {
                let compute = Double(t1 - t0)
                for f in engine.drainFixes() {
                    let wait = (engine.clockSeconds - f.timeSeconds) * 1e3
                    waitMs.append(wait); computeUs.append(compute / 1e3); totalMs.append(wait + compute / 1e6)
                }
                _ = engine.drainEvents()
            }
        }
        waitMs.sort(); computeUs.sort(); totalMs.sort()
        precondition(waitMs.count > s.epochs / 2, "latency: too few fixes released before finish")
        Bench.record("latency_\(name)", [
            "fixes": "\(waitMs.count)", "tags": "\(s.tags.count)", "locators": "\(s.locatorCount)",
            "stream_wait_ms_p50": Bench.fmt(percentile(waitMs, 0.5)), "stream_wait_ms_p99": Bench.fmt(percentile(waitMs, 0.99)),
            "compute_us_p50": Bench.fmt(percentile(computeUs, 0.5)), "compute_us_p99": Bench.fmt(percentile(computeUs, 0.99)),
            "latency_ms_p50": Bench.fmt(percentile(totalMs, 0.5)), "latency_ms_p99": Bench.fmt(percentile(totalMs, 0.99)),
            "budget_ms": "250",
        ])
    }
}

// MARK: - Memory per tag

/// Anonymous resident memory in bytes (/proc/self/status `RssAnon`: the heap and other private
/// memory, without mapped files). (mallinfo2 is not visible to Swift's Glibc module.)
func anonymousResidentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = text.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
          let kB = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kB * 1024
}

/// Resident set size in bytes (/proc/self/statm, second field × page size).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// One memory row: an engine fed every tag's rounds in this process, its growth of resident memory
/// per live tag recorded as `memory_per_tag_<name>` (`_fixed_mmap` with the fixed threshold).
func measureMemory(_ name: String, _ options: EngineOptions, tagCount: Int, fixedThreshold: Bool) {
    let rounds = 3
    let site = Scenario.site(locators: 8, zones: 50, seed: 14)
    var engine = makeEngine(site, options)
    let addresses = site.floors[0].locators.map(\.address.rawValue)
    let floor = engine.defaultFloor
    var tagIndex = [TagIndex?](repeating: nil, count: tagCount)
    var released = 0
    var events = 0
    var pending = 0
    let heap0 = anonymousResidentBytes(), rss0 = residentBytes()
    Scenario.generate(site: site, tags: tagCount, rounds: rounds, seed: 5, epoch: { _, _, _ in }, emit: { j, i, r, t in
        let tag = tagIndex[j] ?? engine.tagIndex(for: TagID("T\(j + 1)"))
        tagIndex[j] = tag
        engine.ingest(tag: tag, floor: floor, locator: addresses[i], rangeMeters: r, timeSeconds: t)
        pending += 1
        if pending == 4096 {
            pending = 0
            released += engine.drainFixes().count
            events += engine.drainEvents().count
        }
    })
    released += engine.drainFixes().count
    events += engine.drainEvents().count
    let heap1 = anonymousResidentBytes(), rss1 = residentBytes()
    // (The bench's own `tagIndex` table was written in full before heap0: not in the difference.)
    let heapPerTag = Double(heap1 - heap0) / Double(tagCount)
    let rssPerTag = Double(rss1 - rss0) / Double(tagCount)
    precondition(released > tagCount, "memory: only \(released) fixes released")
    let malloc = fixedThreshold ? "fixed mmap threshold \(MemoryHints.mmapThresholdBytes >> 20) MiB (as locus sets it)"
        : "glibc default (dynamic mmap threshold)"
    Bench.record("memory_per_tag_\(name)\(fixedThreshold ? "_fixed_mmap" : "")", [
        "tags": "\(tagCount)", "rounds_per_tag": "\(rounds)", "fixes_released": "\(released)", "events": "\(events)",
        "anon_rss_bytes_per_tag": Bench.fmt(heapPerTag), "rss_bytes_per_tag": Bench.fmt(rssPerTag),
        "target_bytes_per_tag": "2048", "zones": "50", "locators": "8", "tracking": "\"\(name)\"", "malloc": "\"\(malloc)\"",
    ])
    note("memory \(name), \(malloc): \(Bench.fmt(heapPerTag)) anonymous RSS B/tag, \(Bench.fmt(rssPerTag)) RSS B/tag over \(tagCount) live tags (target ≤ 2048)")
    Bench.blackHole(engine.clockSeconds)
}

if runs("memory") {
    // Each row in a process of its own (this binary again, `LOCUS_MEMORY_ROW=name[,fixed]`): resident
    // memory measured after another engine ran and freed its memory in the same process depended on
    // the order of the rows (the heap's free pages are reused without growing RSS).
    let environment = ProcessInfo.processInfo.environment
    let tagCount = environment["LOCUS_MEMORY_TAGS"].flatMap { Int($0) } ?? (smoke ? 1_000 : 100_000)
    if let row = environment["LOCUS_MEMORY_ROW"] {
        let parts = row.split(separator: ",").map(String.init)
        guard let (name, options) = trackings.first(where: { $0.0 == parts[0] }) else { fatalError("LOCUS_MEMORY_ROW: no tracking '\(row)'") }
        let fixed = parts.dropFirst().first == "fixed"
        if fixed { MemoryHints.fixMmapThreshold() }
        measureMemory(name, options, tagCount: tagCount, fixedThreshold: fixed)
        exit(0)
    }
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    for (name, _) in trackings {
        for fixed in [false, true] {
            fflush(nil)  // (every stream: the rows printed so far come before the child's)
            let child = Process()
            child.executableURL = URL(fileURLWithPath: executable)
            child.arguments = ["--section", "memory"] + (smoke ? ["--smoke"] : [])
            var childEnvironment = environment
            childEnvironment["LOCUS_MEMORY_ROW"] = fixed ? "\(name),fixed" : name
            childEnvironment["LOCUS_MEMORY_TAGS"] = "\(tagCount)"
            child.environment = childEnvironment
            do { try child.run() } catch { fatalError("memory: cannot start \(executable): \(error)") }
            child.waitUntilExit()
            precondition(child.terminationStatus == 0, "memory: the \(name) row failed (\(child.terminationStatus))")
        }
    }
}

// MARK: - Scaling

if runs("locators") {
    // One row for profiling or alternated pairs: LOCUS_SCALE_LOCATORS=4 (one locator count),
    // LOCUS_SCALE_TRACKING=kalman_tight (one tracking; the solve rows run with any).
    let environment = ProcessInfo.processInfo.environment
    let onlyLocators = environment["LOCUS_SCALE_LOCATORS"].flatMap { Int($0) }
    let onlyTracking = environment["LOCUS_SCALE_TRACKING"]
    for n in onlyLocators.map({ [$0] }) ?? [4, 8, 16, 32] {
        let s = Scenario(locators: n, zones: 50, tags: smoke ? 2 : 40, rounds: smoke ? 20 : 120, seed: UInt64(20 + n))
        for (name, options) in trackings where name != "kalman_loose" && (onlyTracking ?? name) == name {
            measurePipeline("scale_locators_\(n)_\(name)", s, options, extra: ["scale": "\"locators\""], runs: 10, warmup: 1)
        }
        // Solve stage alone (the C search).
        var configuration = TrilaterationConfiguration.standard
        configuration.tagHeightMeters = 1.1
        let positions = s.floor.locators.map(\.position)
        let locs: [Point3] = s.slot.map { positions[Int($0)] }
        func solveAll(_ solver: some Trilaterating) -> Int {
            var workspace = TrilaterationWorkspace(capacity: n)
            var solved = 0
            locs.withUnsafeBufferPointer { lp in
                s.rangeMeters.withUnsafeBufferPointer { rp in
                    for e in 0..<s.epochs {
                        let r = (e * n)..<((e + 1) * n)
                        if (try? solver.solve(locators: UnsafeBufferPointer(rebasing: lp[r]).span,
                                              rangesMeters: UnsafeBufferPointer(rebasing: rp[r]).span, workspace: &workspace)) != nil { solved += 1 }
                    }
                }
            }
            return solved
        }
        for (path, solver) in [("kernel", Trilaterator(configuration: configuration))] {
            Bench.measure("scale_locators_\(n)_solve_\(path)", operations: s.epochs, runs: 10, warmup: 1,
                          extra: ["scale": "\"locators\"", "locators": "\(n)", "stage": "\"solve\"", "path": "\"\(path)\""],
                          derived: Bench.perFix) {
                let solved = solveAll(solver)
                precondition(solved > s.epochs * 9 / 10, "solve \(path) n=\(n): \(solved) of \(s.epochs)")
                Bench.blackHole(solved)
            }
        }
    }
}

if runs("zones") {
    for z in smoke ? [10, 100] : [10, 100, 1_000, 10_000] {
        let s = Scenario(locators: 8, zones: z, tags: smoke ? 2 : 40, rounds: smoke ? 20 : 120, seed: 30)
        measurePipeline("scale_zones_\(z)_kalman_tight", s, EngineOptions(), extra: ["scale": "\"zones\""], runs: 10, warmup: 1)
    }
}

/// The timed rounds of the steady-state rows, as a call of its own: a profiler can count just them
/// (`valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*steadyTimedRounds*'`).
@inline(never)
func steadyTimedRounds(_ body: () -> Int) -> Int { body() }

if runs("tags") || section == "steady" {
    let targetFixes = smoke ? 400 : 60_000
    for tagCount in section == "steady" ? [] : smoke ? [1, 10, 1_000] : [1, 10, 100, 1_000, 10_000, 100_000] {
        let rounds = max(3, targetFixes / tagCount)
        let s = Scenario(locators: 8, zones: 50, tags: tagCount, rounds: rounds, seed: 40)
        measurePipeline("scale_tags_\(tagCount)_kalman_tight", s, EngineOptions(), extra: ["scale": "\"tags\""], runs: 10, warmup: 1)
    }
    // Steady state with many live tags: the rows above include each tag's first rounds — its
    // registration, its filter's initialisation (a least-squares solve) and the growth of the
    // engine's per-tag arrays (fresh memory, copied as it doubles) —, a third of all fixes at 100,000
    // tags (3 rounds each). Here the first three rounds of every tag run untimed and only the
    // following rounds are timed, on the same engine: the cost of a fix whose tag's state is one of
    // 10,000 or 100,000 (≈ 19 MB or ≈ 190 MB: beyond the caches) rather than a tag being set up.
    // Three, not two: a tag's round model (`RoundModel`) knows its rounds after two of them, so its
    // second round still closes at the pause — during the third, whose fixes then wait behind it in
    // the reorder heap. Round 3 costs 17,595 instructions per fix (1,625 fixes released per 1,000
    // tags: 625 of them round 2's), rounds 4 and later 13,533–13,589 (callgrind, 1,000 tags,
    // `LOCUS_STEADY_WARM=2,3,4 LOCUS_STEADY_ROUNDS=1`, toggled on `steadyTimedRounds`).
    // `LOCUS_STEADY_TAGS`, `LOCUS_STEADY_WARM` and `LOCUS_STEADY_ROUNDS` run one size, one run,
    // with other warm-up and timed rounds (profiling).
    let only = ProcessInfo.processInfo.environment["LOCUS_STEADY_TAGS"].flatMap { Int($0) }
    // 1,000 tags (≈ 1.8 MB: the caches hold most of it) as the reference, timed over 100 rounds.
    let steadySizes = only.map { [$0] } ?? (smoke ? [1_000] : [1_000, 10_000, 100_000])
    for tagCount in steadySizes {
        let warmRounds = ProcessInfo.processInfo.environment["LOCUS_STEADY_WARM"].flatMap { Int($0) } ?? 3
        let timedRounds = smoke ? 1 : ProcessInfo.processInfo.environment["LOCUS_STEADY_ROUNDS"].flatMap { Int($0) }
            ?? max(4, 100_000 / tagCount)
        let s = Scenario(locators: 8, zones: 50, tags: tagCount, rounds: warmRounds + timedRounds, seed: 41)
        let rowsPerRound = tagCount * s.locatorCount
        var perFix: [Double] = []
        for _ in 0..<(smoke || only != nil ? 1 : 5) {
            var engine = makeEngine(s.site)
            let tagIndex = s.tags.map { engine.tagIndex(for: $0) }
            let floor = engine.defaultFloor
            func feed(_ rows: Range<Int>) -> Int {
                feedRows(&engine, floor: floor, rows: rows, tagOfRow: { tagIndex[Int(s.tagIndex[$0])] }, locator: s.address,
                         rangeMeters: s.rangeMeters, timeSeconds: s.timeSeconds).fixes
            }
            _ = feed(0..<(warmRounds * rowsPerRound))
            let c0 = threadCPUNanoseconds()
            let t0 = Bench.nowNanoseconds()
            let released = steadyTimedRounds { feed((warmRounds * rowsPerRound)..<s.rows) }
            let t1 = Bench.nowNanoseconds()
            let c1 = threadCPUNanoseconds()
            precondition(released > (timedRounds - 1) * tagCount, "steady tags: only \(released) fixes released of \(timedRounds * tagCount)")
            perFix.append(Double(t1 - t0) / Double(timedRounds * tagCount))
            if only != nil {
                // The timed window on CLOCK_MONOTONIC, for `perf record -k CLOCK_MONOTONIC` and
                // `perf report --time START,END` (seconds), and the thread's CPU time per fix (on a
                // shared machine: less noisy than the wall time when the thread is descheduled).
                note("timed window: \(Double(t0) / 1e9),\(Double(t1) / 1e9); thread CPU \(Bench.fmt(Double(c1 - c0) / Double(timedRounds * tagCount))) ns per fix; \(released) fixes released, \(engine.diagnostics.epochs) epochs closed in all")
            }
            Bench.blackHole(engine.clockSeconds)
        }
        perFix.sort()
        let ns = perFix[perFix.count / 2]
        Bench.record("scale_tags_\(tagCount)_steady_kalman_tight", [
            "tags": "\(tagCount)", "untimed_rounds": "\(warmRounds)", "timed_rounds": "\(timedRounds)", "runs": "\(perFix.count)",
            "ns_per_fix": Bench.fmt(ns), "tags_at_4hz_per_core": Bench.fmt(1e9 / ns / 4), "unit": "\"fix\"",
            "scale": "\"tags_steady\"",
        ])
        note("steady state, \(tagCount) live tags: \(Bench.fmt(ns)) ns per fix (median of \(perFix.count) runs, \(timedRounds) timed rounds after \(warmRounds))")
    }
}
