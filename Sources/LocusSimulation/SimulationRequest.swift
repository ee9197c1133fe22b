import LocusCore

/// `locus simulate`'s scenario from its options, in one place: tags T1…TN walking through the
/// floor's zone centroids (or between random points, or flying between two heights), ranged in
/// rounds — or, with a difference mode, heard as range differences — and their truth. The command
/// parses and checks the options, builds one of these, `run`s it, and writes and summarises what
/// comes back (`SimulationOutput`).
package struct SimulationRequest {
    private let floor: Floor
    private let tagCount: Int
    private let durationSeconds: Double
    private let seed: UInt64
    private var walk = WalkConfiguration.standard
    private var ranging = RangeSimulationConfiguration.standard
    private let truthRateHertz: Double
    private var differences: DifferenceSimulationConfiguration?

    /// A scenario on `floor` (which has locators): `tagCount` tags for `durationSeconds` from `seed`;
    /// each tag ranges every locator `rateHertz` times a second, `slotSeconds` apart, with Gaussian
    /// noise `sigmaMeters`, NLOS with `nlosProbability` (read long by U(`nlosExcessMeters`)), lost
    /// with `dropoutProbability`, unheard beyond `maximumRangeMeters`; truth `truthRateHertz` times
    /// a second. `randomWalk`: between random points instead of the zones' centroids. `altitude`:
    /// the height climbs and descends between `lowMeters` and `highMeters` every `periodSeconds`
    /// (not with `differences`). `differences`: range differences instead of ranges — uplink
    /// (every locator hears each blink; `reference` fixed, nil: each blink's shortest arrival) or
    /// downlink (random pairs), each arrival off by a clock error σ `clockNoiseSeconds`.
    package init(floor: Floor, tagCount: Int, durationSeconds: Double, seed: UInt64,
                 rateHertz: Double, slotSeconds: Double, sigmaMeters: Double, nlosProbability: Double,
                 nlosExcessMeters: ClosedRange<Double>, dropoutProbability: Double, maximumRangeMeters: Double,
                 truthRateHertz: Double, randomWalk: Bool,
                 altitude: (lowMeters: Double, highMeters: Double, periodSeconds: Double)?,
                 differences: (uplink: Bool, reference: LocatorAddress?, clockNoiseSeconds: Double)?) {
        self.floor = floor
        self.tagCount = tagCount
        self.durationSeconds = durationSeconds
        self.seed = seed
        self.truthRateHertz = truthRateHertz
        ranging.roundRateHertz = rateHertz
        ranging.slotSeconds = slotSeconds
        ranging.sigmaMeters = sigmaMeters
        ranging.nlosProbability = nlosProbability
        ranging.nlosBiasMeters = nlosExcessMeters
        ranging.dropoutProbability = dropoutProbability
        ranging.maximumRangeMeters = maximumRangeMeters
        if !randomWalk {
            walk.waypoints = floor.zones.map { PolygonValidation.centroid($0.polygon) }
        }
        if let altitude {
            walk.vertical = VerticalProfile(lowMeters: altitude.lowMeters, highMeters: altitude.highMeters,
                                            periodSeconds: altitude.periodSeconds)
        }
        if let differences {
            var configuration = DifferenceSimulationConfiguration(mode: differences.uplink ? .uplink : .downlink)
            configuration.clockNoiseSeconds = differences.clockNoiseSeconds
            configuration.reference = differences.reference
            self.differences = configuration
        }
    }

    /// The trace and its truth (the same seed and request give the same rows).
    package func run() -> SimulationOutput {
        if let differences {
            let recording = SimulatedDifferenceRecording.simulate(floor: floor, tagCount: tagCount, durationSeconds: durationSeconds,
                                                                  seed: seed, walk: walk, ranging: ranging,
                                                                  differences: differences, truthRateHertz: truthRateHertz)
            return SimulationOutput(ranges: [], differences: recording.differences, truth: recording.truth, counts: recording.counts)
        }
        let recording = SimulatedRecording.simulate(floor: floor, tagCount: tagCount, durationSeconds: durationSeconds,
                                                    seed: seed, walk: walk, ranging: ranging,
                                                    truthRateHertz: truthRateHertz)
        return SimulationOutput(ranges: recording.ranges, differences: [], truth: recording.truth, counts: DifferenceSimulationCounts())
    }
}
