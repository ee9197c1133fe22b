@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSimulation
@testable import LocusSolvers
import LocusTestSupport
import Testing

/// Calibration without truth (`SelfCalibration`) on simulated recordings with fixed seeds: biases
/// recovered, a displaced locator found and put back, no false flag, and what a recording cannot
/// determine said rather than guessed.
@Suite("Calibration without truth")
struct SelfCalibrationTests {
    init() { LapackThreads.useOneThreadUnlessConfigured() }

    /// The hall fixture's floor (40 × 25 m, 8 locators on the walls at 2.6 m, tags at 1.1 m) with
    /// `biases`, its locators moved by `moves` (slot → offset) when given.
    static func hall(biases: [Double] = Array(repeating: 0, count: 8), moves: [Int: Point2] = [:]) -> Floor {
        let places: [(Double, Double, Double)] = [(0.3, 0.3, 2.6), (20, 0.3, 2.6), (39.7, 0.3, 2.6), (39.7, 12.5, 2.6),
                                                  (39.7, 24.7, 2.6), (20, 24.7, 2.6), (0.3, 24.7, 2.6), (0.3, 12.5, 2.55)]
        let locators = places.enumerated().map { k, p in
            let move = moves[k] ?? Point2(x: 0, y: 0)
            return Locator(address: LocatorAddress(UInt16(40407 + k)), position: Point3(x: p.0 + move.x, y: p.1 + move.y, z: p.2),
                           biasMeters: biases[k])
        }
        return Floor(id: "1F", widthMeters: 40, heightMeters: 25, tagHeightMeters: 1.1, locators: locators)
    }

    /// Biases drawn from U(0, 0.3) m.
    static func biases(seed: UInt64) -> [Double] {
        var rng = SeededGenerator(seed: seed &+ 1_000)
        return (0..<8).map { _ in rng.uniform(0, 0.3) }
    }

    /// A walk of `seconds` on `truth` (σ 0.1 m), calibrated on `surveyed`.
    static func calibrate(truth: Floor, surveyed: Floor, seconds: Double, seed: UInt64, walk: WalkConfiguration = .standard,
                          configuration: SelfCalibrationConfiguration = .standard,
                          keep: (RangeMeasurement) -> Bool = { _ in true }) throws -> SelfCalibration {
        let recording = SimulatedRecording.simulate(floor: truth, durationSeconds: seconds, seed: seed, walk: walk)
        let data = SelfCalibrationData(measurements: recording.ranges.filter(keep), floor: surveyed)
        return try SelfCalibration.estimate(floor: surveyed, data: data, planar: true, configuration: configuration)
    }

    static func rms(_ a: [Double?], _ b: [Double]) -> Double {
        let pairs = zip(a, b).compactMap { x, y in x.map { $0 - y } }
        return (pairs.reduce(0) { $0 + $1 * $1 } / Double(max(1, pairs.count))).squareRoot()
    }

    @Test("5 min of walking, σ 0.1 m, biases from U(0, 0.3): recovered within 2 cm RMS, noise ≈ σ, nothing flagged")
    func recoversBiases() throws {
        let truth = Self.biases(seed: 11)
        let c = try Self.calibrate(truth: Self.hall(biases: truth), surveyed: Self.hall(), seconds: 300, seed: 11)
        let error = Self.rms(c.locators.map(\.biasMeters), truth)
        #expect(c.locators.allSatisfy { $0.isObservable && $0.biasMeters != nil && !$0.isFlagged })
        #expect(error <= 0.02, "bias RMS error \(error) m")
        #expect(c.commonOffsetSeparable)
        for l in c.locators {
            #expect((0.08...0.12).contains(l.noiseMeters ?? 0), "\(l.address) noise \(l.noiseMeters ?? -1)")
            #expect((l.biasSDMeters ?? 1) < 0.01)
        }
        #expect(c.warnings.isEmpty, "\(c.warnings)")
        // Written to the floor.
        let applied = c.applied(to: Self.hall())
        #expect(Self.rms(applied.locators.map(\.biasMeters), truth) <= 0.02)
    }

