import LocusCore
import LocusNumerics
@testable import LocusSimulation
import Testing

/// `SimulatedDifferenceRecording` (`locus simulate --tdoa`): rows as SPEC §2 defines them, the
/// noise-free difference is the model's prediction bit for bit, errors act per arrival, and one seed
/// gives one recording.
@Suite("TDoA simulation: uplink and downlink differences")
struct DifferenceSimulationTests {
    /// The 20 × 12 m floor of the track tests (8 locators at 2.5 m, no biases).
    static let floor = TrackFixture.floor()

    static func simulate(_ mode: DifferenceSimulationMode, seed: UInt64 = 5, duration: Double = 30, sigma: Double = 0.1,
                         nlos: Double = 0, dropout: Double = 0, reference: LocatorAddress? = nil, clock: Double = 0,
                         tags: Int = 1) -> SimulatedDifferenceRecording {
        SimulatedDifferenceRecording.simulate(
            floor: floor, tagCount: tags, durationSeconds: duration, seed: seed,
            ranging: RangeSimulationConfiguration(sigmaMeters: sigma, nlosProbability: nlos, dropoutProbability: dropout),
            differences: DifferenceSimulationConfiguration(mode: mode, reference: reference, clockNoiseSeconds: clock))
    }

    static func position(_ address: LocatorAddress) -> Point3 {
        floor.locators.first { $0.address == address }!.position
    }

    /// The prediction ρ_B − ρ_A of `DifferenceModel` for a row, with the tag where its walk was at t.
    static func predicted(_ row: RangeDifference, seed: UInt64, duration: Double) -> Double {
        let j = Int(row.tag.rawValue.dropFirst())! - 1
        let (_, walk) = SimulatedRecording.walkOfTag(j, floor: floor, durationSeconds: duration, seed: seed, walk: .standard)
        let p = walk.position(atSeconds: row.timeSeconds)
        return DifferenceModel.predicted(at: Point3(x: p.x, y: p.y, z: floor.tagHeightMeters),
                                         reference: position(row.reference), locator: position(row.locator))
    }

    @Test("noise-free, every difference is exactly ρ_B − ρ_A (DifferenceModel.predicted), uplink and downlink",
          arguments: [DifferenceSimulationMode.uplink, .downlink])
    func noiseFreeIsThePrediction(_ mode: DifferenceSimulationMode) {
        let recording = Self.simulate(mode, seed: 3, duration: 10, sigma: 0, tags: 2)
        #expect(recording.differences.count > 100)
        for row in recording.differences {
            #expect(row.differenceMeters == Self.predicted(row, seed: 3, duration: 10), "\(row)")
        }
    }

    @Test("uplink: one row per locator B ≠ A per blink, all at the blink's time, A the shortest arrival")
    func uplinkRows() {
        let recording = Self.simulate(.uplink, duration: 20, sigma: 0)
        let blinks = Dictionary(grouping: recording.differences) { $0.timeSeconds }
        #expect(blinks.count == 80)   // 20 s at 4 Hz
        #expect(recording.counts.events == 80 && recording.counts.silentEvents == 0)
        for (_, rows) in blinks {
            #expect(rows.count == Self.floor.locators.count - 1)
            #expect(Set(rows.map(\.reference)).count == 1)
            #expect(Set(rows.map(\.locator)).count == rows.count)
            for row in rows {
                #expect(row.reference != row.locator)
                // Noise-free, the shortest arrival is the nearest locator: every other one is farther.
                #expect(row.differenceMeters >= 0)
                #expect(row.floor == Self.floor.id)
            }
        }
        // Rows sorted by time; a blink's rows in the floor's locator order.
        #expect(recording.differences.map(\.timeSeconds) == recording.differences.map(\.timeSeconds).sorted())
    }

    @Test("|tdoa_m| stays within the pair's baseline plus the noise and NLOS margin")
    func withinBaseline() {
        for mode in DifferenceSimulationMode.allCases {
            let recording = Self.simulate(mode, duration: 60, sigma: 0.1, nlos: 0.1, dropout: 0.1)
            for row in recording.differences {
                let baseline = Self.position(row.reference).distance(to: Self.position(row.locator))
                // σ√2 per difference (6σ), one NLOS excess up to 2.5 m.
                #expect(abs(row.differenceMeters) <= baseline + 2.5 + 6 * 0.1 * 2.0.squareRoot(), "\(row)")
                #expect(row.reference != row.locator)
            }
        }
    }

