import BenchHarness
import LocusCore
import LocusSolvers

/// `locus geometry`'s DOP map through both numeric paths (the map alone, and the whole report with
/// statistics and warnings), and the `--suggest` search. Floor: the hall of Fixtures/sites/hall.json
/// (40 × 25 m, 8 locators on the walls) and the same hall with 32 locators; 30 m range.
enum GeometryBench {
    static func hall(locatorCount: Int) -> Floor {
        var p: [(Double, Double, Double)] = [(0.3, 0.3, 2.6), (20, 0.3, 2.6), (39.7, 0.3, 2.6), (39.7, 12.5, 2.6),
                                             (39.7, 24.7, 2.6), (20, 24.7, 2.6), (0.3, 24.7, 2.6), (0.3, 12.5, 2.55)]
        var rng = SeededGenerator(seed: 7)
        while p.count < locatorCount { p.append((rng.uniform(0, 40), rng.uniform(0, 25), rng.uniform(2.4, 3.0))) }
        let locators = p.enumerated().map { i, q in
            Locator(address: LocatorAddress(UInt16(0x9000 + i)), position: Point3(x: q.0, y: q.1, z: q.2))
        }
        return Floor(id: "1F", widthMeters: 40, heightMeters: 25, tagHeightMeters: 1.1, locators: locators)
    }

    static func run() {
        let gridMeters = Bench.isSmoke ? 0.5 : 0.1
        for count in [8, 32] {
            let floor = hall(locatorCount: count)
            let positions = floor.locators.map(\.position)
            let options = GeometryReportOptions(gridMeters: gridMeters)
            guard let grid = try? GeometryGrid(floor: floor, gridMeters: gridMeters, maximumCells: options.maximumCells) else {
                preconditionFailure("grid")
            }
            let extra = ["unit": "\"ns_per_cell\"", "cells": "\(grid.count)", "locators": "\(count)"]
            var kernel: [GeometryCell] = [], batched: [GeometryCell] = []
            Bench.measure("geometry_map_kernel_n\(count)", operations: grid.count, runs: 10, extra: extra) {
                kernel = GeometryReport.kernelCells(grid: grid, locators: positions, mode: .planar, tagHeightMeters: 1.1, options: options)
                Bench.blackHole(kernel)
            }
            Bench.measure("geometry_map_batched_n\(count)", operations: grid.count, runs: 10, extra: extra) {
                batched = GeometryReport.batchedCells(grid: grid, locators: positions, mode: .planar, tagHeightMeters: 1.1, options: options)
                Bench.blackHole(batched)
            }
            var worst = 0.0
            for (a, b) in zip(kernel, batched) { worst = max(worst, abs((a.hdop ?? -1) - (b.hdop ?? -1))) }
            precondition(kernel.count == batched.count && worst < 1e-9, "geometry paths disagree by \(worst)")
            Bench.measure("geometry_report_n\(count)", operations: grid.count, runs: 10, extra: extra) {
                Bench.blackHole(try? GeometryReport(floor: floor, options: options))
            }
        }
        let coarse = try? GeometryReport(floor: hall(locatorCount: 8), options: GeometryReportOptions(gridMeters: 0.5))
        Bench.measure("geometry_suggest", operations: 1, runs: 10, extra: ["unit": "\"ns_per_suggestion\"", "grid_m": "0.5"]) {
            Bench.blackHole(try? coarse?.suggestion())
        }
    }
}
