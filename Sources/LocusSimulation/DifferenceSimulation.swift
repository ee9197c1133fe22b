import LocusCore

/// How a simulated TDoA system forms its range differences (SPEC §2 difference rows).
enum DifferenceSimulationMode: String, Sendable, Hashable, CaseIterable {
    /// The tag blinks; every locator in reach timestamps the blink on its synchronised clock, and the
    /// infrastructure differences each arrival against one reference arrival: one row per locator
    /// B ≠ A per blink, all with the blink's time.
    case uplink
    /// TDoA3-style: the locators transmit, the tag timestamps their packets and reports pairs (A, B)
    /// of recently heard locators, one row per pair, each at its own time, with independent noise.
    case downlink
}

/// Parameters of the simulated differences on top of `RangeSimulationConfiguration` (whose σ, NLOS,
/// dropout, rate, slot and reach mean the same per arrival here).
///
/// An arrival at locator i of a signal from (uplink) or to (downlink) the tag at p is the range
/// model's measurement expressed in metres,
///   mᵢ = ρᵢ + eᵢ,  ρᵢ = ‖p − aᵢ‖,  eᵢ = sᵢ·ρᵢ + bᵢ + σ·nᵢ + Bᵢ + c·δᵢ,
/// with the locator's scale error sᵢ and bias bᵢ (`biasSlope`, `biasM`), n ~ N(0, 1), the NLOS
/// excess Bᵢ (0, or U(b_min, b_max) with probability p_NLOS: always late), and its clock's
/// synchronisation error δᵢ ~ N(0, σ_clock²) seconds, drawn afresh for each arrival (c = 299 792 458
/// m/s; a constant offset per locator is a bias, and belongs in the site's `biasM`). A difference is
///   z = m_B − m_A = (ρ_B + e_B) − (ρ_A + e_A)  (m),
/// so with every error off it is exactly ρ_B − ρ_A, the prediction of `DifferenceModel`.
struct DifferenceSimulationConfiguration: Sendable, Hashable {
    /// Uplink or downlink.
    var mode: DifferenceSimulationMode
    /// Uplink: the fixed reference locator A; nil picks each blink's shortest measured arrival
    /// (the strongest signal). A blink that misses the fixed reference is referenced to its shortest
    /// heard arrival instead, and counted (`DifferenceSimulationCounts.referenceStandIns`).
    var reference: LocatorAddress?
    /// σ_clock: the standard deviation of each locator's synchronisation error, seconds
    /// (c·σ_clock metres per arrival; 1 ns ≈ 0.30 m).
    var clockNoiseSeconds: Double

    /// The speed of light c, m/s: turns clock errors (s) into metres.
    static let speedOfLight = 299_792_458.0

    /// A configuration; by default uplink, shortest-arrival reference, perfect synchronisation.
    init(mode: DifferenceSimulationMode = .uplink, reference: LocatorAddress? = nil, clockNoiseSeconds: Double = 0) {
        self.mode = mode
        self.reference = reference
        self.clockNoiseSeconds = clockNoiseSeconds
    }
}