    @Test("one locator surveyed 0.5 m off is flagged, and its corrected position is within 5 cm along its checkable directions (the whole error, and the biases within 2 cm, when every direction is checkable; else the rest left as surveyed, said)",
          arguments: [(3, Point2(x: -0.3, y: 0.4)), (5, Point2(x: 0.4, y: -0.3))])
    func findsDisplacedLocator(slot: Int, move: Point2) throws {
        let truth = Self.biases(seed: 12)
        let surveyed = Self.hall(moves: [slot: move])
        var configuration = SelfCalibrationConfiguration.standard
        configuration.fixesPositions = true
        let c = try Self.calibrate(truth: Self.hall(biases: truth), surveyed: surveyed, seconds: 300, seed: 12, configuration: configuration)
        #expect(c.locators.map(\.isFlagged) == (0..<8).map { $0 == slot }, "\(c.locators.map { ($0.address, $0.isFlagged, $0.note ?? "") })")
        let fixed = c.applied(to: surveyed).locators[slot].position
        let correct = Self.hall().locators[slot].position
        let miss = ((fixed.x - correct.x) * (fixed.x - correct.x) + (fixed.y - correct.y) * (fixed.y - correct.y)).squareRoot()
        // Moved along its checkable directions only (the honest σ of a direction above 3 cm: held at
        // the survey; on this seed 0x9DDA's radial direction, since the jackknife floored at the formal).
        let check = try #require(c.locators[slot].positionCheck)
        let whole = check.remainder?.isEmpty ?? true
        for (v, sd) in zip(check.directions, check.sdMeters) where sd <= check.thresholdMeters {
            let along = (fixed.x - correct.x) * v.x + (fixed.y - correct.y) * v.y
            #expect(abs(along) <= 0.05, "corrected position \(fixed) is \(along) m from the true \(correct) along \(v): \(check.summary)")
        }
        if whole {
            #expect(miss <= 0.05, "corrected position \(fixed) is \(miss) m from the true \(correct)")
        } else {
            #expect(check.summary.contains("left as surveyed"), "\(check.summary)")
        }
        #expect(c.locators[slot].note?.contains("from its surveyed position") == true)
        // The note gives both positions and the signed offset, not an offset that reads as a place
        // ("towards (0.3, -0.4)", issue #41 item 8).
        let note = c.locators[slot].note ?? ""
        let at = surveyed.locators[slot].position
        #expect(!note.contains("towards"), "\(note)")
        #expect(note.contains("surveyed (\(SelfCalibration.metres(at.x)), \(SelfCalibration.metres(at.y)))"), "\(note)")
        #expect(note.contains("fitted ("), "\(note)")
        #expect(note.contains(move.x < 0 ? "Δx +" : "Δx -") && note.contains(move.y < 0 ? "Δy +" : "Δy -"), "\(note)")
        // With the corrections, the biases are those of the true positions (the others' only, when the
        // flagged locator's bias takes the share of its error left as surveyed).
        let others = (0..<8).filter { whole || $0 != slot }
        #expect(Self.rms(others.map { c.locators[$0].biasMeters }, others.map { truth[$0] }) <= 0.02, "\(check.summary)")
    }

    @Test("a correctly surveyed site: no locator flagged over 20 seeds (5 min each)", arguments: 1...20)
    func noFalseFlags(seed: Int) throws {
        let truth = Self.biases(seed: UInt64(seed))
        let c = try Self.calibrate(truth: Self.hall(biases: truth), surveyed: Self.hall(), seconds: 300, seed: UInt64(seed))
        #expect(!c.locators.contains { $0.isFlagged }, "\(c.locators.filter(\.isFlagged).map { ($0.address, $0.note ?? "") })")
        #expect(Self.rms(c.locators.map(\.biasMeters), truth) <= 0.03)
    }

    /// A 6 × 5 m room with a locator in each corner at 2.5 m (tags at 1.0 m) and `biases`.
    static func room(biases: [Double] = [0, 0, 0, 0]) -> Floor {
        let corners: [(Double, Double)] = [(0, 0), (6, 0), (6, 5), (0, 5)]
        let locators = corners.enumerated().map { k, p in
            Locator(address: LocatorAddress(UInt16(0x200 + k)), position: Point3(x: p.0, y: p.1, z: 2.5), biasMeters: biases[k])
        }
        return Floor(id: "room", widthMeters: 6, heightMeters: 5, tagHeightMeters: 1.0, locators: locators)
    }

