// FilterBench: Kalman predict+update throughput (loosely and tightly coupled, kernel and filter level)
// and offline smoother throughput (RTS and LAPACKE banded) over a 100,000-fix recording.
// Run: swift run -c release FilterBench [--smoke]
import BenchHarness
import CLocusKernels
import Foundation
import LocusCore
import LocusNumerics
import LocusSolvers

Bench.banner("FilterBench")

let floorLocators: [Locator] = [(0.0, 0.0), (20, 0), (20, 12), (0, 12), (10, 0), (20, 6), (10, 12), (0, 6)].enumerated().map { i, p in
    Locator(address: LocatorAddress(UInt16(0x100 + i)), position: Point3(x: p.0, y: p.1, z: 2.5))
}
let tagHeight = 1.1

/// A seeded loop walk at 1.2 m/s around (10, 6), 4 Hz: truth at fix k.
func truth(_ k: Int) -> (Double, Double) {
    let t = Double(k) * 0.25, w = 1.2 / 4.0
    return (10 + 4 * cos(w * t), 6 + 4 * sin(w * t))
}

let fixCount = Bench.isSmoke ? 2_000 : 100_000
var rng = SeededGenerator(seed: 42)
let fixes: [PositionFix] = (0..<fixCount).map { k in
    let (x, y) = truth(k)
    return PositionFix(timeSeconds: Double(k) * 0.25, tag: "T1", floor: "1F",
                       position: Point3(x: x + 0.06 * rng.nextGaussian(), y: y + 0.06 * rng.nextGaussian(), z: tagHeight),
                       covariance: SymmetricMatrix3(xx: 0.0036, yy: 0.0036, zz: 0),
                       quality: FixQuality(hdop: 0.8, pdop: 0.8, residualRMSMeters: 0.1, locatorsUsed: 8))
}
let rangeCount = Bench.isSmoke ? 4_000 : 200_000
let ranges: [(RangeMeasurement, Locator)] = (0..<rangeCount).map { i in
    let k = i / 8, j = i % 8
    let (x, y) = truth(k)
    let l = floorLocators[j]
    let d = Point3(x: x, y: y, z: tagHeight).distance(to: l.position)
    return (RangeMeasurement(timeSeconds: Double(k) * 0.25 + Double(j) * 0.004, tag: "T1", locator: l.address,
                             rangeMeters: d + 0.1 * rng.nextGaussian()), l)
}

// 1. Kernel level, loosely coupled: predict (Δt = 0.25 s) + 2-D position update.
// The kernel row reads its measurements from a compact array of (x, y): over the 100,000 PositionFix
// records themselves (21.6 MB at 216 bytes) the row timed the records' layout as much as the kernel
// (1.16x slower when PositionFix shrank from 224 to 216 bytes, with the same kernel time on compact input).
// The kernel rows call the C kernels of `locus_kalman.h` themselves (the filter's Swift face in
// LocusSolvers is a thin, always-inlined wrapper of them): state x = (px, py, vx, vy), P 4×4.
let fixXY = fixes.flatMap { [$0.position.x, $0.position.y] }
/// A state at (px, py), at rest, with P = diag(σp², σp², σv², σv²).
func kernelState(px: Double, py: Double, positionSigma sp: Double, velocitySigma sv: Double) -> (x: [Double], p: [Double]) {
    var p = [Double](repeating: 0, count: 16)
    p[0] = sp * sp; p[5] = sp * sp; p[10] = sv * sv; p[15] = sv * sv
    return ([px, py, 0, 0], p)
}
Bench.measure("kernel_predict_update_position", operations: fixCount, extra: ["unit": "\"predict+update\""]) {
    var (x, p) = kernelState(px: 10, py: 6, positionSigma: 1, velocitySigma: 1)
    let r: [Double] = [0.0036, 0, 0.0036]
    var stats = [Double](repeating: 0, count: 4)
    var accepted = 0
    x.withUnsafeMutableBufferPointer { xb in
        p.withUnsafeMutableBufferPointer { pb in
            stats.withUnsafeMutableBufferPointer { sb in
                fixXY.withUnsafeBufferPointer { z in
                    for k in 0..<fixCount {
                        _ = locus_kalman_cv_predict(xb.baseAddress, pb.baseAddress, 0.25, 0.5)
                        if locus_kalman_cv_update_position(xb.baseAddress, pb.baseAddress, z.baseAddress! + 2 * k, r,
                                                           13.82, sb.baseAddress) == LOCUS_KALMAN_OK { accepted += 1 }
                    }
                }
            }
        }
    }
    precondition(accepted > fixCount * 9 / 10, "kernel loop lost the track")
    Bench.blackHole(x)
}

