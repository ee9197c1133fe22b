// SolverBench: trilateration solves per second of the one search (the C kernel: scratch on the stack
// up to 64 locators, in a reused workspace beyond), planar and spatial, 4/8/16/32/64/128 locators,
// clean ranges (σ = 0.1 m) and 10 % NLOS (+U(0.3, 2.5) m). (The LAPACKE re-spelling it was compared
// with, 12–25× slower, is now the tests' reference oracle.)
// Release only: `swift run -c release SolverBench` (`--smoke` for one quick pass). Then the TDoA
// solver against the range solver on the same problems (DifferenceBench; `--tdoa` runs only that).
import BenchHarness
import Foundation
import LocusCore
import LocusSolvers

Bench.banner("SolverBench")

/// A batch of fixed-seed problems with `count` locators each, stored flat so the timed loop only
/// slices caller-owned buffers (no allocation per solve).
struct Batch {
    var count: Int
    var problems: Int
    var locators: [Point3]
    var ranges: [Double]
    var truths: [Point3]
    var configuration: TrilaterationConfiguration

    init(count: Int, spatial: Bool, nlos: Bool, problems: Int, seed: UInt64) {
        var g = SeededGenerator(seed: seed)
        self.count = count
        self.problems = problems
        locators = []
        ranges = []
        truths = []
        locators.reserveCapacity(count * problems)
        ranges.reserveCapacity(count * problems)
        truths.reserveCapacity(problems)
        var layout: [Point3] = []
        layout.reserveCapacity(count)
        for _ in 0..<problems {
            let radius = g.uniform(5, 12)
            layout.removeAll(keepingCapacity: true)
            for i in 0..<count {
                let a = (Double(i) + g.uniform(-0.2, 0.2)) / Double(count) * 2 * Double.pi
                let z = spatial ? (i % 2 == 0 ? g.uniform(2.6, 3.5) : g.uniform(0.2, 0.8)) : g.uniform(2.5, 3.0)
                layout.append(Point3(x: radius * cos(a), y: radius * sin(a), z: z))
            }
            let a = g.uniform(0, 2 * Double.pi), rho = 0.45 * radius * g.nextUnit().squareRoot()
            let truth = Point3(x: rho * cos(a), y: rho * sin(a), z: spatial ? g.uniform(1.2, 2.0) : 1.0)
            for q in layout {
                var r = q.distance(to: truth) + 0.1 * g.nextGaussian()
                if nlos && g.nextUnit() < 0.1 { r += g.uniform(0.3, 2.5) }
                locators.append(q)
                ranges.append(r)
            }
            truths.append(truth)
        }
        configuration = TrilaterationConfiguration(mode: spatial ? .spatial : .planar, tagHeightMeters: 1.0,
                                                   sigmaMeters: 0.1, isRobust: true)
    }

    /// Solves every problem once; returns the summed squared error (checked, and fed to the black hole).
    func solveAll(_ solver: some Trilaterating, workspace: inout TrilaterationWorkspace) -> (sse: Double, failures: Int, iterations: Int) {
        var sse = 0.0
        var failures = 0
        var iterations = 0
        locators.withUnsafeBufferPointer { lp in
            ranges.withUnsafeBufferPointer { rp in
                for k in 0..<problems {
                    let l = UnsafeBufferPointer(rebasing: lp[(k * count)..<((k + 1) * count)])
                    let r = UnsafeBufferPointer(rebasing: rp[(k * count)..<((k + 1) * count)])
                    do {
                        let s = try solver.solve(locators: l.span, rangesMeters: r.span, workspace: &workspace)
                        let t = truths[k]
                        let dx = s.position.x - t.x, dy = s.position.y - t.y, dz = s.position.z - t.z
                        sse += dx * dx + dy * dy + dz * dz
                        iterations += s.iterations
                    } catch {
                        failures += 1
                    }
                }
            }
        }
        return (sse, failures, iterations)
    }
}

/// The fixed workload counted by scripts/check-instructions (valgrind --toggle-collect on this
/// function): one pass of a fixed batch through one path.
@inline(never)
func callgrindWorkload(_ batch: Batch, _ solver: some Trilaterating, workspace: inout TrilaterationWorkspace) -> Int {
    let check = batch.solveAll(solver, workspace: &workspace)
    return check.iterations &+ check.failures
}