    @Test("four locators in a room (two redundant ranges an epoch), one σ for all: every locator's noise within 25 % of σ (none collapses to the 1 cm floor) and the biases within 4 cm RMS", arguments: 1...6)
    func fourLocatorScales(seed: Int) throws {
        // Before 2026-12-07 the scales were estimated from the residuals of the weighted fit itself: two
        // locators with the smallest scales take the weight, fit each epoch's position exactly, leave
        // residuals of zero and keep their scales at the 1 cm floor (seeds 2–5 here: one or two locators at
        // 0.010 m, others 0.13–0.18 m; on the Bielefeld walk m1l two at 0.010 m where the truth shows ~0.09 m
        // for all four). The biases came out about as well either way (RMS error 5–40 mm over the seeds,
        // mean 19.5 before, 18.3 after); the weights the fit gave the ranges did not.
        let truth = [0.12, -0.05, 0.2, 0.08]
        let c = try Self.calibrate(truth: Self.room(biases: truth), surveyed: Self.room(), seconds: 120, seed: UInt64(seed))
        for l in c.locators {
            #expect((0.075...0.125).contains(l.noiseMeters ?? 0), "seed \(seed) \(l.address) noise \(l.noiseMeters ?? -1)")
        }
        let error = Self.rms(c.locators.map(\.biasMeters), truth)
        #expect(error <= 0.04, "seed \(seed): bias RMS error \(error) m, \(c.locators.map { $0.biasMeters ?? .nan })")
    }

    @Test("a fit that rejects more than `maximumOutlierShare` of the ranges has broken down: the biases are kept, the reason first, per locator; under it the same recording calibrates")
    func brokenDownFitKeepsBiases() throws {
        // Every tenth range 2 m long (NLOS-like): the Tukey stage rejects them, ~10 % of the ranges. With the
        // share set below that the fit counts as broken down (on real data: a still tag with one anchor
        // blocked rejected 9,455 of 9,496 ranges and fitted −10.3 m; BielefeldRecordingTests).
        let truth = [0.12, -0.05, 0.2, 0.08]
        let recording = SimulatedRecording.simulate(floor: Self.room(biases: truth), durationSeconds: 120, seed: 7)
        let ranges = recording.ranges.enumerated().map { k, r in
            var r = r
            if k % 10 == 3 { r.rangeMeters += 2 }
            return r
        }
        let data = SelfCalibrationData(measurements: ranges, floor: Self.room())
        var strict = SelfCalibrationConfiguration.standard
        strict.maximumOutlierShare = 0.05
        let broken = try SelfCalibration.estimate(floor: Self.room(), data: data, planar: true, configuration: strict)
        #expect(broken.warnings.first?.hasPrefix("the biases are not calibrated: the robust fit rejected") == true, "\(broken.warnings)")
        #expect(broken.locators.allSatisfy { $0.biasMeters == nil && $0.note?.contains("the fit broke down") == true })
        let fine = try SelfCalibration.estimate(floor: Self.room(), data: data, planar: true)
        #expect(!fine.warnings.contains { $0.hasPrefix("the biases are not calibrated") }, "\(fine.warnings)")
        #expect(Self.rms(fine.locators.map(\.biasMeters), truth) <= 0.04, "\(fine.locators.map { $0.biasMeters ?? .nan })")
    }

