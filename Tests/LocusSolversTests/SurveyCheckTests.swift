import Foundation
@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSimulation
@testable import LocusSolvers
import Testing

/// The survey check with a stated confidence (issue #42): a locator surveyed 0.3 m or more off in a
/// direction the recording sees is flagged and put back; a correct site is not flagged; what the
/// recording cannot see is said "not checkable", never flagged; NLOS in the others' ranges does not
/// raise a flag.
@Suite("Survey check: block test on the observable directions")
struct SurveyCheckTests {
    init() { LapackThreads.useOneThreadUnlessConfigured() }

    /// The two simulated layouts: the hall fixture's floor (8 locators on the walls of 40 × 25 m) and
    /// the 20 × 12 m lab of the command-line tests (6 locators, 4 corners and 2 mid-walls, z 2.5 m).
    enum Layout: String, CaseIterable, Sendable {
        case hall, lab

        func floor(biases: [Double]? = nil, moves: [Int: Point2] = [:]) -> Floor {
            switch self {
            case .hall:
                return SelfCalibrationTests.hall(biases: biases ?? Array(repeating: 0, count: 8), moves: moves)
            case .lab:
                let points: [(Double, Double)] = [(0, 0), (20, 0), (20, 12), (0, 12), (10, 0), (10, 12)]
                let locators = points.enumerated().map { i, p in
                    let move = moves[i] ?? Point2(x: 0, y: 0)
                    return Locator(address: LocatorAddress(UInt16(0x200 + i)), position: Point3(x: p.0 + move.x, y: p.1 + move.y, z: 2.5),
                                   biasMeters: biases?[i] ?? 0)
                }
                return Floor(id: "1F", widthMeters: 20, heightMeters: 12, tagHeightMeters: 1.1, locators: locators)
            }
        }

        var count: Int { self == .hall ? 8 : 6 }

        /// Biases from U(0, 0.3) m.
        func biases(seed: UInt64) -> [Double] {
            var rng = SeededGenerator(seed: seed &+ 1_000)
            return (0..<count).map { _ in rng.uniform(0, 0.3) }
        }
    }

    /// `tags` tags walking `seconds` on the layout with biases (seed), calibrated on the unbiased
    /// layout with `moves` applied (the survey errors).
    static func run(_ layout: Layout, moves: [Int: Point2] = [:], seconds: Double, seed: UInt64, tags: Int = 2,
                    nlos: Double = 0, walk: WalkConfiguration = .standard, fixes: Bool = false) throws -> SelfCalibration {
        let truth = layout.floor(biases: layout.biases(seed: seed))
        let recording = SimulatedRecording.simulate(floor: truth, tagCount: tags, durationSeconds: seconds, seed: seed, walk: walk,
                                                    ranging: RangeSimulationConfiguration(nlosProbability: nlos))
        let surveyed = layout.floor(moves: moves)
        let data = SelfCalibrationData(measurements: recording.ranges, floor: surveyed)
        var configuration = SelfCalibrationConfiguration.standard
        configuration.fixesPositions = fixes
        return try SelfCalibration.estimate(floor: surveyed, data: data, planar: true, configuration: configuration)
    }

    /// A survey error case: layout, slot, its error (surveyed − true), in words.
    struct Case: Sendable, CustomStringConvertible {
        var layout: Layout, slot: Int, move: Point2, kind: String
        var description: String { "\(layout) slot \(slot) \(kind) (\(move.x), \(move.y))" }
    }