/// What happened to the simulated signals, for the summary (every count over all tags). The counts
/// are read through `summary(uplink:reference:)`, the one rendering of them.
package struct DifferenceSimulationCounts: Sendable, Hashable {
    /// Uplink: blinks sent; downlink: pair reports attempted (rate · (n − 1) per second per tag).
    var events = 0
    /// Events that gave no row: fewer than 2 locators heard.
    var silentEvents = 0
    /// Arrivals within reach lost to dropout (uplink: blink arrivals at a locator; downlink: locator
    /// packets the tag missed at a report).
    var droppedArrivals = 0
    /// Arrivals used in a row that carried an NLOS excess (each counted once per row set: uplink per
    /// blink, downlink per pair).
    var nlosArrivals = 0
    /// Uplink with a fixed reference: blinks whose reference arrival was lost, referenced to the
    /// shortest heard arrival instead.
    var referenceStandIns = 0

    /// The counts as `locus simulate --tdoa` reports them (`uplink`: blinks, else reports; `reference`:
    /// the fixed uplink reference, nil for the shortest arrival or downlink):
    /// - `members`: the `--json` object's `blinks`/`reports`, `silent_blinks`/`silent_reports`,
    ///   `dropped_arrivals`, `nlos_arrivals`, `reference_stand_ins` (null for downlink), in that order;
    /// - `events`: "N blinks[, k heard by fewer than 2 locators]" for the text summary's first line;
    /// - `lines`: the text summary's indented lines (dropped and NLOS arrivals, reference stand-ins),
    ///   each ending in a newline, or "";
    /// - `note`: with a fixed reference that missed blinks, the note `--json` prints on stderr.
    package func summary(uplink: Bool, reference: LocatorAddress?)
        -> (members: [(String, JSONValue)], events: String, lines: String, note: String?) {
        let name = uplink ? "blink" : "report"
        let members: [(String, JSONValue)] = [
            ("\(name)s", .integer(events)), ("silent_\(name)s", .integer(silentEvents)),
            ("dropped_arrivals", .integer(droppedArrivals)), ("nlos_arrivals", .integer(nlosArrivals)),
            ("reference_stand_ins", uplink ? .integer(referenceStandIns) : .null),
        ]
        var head = plural(events, name)
        if silentEvents > 0 { head += ", \(silentEvents) heard by fewer than 2 locators" }
        var lines = ""
        if droppedArrivals > 0 || nlosArrivals > 0 {
            lines += "  arrivals: \(droppedArrivals) dropped, \(nlosArrivals) NLOS\n"
        }
        var note: String?
        if referenceStandIns > 0, let reference {
            lines += "  reference \(reference) missed in \(plural(referenceStandIns, "blink")): the shortest heard arrival stood in\n"
            note = "simulate: note: the reference \(reference) missed \(plural(referenceStandIns, "blink")) "
                + "(dropout or reach); each was referenced to its shortest heard arrival instead\n"
        }
        return (members, head, lines, note)
    }
}

/// A simulated TDoA recording: differences sorted by time and the truth behind them (the same truth
/// and walks as `SimulatedRecording.simulate` gives for the same seed and walk).
struct SimulatedDifferenceRecording: Sendable {
    /// Every difference of every tag, sorted by (time, tag), a blink's rows together in the floor's
    /// locator order (B), downlink rows one per time.
    var differences: [RangeDifference]
    /// Truth samples at the requested rate, sorted by (time, tag).
    var truth: [TruthSample]
    /// What the signals went through.
    var counts: DifferenceSimulationCounts

