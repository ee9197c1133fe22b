import Locus
@testable import LocusSimulation
import Testing

/// The public Swift API of the calibration without truth.
@Suite("SiteCalibration (public API)")
struct SiteCalibrationTests {
    static func site(biases: [Double]) -> Site {
        let places: [(Double, Double)] = [(0, 0), (20, 0), (20, 12), (0, 12), (10, 0), (10, 12)]
        let locators = places.enumerated().map { k, p in
            Locator(address: LocatorAddress(UInt16(0x300 + k)), position: Point3(x: p.0, y: p.1, z: 2.5), biasMeters: biases[k])
        }
        return Site(building: .init(id: "b", name: "B"),
                    floors: [Floor(id: "1F", widthMeters: 20, heightMeters: 12, tagHeightMeters: 1.1, locators: locators)])
    }

    @Test("withoutTruth recovers the biases from a recording alone and writes them into the site; ranges elsewhere, and ones not finite or negative, are counted unused")
    func recoversBiases() throws {
        let truth = [0.1, 0.2, 0.05, 0.15, 0.25, 0.12]
        var ranges = SimulatedRecording.simulate(floor: Self.site(biases: truth).floors[0], durationSeconds: 180, seed: 21).ranges
        ranges.append(RangeMeasurement(timeSeconds: 1, locator: LocatorAddress(0x9999), rangeMeters: 3))
        ranges.append(RangeMeasurement(timeSeconds: 1, locator: LocatorAddress(0x300), rangeMeters: 3, floor: "9F"))
        // Not finite or negative: left out and counted, never a trap (the fit's data and the held-out blocks need finite times).
        ranges.append(RangeMeasurement(timeSeconds: .nan, locator: LocatorAddress(0x300), rangeMeters: 3))
        ranges.append(RangeMeasurement(timeSeconds: 2, locator: LocatorAddress(0x301), rangeMeters: .infinity))
        ranges.append(RangeMeasurement(timeSeconds: 3, locator: LocatorAddress(0x302), rangeMeters: -1))
        let report = try SiteCalibration.withoutTruth(site: Self.site(biases: Array(repeating: 0, count: 6)), ranges: ranges)
        #expect(report.unusedRangeCount == 5)
        #expect(report.floors.count == 1)
        let floor = try #require(report.floors.first)
        #expect(floor.commonOffsetSeparable && floor.warnings.isEmpty && floor.epochs > 500)
        for (l, b) in zip(floor.locators, truth) {
            #expect(l.isObservable && !l.isFlagged)
            #expect(abs((l.biasMeters ?? 1) - b) < 0.02, "\(l.address): \(l.biasMeters ?? -1) for \(b)")
        }
        for (l, b) in zip(report.site.floors[0].locators, truth) { #expect(abs(l.biasMeters - b) < 0.02) }
        // Judged on held-out blocks of 10 s and shown better: the site to use is the fit.
        let v = try #require(report.validation)
        #expect(v.judged && v.accepted && v.refused == nil && report.site == report.fittedSite, "\(v.text)")
        let surveyed = try #require(v.surveyed), calibrated = try #require(v.calibrated)
        #expect(calibrated < 0.8 * surveyed, "\(v.text)")
    }

    @Test("an unknown default floor is E3002")
    func unknownFloor() {
        var options = SiteCalibration.Options()
        options.defaultFloor = "nowhere"
        #expect(throws: LocusError.self) { try SiteCalibration.withoutTruth(site: Self.site(biases: Array(repeating: 0, count: 6)), ranges: [], options: options) }
    }
}