    /// Radially outward (away from where the tags walk) from a mid-wall locator and a corner at the
    /// floor's edge, and along a wall (across the lines of sight), on both layouts, 0.3–0.5 m.
    static let cases: [Case] = [
        Case(layout: .hall, slot: 1, move: Point2(x: 0, y: -0.5), kind: "mid-wall, radially outward 0.5 m"),
        Case(layout: .hall, slot: 1, move: Point2(x: 0, y: -0.3), kind: "mid-wall, radially outward 0.3 m"),
        Case(layout: .hall, slot: 4, move: Point2(x: 0.212, y: 0.212), kind: "corner at the floor's edge, outward 0.3 m"),
        Case(layout: .hall, slot: 3, move: Point2(x: 0, y: 0.3), kind: "mid-wall, along the wall 0.3 m"),
        Case(layout: .lab, slot: 4, move: Point2(x: 0, y: -0.3), kind: "mid-wall, radially outward 0.3 m"),
        Case(layout: .lab, slot: 2, move: Point2(x: 0.212, y: 0.212), kind: "corner at the floor's edge, outward 0.3 m"),
        Case(layout: .lab, slot: 0, move: Point2(x: 0.3, y: 0), kind: "corner, along one wall 0.3 m"),
    ]

    /// |`move`| projected on the checkable directions of `check`, metres.
    static func seen(_ move: Point2, by check: SelfCalibrationPositionCheck?) -> Double {
        guard let check, check.checkable else { return 0 }
        var sum = 0.0
        for (v, sd) in zip(check.directions, check.sdMeters) where sd <= check.thresholdMeters {
            let along = v.x * move.x + v.y * move.y
            sum += along * along
        }
        return sum.squareRoot()
    }