    /// Simulates `tagCount` walkers (`T1`…) on `floor` for `durationSeconds` from time 0, measured
    /// by differences.
    ///
    /// **Uplink.** Tag j blinks at t = k/f + j·n·τ (f = `ranging.roundRateHertz`, τ = `slotSeconds`,
    /// n locators: the ranging rounds' start times). Each locator i within `maximumRangeMeters` hears
    /// the blink unless dropped (p_drop); with at least 2 heard, the reference A is the fixed one (if
    /// heard) or the heard locator with the smallest mᵢ, and each other heard B gives a row
    /// z = m_B − m_A at t (rows in the floor's locator order).
    ///
    /// **Downlink.** Tag j reports pairs at t = j·n·τ + k/(f·(n − 1)), k = 0, 1, …, while t < duration:
    /// f·(n − 1) pairs per second, the number of independent differences one uplink blink gives per
    /// round. At each report the tag has recently heard every locator in reach but those dropped
    /// (p_drop each); A is drawn uniformly from them and B uniformly from the rest, with fresh
    /// arrival errors for both (pairs are independent), z = m_B − m_A at t.
    ///
    /// Deterministic for a seed: walks come from the walk generator (as for ranges), errors from a
    /// third generator per tag, and every event draws the same variates whatever the options, so one
    /// option does not reshuffle the others. Complexity O(tags · duration · f · n) plus the sort.
    /// - Precondition: `tagCount ≥ 1`, `durationSeconds > 0`, positive rates, at least 2 locators,
    ///   and a fixed reference, when given, on the floor.
    static func simulate(floor: Floor, tagCount: Int = 1, durationSeconds: Double, seed: UInt64,
                                 walk: WalkConfiguration = .standard, ranging: RangeSimulationConfiguration = .standard,
                                 differences configuration: DifferenceSimulationConfiguration,
                                 truthRateHertz: Double = 10) -> SimulatedDifferenceRecording {
        precondition(tagCount >= 1 && durationSeconds > 0 && ranging.roundRateHertz > 0 && truthRateHertz > 0,
                     "SimulatedDifferenceRecording: counts, durations and rates must be positive")
        let n = floor.locators.count
        precondition(n >= 2, "SimulatedDifferenceRecording: differences need at least 2 locators")
        let fixed = configuration.reference.map { address in floor.locators.firstIndex { $0.address == address } }
        precondition(fixed.map { $0 != nil } ?? true, "SimulatedDifferenceRecording: the fixed reference is not on the floor")
        let h = floor.tagHeightMeters
        var rows: [(row: RangeDifference, tag: Int, sequence: Int)] = []
        var truth: [TruthSample] = []
        var counts = DifferenceSimulationCounts()
        var arrivals = [Arrival](repeating: Arrival(), count: n)
        let clockMeters = configuration.clockNoiseSeconds * DifferenceSimulationConfiguration.speedOfLight
        for j in 0..<tagCount {
            let (tag, trajectory) = SimulatedRecording.walkOfTag(j, floor: floor, durationSeconds: durationSeconds, seed: seed, walk: walk)
            var rng = SeededGenerator(seed: (seed &+ 0x2545_F491_4F6C_DD1D) ^ (UInt64(j + 1) &* 0xBF58_476D_1CE4_E5B9))
            var sequence = 0
            func emit(_ t: Double, _ a: Int, _ b: Int) {
                let z = (arrivals[b].rho + arrivals[b].error) - (arrivals[a].rho + arrivals[a].error)
                rows.append((RangeDifference(timeSeconds: t, tag: tag, reference: floor.locators[a].address,
                                             locator: floor.locators[b].address, differenceMeters: z, floor: floor.id), j, sequence))
                sequence += 1
            }
            switch configuration.mode {
            case .uplink:
                let blinks = Int(durationSeconds * ranging.roundRateHertz)
                for k in 0..<blinks {
                    let t = Double(k) / ranging.roundRateHertz + Double(j * n) * ranging.slotSeconds
                    let p = trajectory.position(atSeconds: t)
                    let at = Point3(x: p.x, y: p.y, z: h)
                    counts.events += 1
                    var heard = 0, reference = -1, nlos = 0
                    for i in 0..<n {
                        arrivals[i].draw(from: floor.locators[i], at: at, ranging: ranging, clockMeters: clockMeters, using: &rng)
                        if arrivals[i].lost { counts.droppedArrivals += arrivals[i].inReach ? 1 : 0; continue }
                        heard += 1
                        if arrivals[i].nlos { nlos += 1 }
                        if reference < 0 || arrivals[i].measured < arrivals[reference].measured { reference = i }
                    }
                    guard heard >= 2 else { counts.silentEvents += 1; continue }
                    counts.nlosArrivals += nlos
                    if let f = fixed ?? nil {
                        if arrivals[f].lost { counts.referenceStandIns += 1 } else { reference = f }
                    }
                    for i in 0..<n where i != reference && !arrivals[i].lost { emit(t, reference, i) }
                }
            case .downlink:
                let rate = ranging.roundRateHertz * Double(n - 1)
                let start = Double(j * n) * ranging.slotSeconds
                let reports = max(0, Int(((durationSeconds - start) * rate).rounded(.up)))
                var heardList = [Int]()
                heardList.reserveCapacity(n)
                for k in 0..<reports {
                    let t = start + Double(k) / rate
                    guard t < durationSeconds else { break }
                    let p = trajectory.position(atSeconds: t)
                    let at = Point3(x: p.x, y: p.y, z: h)
                    counts.events += 1
                    heardList.removeAll(keepingCapacity: true)
                    for i in 0..<n {
                        let inReach = at.distance(to: floor.locators[i].position) <= ranging.maximumRangeMeters
                        let dropped = rng.nextUnit() < ranging.dropoutProbability
                        if inReach && dropped { counts.droppedArrivals += 1 }
                        if inReach && !dropped { heardList.append(i) }
                    }
                    let pickA = rng.nextUnit(), pickB = rng.nextUnit()
                    // Both arrivals' errors are drawn whether or not the pair is formed (stable streams).
                    var pair = (Arrival(), Arrival())
                    let a = heardList.isEmpty ? 0 : heardList[min(heardList.count - 1, Int(pickA * Double(heardList.count)))]
                    var b = 0
                    if heardList.count >= 2 {
                        let rest = heardList.filter { $0 != a }
                        b = rest[min(rest.count - 1, Int(pickB * Double(rest.count)))]
                    }
                    pair.0.draw(from: floor.locators[a], at: at, ranging: ranging, clockMeters: clockMeters, dropout: false, using: &rng)
                    pair.1.draw(from: floor.locators[b], at: at, ranging: ranging, clockMeters: clockMeters, dropout: false, using: &rng)
                    guard heardList.count >= 2 else { counts.silentEvents += 1; continue }
                    arrivals[a] = pair.0
                    arrivals[b] = pair.1
                    counts.nlosArrivals += (pair.0.nlos ? 1 : 0) + (pair.1.nlos ? 1 : 0)
                    emit(t, a, b)
                }
            }
            SimulatedRecording.appendTruth(of: tag, trajectory, height: h, durationSeconds: durationSeconds,
                                           rateHertz: truthRateHertz, to: &truth)
        }
        rows.sort { x, y in
            if x.row.timeSeconds != y.row.timeSeconds { return x.row.timeSeconds < y.row.timeSeconds }
            if x.row.tag != y.row.tag { return x.row.tag < y.row.tag }
            return x.sequence < y.sequence
        }
        SimulatedRecording.sortTruth(&truth)
        return SimulatedDifferenceRecording(differences: rows.map(\.row), truth: truth, counts: counts)
    }
}