// `--callgrind kernel_n8_planar_nlos10 | kernel_n8_spatial_nlos10`: only the fixed workload, then exit.
if let i = CommandLine.arguments.firstIndex(of: "--callgrind") {
    let item = i + 1 < CommandLine.arguments.count ? CommandLine.arguments[i + 1] : ""
    let problems = 256
    let spatial = item.contains("spatial")
    let batch = Batch(count: 8, spatial: spatial, nlos: true, problems: problems, seed: spatial ? 8011 : 8001)
    var workspace = TrilaterationWorkspace(capacity: 8)
    let produced: Int
    switch item {
    case "kernel_n8_planar_nlos10", "kernel_n8_spatial_nlos10":
        produced = callgrindWorkload(batch, Trilaterator(configuration: batch.configuration), workspace: &workspace)
    default: fatalError("--callgrind: unknown item '\(item)' (kernel_n8_planar_nlos10, kernel_n8_spatial_nlos10)")
    }
    Bench.blackHole(produced)
    Bench.record("callgrind_\(item)", ["fixes": "\(problems)"])
    exit(0)
}

struct Row {
    var n: Int
    var mode: String
    var data: String
    var kernelNs: Double
    var kernelRMSE: Double
}

/// `--filter SUBSTRING` runs only the items whose label contains it (e.g. `n8_planar_clean`).
let filter: String? = {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: "--filter"), i + 1 < args.count else { return nil }
    return args[i + 1]
}()

var rows: [Row] = []
/// `--problems N` overrides the batch size (e.g. to show under valgrind that the heap-allocation
/// count does not grow with the number of solves).
let problems: Int = {
    let args = CommandLine.arguments
    if let i = args.firstIndex(of: "--problems"), i + 1 < args.count, let n = Int(args[i + 1]), n > 0 { return n }
    return Bench.isSmoke ? 16 : 2048
}()
// `--tdoa`: only the TDoA solver against the range solver (n = 4, 8, 16; `--filter` applies).
if CommandLine.arguments.contains("--tdoa") {
    DifferenceBench.run(problems: problems, filter: filter)
    exit(0)
}

for n in [4, 8, 16, 32, 64, 128] {
    for spatial in [false, true] {
        for nlos in [false, true] {
            let label = "n\(n)_\(spatial ? "spatial" : "planar")_\(nlos ? "nlos10" : "clean")"
            if let filter, !label.contains(filter) { continue }
            let batch = Batch(count: n, spatial: spatial, nlos: nlos, problems: problems,
                              seed: UInt64(1000 * n + (spatial ? 10 : 0) + (nlos ? 1 : 0)))
            let kernel = Trilaterator(configuration: batch.configuration)
            var workspace = TrilaterationWorkspace(capacity: n)
            let kernelCheck = batch.solveAll(kernel, workspace: &workspace)
            let extra = ["locators": "\(n)", "mode": "\"\(spatial ? "spatial" : "planar")\"",
                         "nlos": nlos ? "0.1" : "0", "rmse_m": Bench.fmt((kernelCheck.sse / Double(problems)).squareRoot()),
                         "final_fit_iterations": Bench.fmt(Double(kernelCheck.iterations) / Double(problems)),
                         "failures": "\(kernelCheck.failures)"]
            let k = Bench.measure("kernel_\(label)", operations: problems, extra: extra) {
                Bench.blackHole(batch.solveAll(kernel, workspace: &workspace))
            }
            rows.append(Row(n: n, mode: spatial ? "spatial" : "planar", data: nlos ? "10% NLOS" : "clean",
                            kernelNs: k.medianNanosecondsPerOp,
                            kernelRMSE: (kernelCheck.sse / Double(problems)).squareRoot()))
        }
    }
}

// Human-readable table on stderr (stdout carries the JSON lines).
var table = "\n| locators | mode | data | C kernel ns/solve | solves/s | RMSE m |\n"
table += "|---:|---|---|---:|---:|---:|\n"
for r in rows {
    table += "| \(r.n) | \(r.mode) | \(r.data) | \(Bench.fmt(r.kernelNs)) | \(Bench.fmt(1e9 / r.kernelNs)) | "
    table += "\(String(format: "%.3f", r.kernelRMSE)) |\n"
}
FileHandle.standardError.write(Data(table.utf8))

GeometryBench.run()
DifferenceBench.run(problems: problems, filter: filter)