    @Test("a 0.3–0.5 m survey error, 2 tags walking 120 s: flagged alone and put back within 5 cm along its checkable directions when the recording sees it (the issue's radially outward 0.5 m and the along-wall cases are seen); never a flag on another locator",
          arguments: cases)
    func flagsAndFixes(_ c: Case) throws {
        let result = try Self.run(c.layout, moves: [c.slot: c.move], seconds: 120, seed: 21, fixes: true)
        let l = result.locators[c.slot]
        let seen = Self.seen(c.move, by: l.positionCheck)
        print("survey check, \(c): seen \(seen) m; \(l.positionCheck?.summary ?? "-")")
        #expect(!result.locators.enumerated().contains { $0.offset != c.slot && $0.element.isFlagged },
                "\(c): \(result.locators.map { ($0.address, $0.isFlagged, $0.positionCheck?.summary ?? "") })")
        if c.kind.contains("0.5 m") || c.kind.contains("along the wall") {
            #expect(seen >= 0.25, "\(c): the recording should see it: \(l.positionCheck?.summary ?? "no check")")
        }
        if l.isFlagged { try Self.expectMovedAlongCheckableOnly(l, c, result) }
        guard seen >= 0.25 else { return }
        #expect(l.isFlagged, "\(c): \(l.positionCheck?.summary ?? "")")
        // Moved along its checkable directions only: put back within 5 cm along them.
        let miss = Self.miss(c, result)
        print("survey check, \(c): left \(miss.checkable) m along the checkable directions, \(miss.whole) m whole")
        #expect(miss.checkable <= 0.05, "\(c): \(miss) m from the true position")
        #expect(l.note?.contains("from its surveyed position") == true && l.note?.contains("T²") == true, "\(l.note ?? "")")
    }

    @Test("correct sites: no locator flagged over 50 seeds, 25 per layout (2 tags, 120 s; every 2nd seed with 5 % NLOS)",
          arguments: Layout.allCases)
    func noFalseFlags(_ layout: Layout) throws {
        var flagged: [String] = []
        var smallest = 1.0
        for seed in UInt64(1)...25 {
            let c = try Self.run(layout, seconds: 120, seed: seed, nlos: seed % 2 == 0 ? 0.05 : 0)
            for l in c.locators {
                if l.isFlagged { flagged.append("seed \(seed) \(l.address): \(l.note ?? "")") }
                if let p = l.positionCheck?.test?.pValue { smallest = min(smallest, p) }
            }
        }
        #expect(flagged.isEmpty, "\(flagged)")
        print("survey check, \(layout), 25 correct seeds: smallest p-value \(smallest)")
    }

    @Test("a displaced locator is still flagged, and only it, with 5 % NLOS ranges (0.3–2.5 m long) on every locator")
    func nlosElsewhere() throws {
        let c = try Self.run(.hall, moves: [1: Point2(x: 0, y: -0.5)], seconds: 120, seed: 23, nlos: 0.05, fixes: true)
        #expect(c.locators.map(\.isFlagged) == (0..<8).map { $0 == 1 }, "\(c.locators.map { ($0.address, $0.positionCheck?.summary ?? "") })")
    }

    @Test("gross outliers in one locator's ranges (30 % read 0.5–3 m long): no locator flagged on a correct site, and a displaced one found alone wherever its error shows on its checkable directions (≥ 0.25 m along them)")
    func grossOutliersInOneLocator() throws {
        for moves in [[:], [1: Point2(x: 0, y: -0.5)]] as [[Int: Point2]] {
            let truth = Layout.hall.floor(biases: Layout.hall.biases(seed: 26))
            var recording = SimulatedRecording.simulate(floor: truth, tagCount: 2, durationSeconds: 120, seed: 26)
            var rng = SeededGenerator(seed: 26)
            let noisy = truth.locators[5].address
            for k in recording.ranges.indices where recording.ranges[k].locator == noisy && rng.uniform(0, 1) < 0.3 {
                recording.ranges[k].rangeMeters += rng.uniform(0.5, 3)
            }
            let surveyed = Layout.hall.floor(moves: moves)
            var configuration = SelfCalibrationConfiguration.standard
            configuration.fixesPositions = true
            let c = try SelfCalibration.estimate(floor: surveyed, data: SelfCalibrationData(measurements: recording.ranges, floor: surveyed),
                                                 planar: true, configuration: configuration)
            // The sweep's rule: a survey error is seen when it projects ≥ 0.25 m on the checkable
            // directions; seen, it must be flagged. (Seed 26: 0x9DD8's radial σ reads 0.0300+ m, just
            // over 3 cm — not checkable, said —, so its radial 0.5 m is not seen; before the jackknife
            // and the formal floor, its sandwich σ was under 3 cm and it was flagged.)
            let seen = (0..<8).map { k -> Bool in
                guard let move = moves[k], let check = c.locators[k].positionCheck, check.notCheckableReason == nil else { return false }
                var along2 = 0.0
                for (v, sd) in zip(check.directions, check.sdMeters) where sd <= check.thresholdMeters {
                    along2 += (v.x * move.x + v.y * move.y) * (v.x * move.x + v.y * move.y)
                }
                return along2.squareRoot() >= 0.25
            }
            for k in 0..<8 {
                #expect(c.locators[k].isFlagged ? moves[k] != nil : !seen[k],
                        "\(moves): \(c.locators.map { ($0.address, $0.isFlagged, $0.positionCheck?.summary ?? "") })")
            }
        }
    }

    @Test("4 locators in 3-D: the others only just fix the tag, so no locator is checkable and none is flagged, though one is 0.5 m off")
    func fourLocatorsSpatial() throws {
        let places: [(Double, Double, Double)] = [(0, 0, 2.8), (12, 0, 0.4), (12, 9, 2.6), (0, 9, 0.6)]
        func floor(_ moved: Bool, _ biases: [Double]) -> Floor {
            Floor(id: "3D", widthMeters: 12, heightMeters: 9, tagHeightMeters: 1.1,
                  locators: places.enumerated().map { k, p in
                      Locator(address: LocatorAddress(UInt16(0x300 + k)),
                              position: Point3(x: p.0 + (moved && k == 2 ? 0.4 : 0), y: p.1 + (moved && k == 2 ? 0.3 : 0), z: p.2),
                              biasMeters: biases[k])
                  })
        }
        let recording = SimulatedRecording.simulate(floor: floor(false, [0.1, 0.2, 0.15, 0.05]), tagCount: 2, durationSeconds: 120, seed: 24)
        let surveyed = floor(true, [0, 0, 0, 0])
        let c = try SelfCalibration.estimate(floor: surveyed, data: SelfCalibrationData(measurements: recording.ranges, floor: surveyed),
                                             planar: false)
        for l in c.locators {
            #expect(!l.isFlagged, "\(l.address): \(l.note ?? "")")
            #expect(l.positionCheck.map { !$0.checkable } ?? true, "\(l.address): \(l.positionCheck?.summary ?? "")")
            if let check = l.positionCheck, check.notCheckableReason == nil, !check.directions.isEmpty {
                Issue.record("\(l.address) should be not checkable for its redundancy: \(check.summary)")
            }
        }
        #expect(c.locators.compactMap(\.note).contains { $0.contains("not checkable") }, "\(c.locators.map(\.note))")
    }

    @Test("a walk in one corner only: a locator seen from afar over a narrow angle is not checkable and not flagged, though 0.5 m off")
    func walkOnOneSide() throws {
        // The tags stay in a 5 m × 4 m corner of the hall (x 1–6, y 1–5); 0x9DDB at (39.7, 24.7) sees
        // them from 38–43 m over 6°.
        let walk = WalkConfiguration(marginMeters: 0, waypoints: [Point2(x: 1, y: 1), Point2(x: 6, y: 1), Point2(x: 6, y: 5),
                                                                  Point2(x: 1, y: 5), Point2(x: 3.5, y: 3)])
        let far = try Self.run(.hall, moves: [4: Point2(x: 0.3, y: 0.4)], seconds: 120, seed: 25, walk: walk)
        let l = far.locators[4]
        #expect(!l.isFlagged && l.positionCheck?.checkable == false, "\(l.positionCheck?.summary ?? "")")
        #expect(l.note?.contains("not checkable") == true, "\(l.note ?? "")")
        #expect(!far.locators.contains { $0.isFlagged }, "\(far.locators.filter(\.isFlagged).map { ($0.address, $0.note ?? "") })")
        for x in far.locators { print("one side: \(x.address) \(x.positionCheck?.summary ?? "-")") }
    }

    // MARK: range differences (TDoA)

    /// Uplink TDoA of 2 tags walking `seconds` on the layout with biases (seed) — the blinks
    /// referenced to locator `reference` (slot) or to the shortest arrival —, calibrated on the
    /// unbiased layout with `moves` applied.
    static func runDifferences(_ layout: Layout, moves: [Int: Point2] = [:], seconds: Double, seed: UInt64, reference: Int? = nil,
                               fixes: Bool = false) throws -> SelfCalibration {
        let truth = layout.floor(biases: layout.biases(seed: seed))
        let recording = SimulatedDifferenceRecording.simulate(
            floor: truth, tagCount: 2, durationSeconds: seconds, seed: seed,
            differences: DifferenceSimulationConfiguration(mode: .uplink, reference: reference.map { truth.locators[$0].address }))
        let surveyed = layout.floor(moves: moves)
        var configuration = SelfCalibrationConfiguration.standard
        configuration.fixesPositions = fixes
        return try DifferenceSelfCalibration.estimate(floor: surveyed, data: DifferenceSelfCalibrationData(differences: recording.differences, floor: surveyed),
                                                      planar: true, configuration: configuration)
    }

    /// The error left after the fix, along the locator's checkable directions and whole, metres.
    static func miss(_ c: Case, _ result: SelfCalibration) -> (checkable: Double, whole: Double) {
        let fixed = result.applied(to: c.layout.floor(moves: [c.slot: c.move])).locators[c.slot].position
        let correct = c.layout.floor().locators[c.slot].position
        let e = Point2(x: fixed.x - correct.x, y: fixed.y - correct.y)
        return (seen(e, by: result.locators[c.slot].positionCheck), (e.x * e.x + e.y * e.y).squareRoot())
    }

    @Test("TDoA: the block test on a blink's arrivals — a 0.5 m error (the shortest arrival the reference) and a corner 0.3 m along one wall (itself every blink's reference) flagged alone, put back within 5 cm along the checkable directions; what is not checkable left as surveyed and said",
          arguments: [(Case(layout: .hall, slot: 1, move: Point2(x: 0, y: -0.5), kind: "mid-wall, radially outward 0.5 m"), nil),
                      (Case(layout: .lab, slot: 0, move: Point2(x: 0.3, y: 0), kind: "corner, along one wall 0.3 m, the reference"), 0)] as [(Case, Int?)])
    func differencesFlagAndFix(_ c: Case, _ reference: Int?) throws {
        let result = try Self.runDifferences(c.layout, moves: [c.slot: c.move], seconds: 120, seed: 21, reference: reference, fixes: true)
        let l = result.locators[c.slot]
        let check = try #require(l.positionCheck)
        print("survey check (TDoA), \(c): \(check.summary)")
        #expect(result.locators.map(\.isFlagged) == (0..<c.layout.count).map { $0 == c.slot },
                "\(c): \(result.locators.map { ($0.address, $0.isFlagged, $0.positionCheck?.summary ?? "") })")
        #expect(check.test?.flagged == true && check.test?.blocks == 20, "\(check.summary)")
        let miss = Self.miss(c, result)
        print("survey check (TDoA), \(c): left \(miss.checkable) m along the checkable directions, \(miss.whole) m whole")
        try Self.expectMovedAlongCheckableOnly(l, c, result)
    }

    /// A flagged locator's correction: nothing along a direction that is not checkable (that share
    /// reported left as surveyed), the error along the checkable ones within 5 cm.
    static func expectMovedAlongCheckableOnly(_ l: SelfCalibratedLocator, _ c: Case, _ result: SelfCalibration) throws {
        let check = try #require(l.positionCheck)
        let loose = zip(check.directions, check.sdMeters).filter { !($0.1 <= check.thresholdMeters) }
        #expect(check.remainder?.count == loose.count, "\(check)")
        let d = try #require(l.positionOffset)
        for (v, _) in loose { #expect(abs(v.x * d.x + v.y * d.y) < 0.005, "\(c): \(d) along \(v)") }
        if !loose.isEmpty { #expect(check.summary.contains("left as surveyed"), "\(check.summary)") }
        #expect(miss(c, result).checkable <= 0.05, "\(c): \(miss(c, result))")
    }

    @Test("TDoA: correct sites over 6 seeds per layout (2 tags, 60 s, the shortest arrival or locator 0 the reference): no locator flagged, the block test run on each")
    func differencesNoFalseFlags() throws {
        var flagged: [String] = []
        var tested = 0
        for layout in Layout.allCases {
            for seed in UInt64(1)...6 {
                let c = try Self.runDifferences(layout, seconds: 60, seed: seed, reference: seed % 2 == 0 ? 0 : nil)
                for l in c.locators {
                    if l.isFlagged { flagged.append("\(layout) seed \(seed) \(l.address): \(l.note ?? "")") }
                    if l.positionCheck?.test != nil { tested += 1 }
                }
            }
        }
        #expect(flagged.isEmpty, "\(flagged)")
        #expect(tested >= 55, "\(tested) of 84 locators tested")
    }

    @Test("TDoA, 4 locators on a plane: a blink's offset and position leave the other 3 arrivals nothing over, so every locator is not checkable (its redundancy said) and none flagged, though one is 0.5 m off")
    func differencesFourLocators() throws {
        let places: [(Double, Double)] = [(0, 0), (12, 0), (12, 9), (0, 9)]
        func floor(_ moved: Bool, _ biases: [Double]) -> Floor {
            Floor(id: "1F", widthMeters: 12, heightMeters: 9, tagHeightMeters: 1.1,
                  locators: places.enumerated().map { k, p in
                      Locator(address: LocatorAddress(UInt16(0x300 + k)),
                              position: Point3(x: p.0 + (moved && k == 1 ? 0.3 : 0), y: p.1 + (moved && k == 1 ? 0.4 : 0), z: 2.5),
                              biasMeters: biases[k])
                  })
        }
        let recording = SimulatedDifferenceRecording.simulate(floor: floor(false, [0.1, 0.2, 0.15, 0.05]), tagCount: 2, durationSeconds: 60,
                                                              seed: 24, differences: DifferenceSimulationConfiguration(mode: .uplink))
        let surveyed = floor(true, [0, 0, 0, 0])
        let c = try DifferenceSelfCalibration.estimate(floor: surveyed, data: DifferenceSelfCalibrationData(differences: recording.differences, floor: surveyed),
                                                       planar: true)
        for l in c.locators {
            #expect(!l.isFlagged, "\(l.address): \(l.note ?? "")")
            #expect(l.positionCheck?.checkable == false, "\(l.address): \(l.positionCheck?.summary ?? "")")
            if let check = l.positionCheck, l.isObservable {
                #expect(check.notCheckableReason?.contains("of its blinks (4 or more") == true, "\(l.address): \(check.summary)")
            }
        }
    }

    @Test("the F distribution's upper tail against tabulated critical values")
    func fisherTail() {
        // F(0.999; 2, 18) = 10.39, F(0.95; 1, 10) = 4.965, F(0.99; 3, 16) = 5.292.
        #expect(abs(FisherDistribution.upperTail(10.39, d1: 2, d2: 18) - 0.001) < 2e-5)
        #expect(abs(FisherDistribution.upperTail(4.965, d1: 1, d2: 10) - 0.05) < 2e-4)
        #expect(abs(FisherDistribution.upperTail(5.292, d1: 3, d2: 16) - 0.01) < 1e-4)
        #expect(FisherDistribution.upperTail(0, d1: 2, d2: 18) == 1)
    }

    /// LOCUS_SURVEY_FIGURES names a file: the sweep of docs/calibration.md ("Survey check with a
    /// stated confidence") — every case × 10 seeds × 120/300 s, and 100 correct seeds per layout at
    /// 300 s — one JSON object per line.
    static let figuresPath = ProcessInfo.processInfo.environment["LOCUS_SURVEY_FIGURES"]

    @Test("Writes the survey check's detection and false-alarm figures (LOCUS_SURVEY_FIGURES=FILE)",
          .enabled(if: figuresPath != nil, "LOCUS_SURVEY_FIGURES is not set"))
    func figures() throws {
        var lines: [String] = []
        for c in Self.cases {
            for seconds in [120.0, 300.0] {
                var hits = 0, alone = 0, within = 0, runs = 0, misses: [Double] = []
                for seed in UInt64(31)...40 {
                    let r = try Self.run(c.layout, moves: [c.slot: c.move], seconds: seconds, seed: seed, fixes: true)
                    runs += 1
                    if r.locators[c.slot].isFlagged { hits += 1 }
                    if r.locators.map(\.isFlagged) == (0..<c.layout.count).map({ $0 == c.slot }) { alone += 1 }
                    let fixed = r.applied(to: c.layout.floor(moves: [c.slot: c.move])).locators[c.slot].position
                    let correct = c.layout.floor().locators[c.slot].position
                    let miss = ((fixed.x - correct.x) * (fixed.x - correct.x) + (fixed.y - correct.y) * (fixed.y - correct.y)).squareRoot()
                    misses.append(miss)
                    if miss <= 0.05 { within += 1 }
                }
                lines.append("{\"case\": \"\(c)\", \"seconds\": \(seconds), \"runs\": \(runs), \"flagged\": \(hits), \"alone\": \(alone), "
                             + "\"within_5cm\": \(within), \"worst_miss_m\": \(misses.max() ?? -1)}")
            }
        }
        for layout in Layout.allCases {
            var sites = 0, falseLocators = 0, checked = 0
            for seed in UInt64(101)...200 {
                let r = try Self.run(layout, seconds: 300, seed: seed)
                if r.locators.contains(where: \.isFlagged) { sites += 1 }
                falseLocators += r.locators.filter(\.isFlagged).count
                checked += r.locators.filter { $0.positionCheck?.test != nil }.count
            }
            lines.append("{\"layout\": \"\(layout)\", \"correct_seeds\": 100, \"seconds\": 300, \"sites_flagged\": \(sites), "
                         + "\"locators_flagged\": \(falseLocators), \"locators_tested\": \(checked)}")
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: Self.figuresPath!, atomically: true, encoding: .utf8)
    }
}