    @Test("the same seed gives the same rows and truth; another seed other rows; the truth is the range simulation's")
    func deterministic() {
        for mode in DifferenceSimulationMode.allCases {
            let a = Self.simulate(mode, seed: 9, nlos: 0.1, dropout: 0.1, tags: 2)
            let b = Self.simulate(mode, seed: 9, nlos: 0.1, dropout: 0.1, tags: 2)
            let c = Self.simulate(mode, seed: 10, nlos: 0.1, dropout: 0.1, tags: 2)
            #expect(a.differences == b.differences && a.truth == b.truth && a.counts == b.counts)
            #expect(a.differences != c.differences)
            let ranges = SimulatedRecording.simulate(floor: Self.floor, tagCount: 2, durationSeconds: 30, seed: 9)
            #expect(a.truth == ranges.truth)
        }
    }

    @Test("uplink dropouts and NLOS hit about the requested share of arrivals")
    func uplinkDropoutAndNLOS() {
        let recording = Self.simulate(.uplink, duration: 120, nlos: 0.1, dropout: 0.2)
        let c = recording.counts
        let arrivals = Double(c.events * Self.floor.locators.count)
        let dropShare = Double(c.droppedArrivals) / arrivals
        #expect(abs(dropShare - 0.2) < 0.03, "dropped \(dropShare)")
        let heard = arrivals - Double(c.droppedArrivals)
        let nlosShare = Double(c.nlosArrivals) / heard
        #expect(abs(nlosShare - 0.1) < 0.03, "NLOS \(nlosShare)")
        // Each blink gives heard − 1 rows (a blink heard by fewer than 2 is ~1e-4 likely here: none).
        #expect(c.silentEvents == 0)
        #expect(recording.differences.count == Int(heard) - c.events)
    }

    @Test("a fixed reference is A in every blink that heard it; the others stand in and are counted")
    func fixedReference() {
        let fixed = Self.floor.locators[2].address
        let recording = Self.simulate(.uplink, duration: 120, dropout: 0.25, reference: fixed)
        let blinks = Dictionary(grouping: recording.differences) { $0.timeSeconds }
        let standIns = blinks.values.filter { $0[0].reference != fixed }.count
        #expect(standIns == recording.counts.referenceStandIns)
        let share = Double(standIns) / Double(blinks.count)
        #expect(abs(share - 0.25) < 0.05, "stand-ins \(share)")
        // A stand-in blink does not list the fixed reference at all (it was not heard).
        for rows in blinks.values where rows[0].reference != fixed {
            #expect(!rows.contains { $0.locator == fixed })
        }
    }

    @Test("downlink: rate × (n − 1) pairs per second, each at its own time, every pair drawn")
    func downlinkRows() {
        let recording = Self.simulate(.downlink, duration: 30, sigma: 0.1)
        let n = Self.floor.locators.count
        #expect(recording.differences.count == 30 * 4 * (n - 1))
        let times = recording.differences.map(\.timeSeconds)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        let step = 1 / (4.0 * Double(n - 1))
        #expect(abs(times[1] - times[0] - step) < 1e-12)
        let pairs = Set(recording.differences.map { "\($0.reference)-\($0.locator)" })
        #expect(pairs.count == n * (n - 1))   // every ordered pair appears in 840 draws
        for row in recording.differences { #expect(row.reference != row.locator) }
    }

    @Test("downlink dropouts lose packets and, with few heard, rows")
    func downlinkDropout() {
        let recording = Self.simulate(.downlink, duration: 60, dropout: 0.5)
        let c = recording.counts
        let share = Double(c.droppedArrivals) / Double(c.events * Self.floor.locators.count)
        #expect(abs(share - 0.5) < 0.03, "dropped \(share)")
        // P(fewer than 2 of 8 heard) = 9/256 ≈ 3.5 %.
        let silent = Double(c.silentEvents) / Double(c.events)
        #expect(silent > 0.015 && silent < 0.06, "silent \(silent)")
        #expect(recording.differences.count == c.events - c.silentEvents)
    }

    @Test("clock noise σ_clock adds c·σ_clock per arrival: a difference's error has σ ≈ √2 · c · σ_clock")
    func clockNoise() {
        let seconds = 1e-9
        for mode in DifferenceSimulationMode.allCases {
            let recording = Self.simulate(mode, seed: 4, duration: 60, sigma: 0, clock: seconds)
            let errors = recording.differences.map { $0.differenceMeters - Self.predicted($0, seed: 4, duration: 60) }
            let rms = (errors.reduce(0) { $0 + $1 * $1 } / Double(errors.count)).squareRoot()
            let expected = 2.0.squareRoot() * DifferenceSimulationConfiguration.speedOfLight * seconds   // 0.424 m
            #expect(abs(rms / expected - 1) < 0.08, "\(mode): rms \(rms) vs \(expected)")
        }
    }
}