/// One simulated arrival at a locator: the true range ρ and the error e of mᵢ = ρ + e (metres).
struct Arrival {
    /// ρ = ‖p − a‖, metres.
    var rho = 0.0
    /// e = s·ρ + b + σ·n + B + c·δ, metres.
    var error = 0.0
    /// Whether B > 0 (NLOS).
    var nlos = false
    /// Within `maximumRangeMeters`.
    var inReach = true
    /// Not heard: out of reach or dropped.
    var lost = false

    /// m = ρ + e, the arrival as the infrastructure measures it, metres.
    var measured: Double { rho + error }

    /// Draws the arrival at `locator` of the tag at `p`: always five variates in a fixed order
    /// (n, NLOS?, B, dropped?, δ) so that the options never shift the stream.
    mutating func draw(from locator: Locator, at p: Point3, ranging: RangeSimulationConfiguration, clockMeters: Double,
                       dropout: Bool = true, using rng: inout SeededGenerator) {
        rho = p.distance(to: locator.position)
        let noise = rng.nextGaussian()
        nlos = rng.nextUnit() < ranging.nlosProbability
        let excess = rng.uniform(ranging.nlosBiasMeters.lowerBound, ranging.nlosBiasMeters.upperBound)
        let dropped = rng.nextUnit() < ranging.dropoutProbability
        let clock = rng.nextGaussian()
        inReach = rho <= ranging.maximumRangeMeters
        lost = !inReach || (dropout && dropped)
        error = locator.biasSlope * rho + locator.biasMeters + ranging.sigmaMeters * noise + (nlos ? excess : 0) + clockMeters * clock
    }
}