// 2. Kernel level, tightly coupled: predict (Δt = 4 ms / 222 ms) + one range update.
let rangeAnchors = ranges.flatMap { [$0.1.position.x, $0.1.position.y, $0.1.position.z] }
Bench.measure("kernel_predict_update_range", operations: rangeCount, extra: ["unit": "\"predict+range update\""]) {
    var (x, p) = kernelState(px: 14, py: 6, positionSigma: 0.1, velocitySigma: 1)
    var stats = [Double](repeating: 0, count: 4)
    var last = 0.0
    var accepted = 0
    x.withUnsafeMutableBufferPointer { xb in
        p.withUnsafeMutableBufferPointer { pb in
            stats.withUnsafeMutableBufferPointer { sb in
                rangeAnchors.withUnsafeBufferPointer { anchors in
                    for (k, (r, _)) in ranges.enumerated() {
                        _ = locus_kalman_cv_predict(xb.baseAddress, pb.baseAddress, r.timeSeconds - last, 0.5)
                        last = r.timeSeconds
                        if locus_kalman_cv_update_range(xb.baseAddress, pb.baseAddress, anchors.baseAddress! + 3 * k, tagHeight,
                                                        r.rangeMeters, 0.01, 2.5, 4, sb.baseAddress) == LOCUS_KALMAN_OK {
                            accepted += 1
                        }
                    }
                }
            }
        }
    }
    precondition(accepted > rangeCount * 8 / 10, "kernel range loop lost the track")
    Bench.blackHole(x)
}

// 3. TrackFilter level (gating, hysteresis, bookkeeping), single model and IMM, both couplings.
for (name, config) in [("filter_loose_single", TrackFilterConfiguration(coupling: .loose, usesInteractingModels: false)),
                       ("filter_loose_imm", TrackFilterConfiguration(coupling: .loose)),
                       ("filter_tight_single_per_range", TrackFilterConfiguration(usesInteractingModels: false)),
                       ("filter_tight_imm_per_range", TrackFilterConfiguration.standard)] {
    let loose = config.coupling == .loose
    Bench.measure(name, operations: loose ? fixCount : rangeCount) {
        var filter = TrackFilter(shared: TrackFilterConfiguration.Shared(config), tag: "T1", floor: "1F", tagHeightMeters: tagHeight)
        var accepted = 0
        if loose {
            for f in fixes where filter.update(fix: f) == .accepted { accepted += 1 }
        } else {
            for (r, l) in ranges where filter.update(correctedRangeMeters: l.correctedRange(r.rangeMeters), timeSeconds: r.timeSeconds,
                                                     address: l.address, anchor: l.position) == .accepted { accepted += 1 }
        }
        precondition(accepted > (loose ? fixCount : rangeCount) * 8 / 10, "\(name) lost the track")
        Bench.blackHole(filter)
    }
}

// 4. Smoothers over the whole recording (nodes built once, outside the timed part).
let nodes = TrackSmoother.nodes(fixes: fixes, configuration: .standard)
let rts = (try? TrackSmoother.smoothStates(nodes, tagHeightMeters: tagHeight, configuration: .standard)) ?? []
let banded = (try? TrackSmoother.smoothedMeansBanded(nodes)) ?? []
precondition(rts.count == fixCount && banded.count == fixCount, "smoothers failed")
var worst = 0.0
for (a, b) in zip(rts, banded) { worst = max(worst, abs(a.x[0] - b[0]), abs(a.x[1] - b[1])) }
precondition(worst < 1e-8, "RTS and banded disagree by \(worst) m")
let agreement = ["fixes": "\(fixCount)", "rts_vs_banded_max_m": String(format: "\"%.1e\"", worst)]
Bench.measure("smoother_rts_per_fix", operations: fixCount, runs: 10, warmup: 1, extra: agreement) {
    Bench.blackHole((try? TrackSmoother.smoothStates(nodes, tagHeightMeters: tagHeight, configuration: .standard))?.count)
}
Bench.measure("smoother_lapacke_banded_per_fix", operations: fixCount, runs: 10, warmup: 1, extra: agreement) {
    Bench.blackHole((try? TrackSmoother.smoothedMeansBanded(nodes))?.count)
}
Bench.measure("smoother_end_to_end_rts_per_fix", operations: fixCount, runs: 10, warmup: 1,
              extra: ["note": "\"IMM forward pass + node set-up + RTS\""]) {
    Bench.blackHole((try? TrackSmoother.smooth(fixes))?.count)
}