    @Test("a walk along one line: the biases are not calibrated, said first and per locator (a shift of the path across the line looks like a pattern of biases); nothing flagged")
    func collinearWalk() throws {
        // On these simulated constant biases the fit along a line comes out right (each bias within 2 cm
        // before 2026-12-07); on a real walk along a line it wrote a shift of the path across the line as
        // biases, 0.1846 → 0.3994 m (docs/datasets.md, finding 7), and the held-out blocks on the same line
        // accepted it. So a line is not calibrated without truth.
        let truth = Self.biases(seed: 13)
        let walk = WalkConfiguration(waypoints: [Point2(x: 5, y: 12.5), Point2(x: 35, y: 12.5)])
        let c = try Self.calibrate(truth: Self.hall(biases: truth), surveyed: Self.hall(), seconds: 120, seed: 13, walk: walk)
        #expect(c.warnings.first?.hasPrefix("the biases are not calibrated: the tag's path is nearly a line") == true,
                "\(c.warnings) spread \(c.pathSpreadMeters)")
        for l in c.locators {
            #expect(l.biasMeters == nil, "\(l.address): \(l.biasMeters ?? .nan)")
            #expect(l.note?.contains("the tag's path is a line") == true, "\(l.note ?? "")")
            #expect(!l.isFlagged)
        }
    }

    @Test("a walk around a 1.4 × 1.0 m square is not a line (calibrated), and a tag standing still is not calibrated: its report gives the site as it stands")
    func lineAspect() throws {
        let truth = Self.biases(seed: 14)
        // Back and forth on a 1.4 × 1.0 m square: not a line.
        let square = WalkConfiguration(waypoints: [Point2(x: 19, y: 12), Point2(x: 20.4, y: 12), Point2(x: 20.4, y: 13), Point2(x: 19, y: 13)])
        let wandering = try Self.calibrate(truth: Self.hall(biases: truth), surveyed: Self.hall(), seconds: 120, seed: 14, walk: square)
        #expect(!wandering.warnings.contains { $0.hasPrefix("the biases are not calibrated") }, "\(wandering.warnings) \(wandering.pathSpreadMeters)")
        #expect(wandering.locators.allSatisfy { $0.biasMeters != nil })
        let still = WalkConfiguration(waypoints: [Point2(x: 20, y: 12.5), Point2(x: 20.01, y: 12.5)])
        let standing = try Self.calibrate(truth: Self.hall(biases: truth), surveyed: Self.hall(), seconds: 60, seed: 14, walk: still)
        #expect(standing.warnings.first?.hasPrefix("the biases are not calibrated: the tag barely moved") == true,
                "\(standing.warnings) \(standing.pathSpreadMeters)")
        #expect(standing.locators.allSatisfy { $0.biasMeters == nil })
        // Its report gives the site as it stands (biases held, positions fitted), not the refused fit,
        // whose still tag traded its place against the biases (Bielefeld blocked-a1: biases of −5 to
        // +6 m, "residual RMS 0.0000 m" with every range rejected).
        let ranges = standing.locators.reduce(0) { $0 + $1.rangeCount }
        #expect((0.05...0.3).contains(standing.residualRMSMeters), "residual RMS \(standing.residualRMSMeters) m")
        #expect(standing.outlierCount * 5 < ranges, "\(standing.outlierCount) of \(ranges) ranges rejected")
        #expect(standing.locators.allSatisfy { (0.05...0.2).contains($0.noiseMeters ?? 0) }, "\(standing.locators.map { $0.noiseMeters ?? -1 })")
        #expect(!standing.commonOffsetSeparable && standing.commonOffsetSDMeters == .infinity)
        #expect(standing.text().contains("common offset not fitted (no bias calibrated)"))
    }

    @Test("locators along a corridor and a walk along it (a degenerate floor): the biases are not calibrated (a line)")
    func corridorIsNotGuessed() throws {
        // Six locators on the corridor's axis (y = 1.5), the tag walking along it: across the axis
        // nothing is measured (the ranges are even in y − 1.5). The biases come out ~2 cm high here, more
        // than their σ (5 mm) says: the planar model's blind direction leaks into them.
        let places = [2.0, 8.0, 14.0, 20.0, 26.0, 32.0]
        let truth = [0.1, 0.25, 0.05, 0.2, 0.15, 0.3]
        func corridor(_ biases: [Double]) -> Floor {
            Floor(id: "C", widthMeters: 34, heightMeters: 3, tagHeightMeters: 1.1,
                  locators: places.enumerated().map { k, x in
                      Locator(address: LocatorAddress(UInt16(200 + k)), position: Point3(x: x, y: 1.5, z: 2.6), biasMeters: biases[k])
                  })
        }
        let walk = WalkConfiguration(marginMeters: 0.5, waypoints: [Point2(x: 1, y: 1.5), Point2(x: 33, y: 1.5)])
        let c = try Self.calibrate(truth: corridor(truth), surveyed: corridor(Array(repeating: 0, count: 6)), seconds: 120, seed: 18, walk: walk)
        #expect(c.warnings.first?.hasPrefix("the biases are not calibrated: the tag's path is nearly a line") == true, "\(c.warnings)")
        #expect(c.locators.allSatisfy { $0.biasMeters == nil })
    }

    @Test("a locator heard in too few ranges keeps its bias, with a note naming why; the others are still recovered")
    func rarelyHeard() throws {
        let truth = Self.biases(seed: 14)
        var kept = 0
        let quiet = LocatorAddress(40409)
        let c = try Self.calibrate(truth: Self.hall(biases: truth), surveyed: Self.hall(biases: Array(repeating: 0.05, count: 8)), seconds: 300,
                                   seed: 14) { m in
            guard m.locator == quiet else { return true }
            kept += 1
            return kept <= 30
        }
        let l = c.locators[2]
        #expect(l.biasMeters == nil && !l.isObservable && l.rangeCount == 30)
        #expect(l.note?.contains("30 ranges") == true, "\(l.note ?? "")")
        #expect(c.applied(to: Self.hall(biases: Array(repeating: 0.05, count: 8))).locators[2].biasMeters == 0.05)
        var others = truth
        others.remove(at: 2)
        var estimated = c.locators.map(\.biasMeters)
        estimated.remove(at: 2)
        #expect(Self.rms(estimated, others) <= 0.02)
    }

    @Test("locators in one corner seen from far away: the common offset is not separable, said, and the site's mean is kept")
    func commonOffsetNotSeparable() throws {
        // Four locators within 3 m of each other; the tag walks 20–35 m away.
        let corner = [(0.3, 0.3, 2.6), (3.0, 0.3, 2.6), (0.3, 3.0, 2.6), (3.0, 3.0, 2.4)].enumerated().map { k, p in
            Locator(address: LocatorAddress(UInt16(100 + k)), position: Point3(x: p.0, y: p.1, z: p.2), biasMeters: 0.1)
        }
        let truthFloor = Floor(id: "1F", widthMeters: 40, heightMeters: 25, tagHeightMeters: 1.1,
                               locators: corner.enumerated().map { k, l in
                                   var l = l
                                   l.biasMeters = [0.12, 0.2, 0.05, 0.25][k]
                                   return l
                               })
        let walk = WalkConfiguration(waypoints: [Point2(x: 25, y: 20), Point2(x: 35, y: 22), Point2(x: 30, y: 14), Point2(x: 22, y: 23)])
        let surveyed = Floor(id: "1F", widthMeters: 40, heightMeters: 25, tagHeightMeters: 1.1, locators: corner)
        let c = try Self.calibrate(truth: truthFloor, surveyed: surveyed, seconds: 300, seed: 15, walk: walk)
        #expect(!c.commonOffsetSeparable)
        #expect(c.warnings.contains { $0.contains("common offset") }, "\(c.warnings)")
        let estimated = c.locators.compactMap(\.biasMeters)
        if !estimated.isEmpty {
            #expect(abs(estimated.reduce(0, +) / Double(estimated.count) - 0.1) < 0.002, "mean \(estimated)")
        }
    }

    @Test("ranges between locators are used: the tag's share of the biases is estimated, the biases still recovered")
    func rangesBetweenLocators() throws {
        let truth = Self.biases(seed: 16)
        let floor = Self.hall(biases: truth)
        var recording = SimulatedRecording.simulate(floor: floor, durationSeconds: 120, seed: 16)
        // Tag delay c = 0.04 m: a locator's own share is bᵢ − c; between locators i and k, d + bᵢ + bₖ − 2c.
        var rng = SeededGenerator(seed: 16)
        for (i, a) in floor.locators.enumerated() {
            for (k, b) in floor.locators.enumerated() where k != i {
                for _ in 0..<20 {
                    let d = a.position.distance(to: b.position) + truth[i] + truth[k] - 2 * 0.04 + 0.05 * rng.nextGaussian()
                    recording.ranges.append(RangeMeasurement(timeSeconds: 1, tag: TagID(a.address.description), locator: b.address, rangeMeters: d))
                }
            }
        }
        let data = SelfCalibrationData(measurements: recording.ranges, floor: Self.hall())
        #expect(data.pairs.count == 8 * 7 * 20)
        let c = try SelfCalibration.estimate(floor: Self.hall(), data: data, planar: true)
        #expect(abs((c.tagDelayMeters ?? 1) - 0.04) < 0.01, "tag delay \(c.tagDelayMeters ?? -1)")
        #expect(Self.rms(c.locators.map(\.biasMeters), truth) <= 0.02)
    }

    @Test("too few epochs is an error (E4001), not a guess")
    func tooFewEpochs() throws {
        let recording = SimulatedRecording.simulate(floor: Self.hall(), durationSeconds: 1, seed: 17)
        let data = SelfCalibrationData(measurements: recording.ranges, floor: Self.hall())
        #expect(throws: LocusError.self) { try SelfCalibration.estimate(floor: Self.hall(), data: data, planar: true) }
    }
}
