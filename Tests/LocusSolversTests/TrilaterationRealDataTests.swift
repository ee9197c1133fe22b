import Foundation
import LocusCore
@testable import LocusSolvers
import Testing

/// Real recorded ranges with motion-capture truth (CUHK-SZ planar UWB data set, MIT licence; read in
/// place, never copied into the repository). Skipped where the data set is not present.
@Suite("Trilateration on recorded data")
struct TrilaterationRealDataTests {
    static let folder = "/work/shared/datasets/cuhksz-planar-uwb"
    static var isPresent: Bool { FileManager.default.fileExists(atPath: folder + "/static/trace.csv") }

    /// Locators 0–7 from the data set's site.json (addresses are the indices 0–7).
    static func anchors() throws -> [Point3] {
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/site.json"))
        let root = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let floors = root?["floors"] as? [[String: Any]] ?? []
        let locators = floors.first?["locators"] as? [[String: Any]] ?? []
        var result = [Point3](repeating: Point3(x: 0, y: 0, z: 0), count: locators.count)
        for l in locators {
            guard let address = l["address"] as? Int, address >= 0, address < result.count,
                  let x = l["x"] as? Double, let y = l["y"] as? Double, let z = l["z"] as? Double else { continue }
            result[address] = Point3(x: x, y: y, z: z)
        }
        return result
    }

    @Test("static points: every epoch solves, after bias correction robust RMSE under 8 cm and no worse than plain LS",
          .enabled(if: TrilaterationRealDataTests.isPresent))
    func staticPoints() throws {
        let anchors = try Self.anchors()
        #expect(anchors.count == 8)
        var truth: [String: Point3] = [:]
        for line in try String(contentsOfFile: Self.folder + "/static/points.csv", encoding: .utf8).split(separator: "\n").dropFirst() {
            let f = line.split(separator: ",")
            guard f.count >= 4, let x = Double(f[1]), let y = Double(f[2]), let z = Double(f[3]) else { continue }
            truth[String(f[0])] = Point3(x: x, y: y, z: z)
        }
        // Group rows into epochs (same tag and t) with a range for every anchor.
        var epochs: [(tag: String, ranges: [Double])] = []
        var currentKey = ""
        var ranges = [Double](repeating: -1, count: 8)
        func flush() {
            if !currentKey.isEmpty, ranges.allSatisfy({ $0 >= 0 }) {
                epochs.append((String(currentKey.split(separator: "@")[0]), ranges))
            }
            ranges = [Double](repeating: -1, count: 8)
        }
        for line in try String(contentsOfFile: Self.folder + "/static/trace.csv", encoding: .utf8).split(separator: "\n").dropFirst() {
            let f = line.split(separator: ",")
            guard f.count == 4, let anchor = Int(f[2]), anchor >= 0, anchor < 8, let r = Double(f[3]) else { continue }
            let key = "\(f[1])@\(f[0])"
            if key != currentKey { flush(); currentKey = key }
            ranges[anchor] = r
        }
        flush()
        // Bias correction as the engine does it (the solver's input is bias-corrected): each anchor's
        // bias is its mean range error over all static epochs (what `locus calibrate` estimates).
        var biasSum = [Double](repeating: 0, count: 8), biasCount = 0
        for epoch in epochs {
            guard let t = truth[epoch.tag] else { continue }
            for a in 0..<8 { biasSum[a] += epoch.ranges[a] - anchors[a].distance(to: t) }
            biasCount += 1
        }
        let bias = biasSum.map { $0 / Double(max(1, biasCount)) }
        // Raw ranges (all read long): the common-bias guard must keep robust mode from doing harm.
        do {
            let config = TrilaterationConfiguration(tagHeightMeters: 0.964, sigmaMeters: 0.1)
            var plainConfig = config
            plainConfig.isRobust = false
            var robustSum = 0.0, plainSum = 0.0, count = 0
            for epoch in epochs {
                guard let t = truth[epoch.tag] else { continue }
                let r = try KernelTrilaterator(configuration: config).solve(locators: anchors, rangesMeters: epoch.ranges)
                let p = try KernelTrilaterator(configuration: plainConfig).solve(locators: anchors, rangesMeters: epoch.ranges)
                robustSum += squaredError(r.position, t, mode: .planar)
                plainSum += squaredError(p.position, t, mode: .planar)
                count += 1
            }
            let robustRMSE = (robustSum / Double(count)).squareRoot(), plainRMSE = (plainSum / Double(count)).squareRoot()
            print("recorded static points, raw ranges: robust RMSE \(robustRMSE) m, plain \(plainRMSE) m")
            #expect(robustRMSE <= plainRMSE * 1.05)
        }
        #expect(bias.allSatisfy { $0 > 0.05 && $0 < 0.5 }, "raw ranges read 0.1–0.3 m long: \(bias)")
        epochs = epochs.map { ($0.tag, zip($0.ranges, bias).map { $0 - $1 }) }
        let config = TrilaterationConfiguration(tagHeightMeters: 0.964, sigmaMeters: 0.1)
        var plainConfig = config
        plainConfig.isRobust = false
        let robust = KernelTrilaterator(configuration: config)
        let plain = KernelTrilaterator(configuration: plainConfig)
        var robustSum = 0.0, plainSum = 0.0, count = 0, rejections = 0
        for epoch in epochs {
            guard let t = truth[epoch.tag] else { continue }
            let r = try robust.solve(locators: anchors, rangesMeters: epoch.ranges)
            let p = try plain.solve(locators: anchors, rangesMeters: epoch.ranges)
            #expect(r.mode == .planar)
            robustSum += squaredError(r.position, t, mode: .planar)
            plainSum += squaredError(p.position, t, mode: .planar)
            rejections += r.rejectedCount
            count += 1
        }
        let robustRMSE = (robustSum / Double(count)).squareRoot(), plainRMSE = (plainSum / Double(count)).squareRoot()
        print("recorded static points: \(count) epochs, robust RMSE \(robustRMSE) m, plain \(plainRMSE) m, \(rejections) rejections")
        #expect(count >= 20_000)
        #expect(robustRMSE <= 0.08)
        #expect(robustRMSE <= plainRMSE * 1.02)
    }
}
