import BenchHarness
import Foundation
import LocusCore
import LocusNumerics
import LocusSolvers

/// The TDoA solver (`DifferenceSolver`) against the range solver on the same problems (issue #40):
/// `Batch`'s layouts, truths and noisy ranges, each range read as one arrival (σ = 0.1 m, 10 % NLOS
/// +U(0.3, 2.5) m where asked), differenced against locator 0 as one uplink blink: zⱼ = rⱼ − r₀.
/// n = 4, 8, 16 locators, planar and spatial (spatial from 5: a difference fit needs p + 2), one
/// reused workspace per solver; both measured back to back per item, per fix in ns. "warm": the same
/// TDoA solves given a seed (`solve(…seed:…)`) standing for the tag's previous fix — the truth moved
/// 0.25 m in a random direction (a tag at 1.5 m/s, 10 Hz, plus the previous fix's error; planar:
/// horizontally).
enum DifferenceBench {
    struct Row {
        var warmNs: Double
        var n: Int
        var mode: String
        var data: String
        var rangeNs: Double
        var differenceNs: Double
        var differenceRMSE: Double
        var rangeRMSE: Double
    }

    /// The batch's ranges as one uplink blink per problem against locator 0, stored flat.
    static func pairs(of batch: Batch) -> [DifferencePair] {
        var out: [DifferencePair] = []
        out.reserveCapacity(batch.problems * (batch.count - 1))
        for k in 0..<batch.problems {
            let base = k * batch.count
            for j in 1..<batch.count {
                out.append(DifferencePair(reference: 0, locator: j,
                                          differenceMeters: batch.ranges[base + j] - batch.ranges[base],
                                          timeSeconds: 0))
            }
        }
        return out
    }

    /// Solves every problem's differences once: (summed squared error, failures).
    /// Each problem's seed: its truth moved 0.25 m in a seeded random direction (planar: horizontal).
    static func seeds(of batch: Batch, spatial: Bool) -> [Point3] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func unit() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        return batch.truths.map { t in
            let azimuth = 2 * Double.pi * unit(), elevation = spatial ? Double.pi * (unit() - 0.5) : 0
            let r = 0.25
            return Point3(x: t.x + r * cos(elevation) * cos(azimuth), y: t.y + r * cos(elevation) * sin(azimuth),
                          z: t.z + r * sin(elevation))
        }
    }

    static func solveAll(_ batch: Batch, _ pairs: [DifferencePair], _ solver: DifferenceSolver, seeds: [Point3]? = nil,
                         workspace: inout DifferenceWorkspace) -> (sse: Double, failures: Int, iterations: Int) {
        var sse = 0.0
        var failures = 0
        var iterations = 0
        let m = batch.count - 1
        batch.locators.withUnsafeBufferPointer { lp in
            pairs.withUnsafeBufferPointer { pp in
                for k in 0..<batch.problems {
                    let l = UnsafeBufferPointer(rebasing: lp[(k * batch.count)..<((k + 1) * batch.count)])
                    let p = UnsafeBufferPointer(rebasing: pp[(k * m)..<((k + 1) * m)])
                    do {
                        let s = try solver.solve(locators: l.span, pairs: p.span, seed: seeds?[k], workspace: &workspace)
                        let t = batch.truths[k]
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

    static func run(problems: Int, filter: String?) {
        var rows: [Row] = []
        for n in [4, 8, 16] {
            for spatial in [false, true] where !(spatial && n < 5) {
                for nlos in [false, true] {
                    let label = "n\(n)_\(spatial ? "spatial" : "planar")_\(nlos ? "nlos10" : "clean")"
                    if let filter, !label.contains(filter) { continue }
                    let batch = Batch(count: n, spatial: spatial, nlos: nlos, problems: problems,
                                      seed: UInt64(1000 * n + (spatial ? 10 : 0) + (nlos ? 1 : 0)))
                    let differences = pairs(of: batch)
                    let range = Trilaterator(configuration: batch.configuration)
                    let tdoa = DifferenceSolver(configuration: batch.configuration)
                    var rangeWorkspace = TrilaterationWorkspace(capacity: n)
                    var workspace = DifferenceWorkspace()
                    let rangeCheck = batch.solveAll(range, workspace: &rangeWorkspace)
                    let check = solveAll(batch, differences, tdoa, workspace: &workspace)
                    let extra = ["locators": "\(n)", "mode": "\"\(spatial ? "spatial" : "planar")\"",
                                 "nlos": nlos ? "0.1" : "0",
                                 "rmse_m": Bench.fmt((check.sse / Double(problems)).squareRoot()),
                                 "failures": "\(check.failures)",
                                 "final_fit_iterations": Bench.fmt(Double(check.iterations) / Double(problems))]
                    let r = Bench.measure("range_\(label)", operations: problems) {
                        Bench.blackHole(batch.solveAll(range, workspace: &rangeWorkspace))
                    }
                    let d = Bench.measure("tdoa_\(label)", operations: problems, extra: extra) {
                        Bench.blackHole(solveAll(batch, differences, tdoa, workspace: &workspace))
                    }
                    let starts = seeds(of: batch, spatial: spatial)
                    let warmCheck = solveAll(batch, differences, tdoa, seeds: starts, workspace: &workspace)
                    let warmExtra = ["rmse_m": Bench.fmt((warmCheck.sse / Double(problems)).squareRoot()),
                                     "failures": "\(warmCheck.failures)",
                                     "final_fit_iterations": Bench.fmt(Double(warmCheck.iterations) / Double(problems))]
                    let w = Bench.measure("tdoa_warm_\(label)", operations: problems, extra: warmExtra) {
                        Bench.blackHole(solveAll(batch, differences, tdoa, seeds: starts, workspace: &workspace))
                    }
                    rows.append(Row(warmNs: w.medianNanosecondsPerOp, n: n, mode: spatial ? "spatial" : "planar", data: nlos ? "10% NLOS" : "clean",
                                    rangeNs: r.medianNanosecondsPerOp, differenceNs: d.medianNanosecondsPerOp,
                                    differenceRMSE: (check.sse / Double(problems)).squareRoot(),
                                    rangeRMSE: (rangeCheck.sse / Double(problems)).squareRoot()))
                }
            }
        }
        var table = "\n| locators | mode | data | range ns/fix | TDoA ns/fix | TDoA / range | warm ns/fix | warm / range "
        table += "| range RMSE m | TDoA RMSE m |\n|---:|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
        for r in rows {
            table += "| \(r.n) | \(r.mode) | \(r.data) | \(Bench.fmt(r.rangeNs)) | \(Bench.fmt(r.differenceNs)) | "
            table += "\(String(format: "%.2f", r.differenceNs / r.rangeNs)) | \(Bench.fmt(r.warmNs)) | "
            table += "\(String(format: "%.2f", r.warmNs / r.rangeNs)) | \(String(format: "%.3f", r.rangeRMSE)) | "
            table += "\(String(format: "%.3f", r.differenceRMSE)) |\n"
        }
        FileHandle.standardError.write(Data(table.utf8))
    }
}