// 5. Epochs (issue #40 item 3): a tightly coupled epoch of 8 ranges (the round path,
// `update(rangesMeters:…)`) against a difference epoch of one uplink blink — 7 differences against
// one reference (`update(differences:…)`: per-difference gate, whitening, 7 scalar updates) —, the
// same walk, σ = 0.1 m per range / per arrival, update only (no closeEpoch). One operation = one epoch.
let epochCount = rangeCount / 8
let epochPositions = floorLocators.map(\.position)
let epochAddresses = floorLocators.map(\.address)
var epochTimes: [Double] = [], epochAnchors: [Point3] = [], epochRanges: [Double] = [], epochRangeAddresses: [LocatorAddress] = []
var epochPairs: [DifferencePair] = []
for k in 0..<epochCount {
    for j in 0..<8 {
        let (r, l) = ranges[8 * k + j]
        epochTimes.append(r.timeSeconds); epochAnchors.append(l.position)
        epochRanges.append(l.correctedRange(r.rangeMeters)); epochRangeAddresses.append(l.address)
    }
    let (x, y) = truth(k)
    let tag = Point3(x: x, y: y, z: tagHeight)
    let arrivals = epochPositions.map { tag.distance(to: $0) + 0.1 * rng.nextGaussian() }
    for j in 1..<8 {
        epochPairs.append(DifferencePair(reference: 0, locator: j, differenceMeters: arrivals[j] - arrivals[0], timeSeconds: Double(k) * 0.25))
    }
}
for (name, config) in [("imm", TrackFilterConfiguration.standard), ("single", TrackFilterConfiguration(usesInteractingModels: false))] {
    Bench.measure("filter_epoch_8_ranges_\(name)", operations: epochCount, extra: ["unit": "\"epoch of 8 ranges\""]) {
        var filter = TrackFilter(shared: TrackFilterConfiguration.Shared(config), tag: "T1", floor: "1F", tagHeightMeters: tagHeight)
        let times = epochTimes.span, anchors = epochAnchors.span, values = epochRanges.span, addresses = epochRangeAddresses.span
        for k in 0..<epochCount {
            let bounds = 8 * k..<8 * k + 8
            filter.update(rangesMeters: values.extracting(bounds), timesSeconds: times.extracting(bounds),
                          anchors: anchors.extracting(bounds), addresses: addresses.extracting(bounds))
        }
        precondition(filter.isTracking, "filter_epoch_8_ranges_\(name) lost the track")
        Bench.blackHole(filter)
    }
    Bench.measure("filter_epoch_7_differences_\(name)", operations: epochCount, extra: ["unit": "\"epoch of 7 differences\""]) {
        var filter = TrackFilter(shared: TrackFilterConfiguration.Shared(config), tag: "T1", floor: "1F", tagHeightMeters: tagHeight)
        let (x0, y0) = truth(0)
        filter.reset(toFix: PositionFix(timeSeconds: 0, tag: "T1", floor: "1F", position: Point3(x: x0, y: y0, z: tagHeight),
                                        covariance: SymmetricMatrix3(xx: 0.01, yy: 0.01, zz: 0),
                                        quality: FixQuality(hdop: 1, pdop: 1, residualRMSMeters: 0, locatorsUsed: 8)))
        let pairs = epochPairs.span, locators = epochPositions.span, addresses = epochAddresses.span
        var accepted = 0
        for k in 0..<epochCount where filter.update(differences: pairs.extracting(7 * k..<7 * k + 7), locators: locators,
                                                    addresses: addresses) == .accepted { accepted += 1 }
        precondition(filter.isTracking && accepted == epochCount,
                     "filter_epoch_7_differences_\(name) lost the track")
        Bench.blackHole(filter)
    }
}
