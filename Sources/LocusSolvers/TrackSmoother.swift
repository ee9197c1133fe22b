import LocusCore
import LocusNumerics

/// Offline smoothing of a whole recording of one tag: a forward constant-velocity Kalman pass and a
/// backward Rauch–Tung–Striebel pass, or (for fixes) the equivalent single banded least-squares solve.
///
/// Both forms minimise, per segment between re-initialisations,
///   J = (x₀ − x̄₀)ᵀP₀⁻¹(x₀ − x̄₀) + Σₖ (xₖ₊₁ − Fₖxₖ)ᵀQₖ⁻¹(xₖ₊₁ − Fₖxₖ) + Σₖ (zₖ − Hxₖ)ᵀRₖ⁻¹(zₖ − Hxₖ),
/// with Fₖ, Qₖ the constant-velocity model over Δtₖ. The process noise density qₖ of each step is
/// adapted from smoothed IMM mode probabilities — the forward IMM's combined with those of the same
/// IMM run backwards in time, averaged over ±`smootherModeWindowSeconds` (see
/// `TrackSmoother+ModeProbabilities.swift` and `processNoise(for:)`) —, and the causal filter's gate
/// decides which measurements enter; so the smoother sees exactly the data the live track accepted. Two
/// causal filters run side by side for that: one with the live configuration, whose decisions (accepted,
/// refused, started) make the nodes, and one with the smoother's faster mode switching
/// (`smootherModeSwitchesPerSecond`), whose model probabilities set qₖ. (One filter at the faster rate
/// for both let the smoother's pass refuse and accept other ranges than the live track: in a 4-locator room
/// with dropouts it held a track metres off for 5 s where the live one re-acquired; docs/tracking.md.)
package enum TrackSmoother {
    /// One node of the smoothing problem (internal, exposed for tests and benchmarks).
    package struct Node: Sendable {
        /// What, if anything, is measured at a node.
        enum Measurement: Sendable {
            /// No measurement (an output time, a gated or buffered measurement).
            case none
            /// A fix z = (x, y), metres, with covariance R = [[rxx, rxy], [rxy, ryy]], m².
            case position(x: Double, y: Double, rxx: Double, rxy: Double, ryy: Double)
            /// A range to a locator at `anchor`, bias removed, metres.
            case range(anchor: Point3, rangeMeters: Double)
            /// One group of range differences sharing an arrival at the locator at `reference` (the ones
            /// the causal filter applied): dⱼ = d(tag, `locators[j]`) − d(tag, reference), biases
            /// removed, metres. Applied whole: whitened (noise σ²(I + 11ᵀ) → σ²I) and taken as the exact
            /// vector EKF update (`KalmanKernels.updateDifferences`, ungated).
            case differences(reference: Point3, locators: [Point3], differencesMeters: [Double])
        }
        /// Time, seconds.
        var timeSeconds: Double
        /// The measurement, if accepted by the causal filter.
        var measurement: Measurement
        /// Set when a segment starts here: the prior (x̄₀, P₀) before this node's measurement.
        var prior: KalmanState?
        /// qₖ for the step arriving at this node, m²/s³.
        var processNoiseDensity: Double
        /// True when the node is reported as a fix.
        var isOutput: Bool

        /// A node.
        init(timeSeconds: Double, measurement: Measurement, prior: KalmanState?, processNoiseDensity: Double,
                     isOutput: Bool) {
            self.timeSeconds = timeSeconds
            self.measurement = measurement
            self.prior = prior
            self.processNoiseDensity = processNoiseDensity
            self.isOutput = isOutput
        }
    }

    /// The smoother's qₖ from (smoothed, windowed) IMM model probabilities μ (still, steady, manoeuvring,
    /// agile): q = s·(μ_still·q_low/10 + μ_steady·q_low + μ_manoeuvring·q_high + μ_agile·q_agile) with s
    /// the configuration's `smootherProcessNoiseScale`; the single-model configuration uses its q. m²/s³.
    static func processNoise(for modeProbabilities: SIMD4<Double>, configuration c: TrackFilterConfiguration) -> Double {
        guard c.usesInteractingModels else { return c.processNoiseDensity }
        return c.smootherProcessNoiseScale * (modeProbabilities[0] * c.lowProcessNoiseDensity * 0.1 + modeProbabilities[1] * c.lowProcessNoiseDensity
            + modeProbabilities[2] * c.highProcessNoiseDensity + modeProbabilities[3] * c.agileProcessNoiseDensity)
    }

    // MARK: problem set-up from the causal filter

    /// The configuration of the smoother's model-probability filters, forward and backward (its own mode
    /// switching rate); the gate decisions come from a filter with the live configuration.
    static func forwardConfiguration(_ c: TrackFilterConfiguration) -> TrackFilterConfiguration {
        var f = c
        f.modeSwitchesPerSecond = c.smootherModeSwitchesPerSecond
        return f
    }

    /// The forward model probabilities for qₖ: the model-probability filter's (`modes`, at the smoother's
    /// switching rate), or the deciding filter's while `modes` holds no track (inout: reading μ settles
    /// the pending likelihoods).
    static func forwardModeProbabilities(_ modes: inout TrackFilter, else filter: inout TrackFilter) -> SIMD4<Double> {
        modes.isTracking ? modes.modeProbabilities : filter.modeProbabilities
    }

    /// Builds the nodes for a list of fixes (one tag, non-decreasing time) by running the causal filter.
    /// Complexity O(n).
    package static func nodes(fixes: [PositionFix], configuration: TrackFilterConfiguration) -> [Node] {
        guard let first = fixes.first else { return [] }
        // The live filter's decisions; the model probabilities from the smoother's own switching rate.
        var filter = TrackFilter(configuration: configuration, tag: first.tag, floor: first.floor, tagHeightMeters: first.position.z)
        var modes = TrackFilter(configuration: forwardConfiguration(configuration), tag: first.tag, floor: first.floor,
                                tagHeightMeters: first.position.z)
        var out: [Node] = []
        out.reserveCapacity(fixes.count)
        var mus: [SIMD4<Double>] = []
        mus.reserveCapacity(fixes.count)
        let backward = backwardModeProbabilities(fixes: fixes, configuration: configuration)
        for (index, f) in fixes.enumerated() {
            let before = filter.initializationCount
            let outcome = filter.update(fix: f)
            modes.update(fix: f)
            let c = f.covariance
            var node = Node(timeSeconds: f.timeSeconds, measurement: .none, prior: nil, processNoiseDensity: 0, isOutput: true)
            switch outcome {
            case .accepted, .initialized:
                node.measurement = .position(x: f.position.x, y: f.position.y, rxx: c.xx, rxy: c.xy, ryy: c.yy)
            default:
                break
            }
            if filter.initializationCount != before, outcome == .initialized {
                node.prior = KalmanState(px: f.position.x, py: f.position.y,
                                         positionSigmaMeters: configuration.initialPositionSigmaMeters,
                                         velocitySigmaMetersPerSecond: configuration.initialVelocitySigmaMetersPerSecond)
            }
            if !filter.isTracking { continue }
            mus.append(smoothedModeProbabilities(forward: forwardModeProbabilities(&modes, else: &filter),
                                                 backward: backward[index]))
            out.append(node)
        }
        assignProcessNoise(&out, mus: mus, configuration: configuration)
        return out
    }

    /// Builds the nodes for one tag's ranges (non-decreasing time) plus output times, by running the
    /// causal filter (tightly coupled) on the ranges in the rounds the engine took them (`appendRound`).
    /// Complexity O(n log n) for the merge.
    static func nodes(ranges: [RangeMeasurement], floor: Floor, outputTimesSeconds: [Double],
                              configuration: TrackFilterConfiguration) -> [Node] {
        guard let first = ranges.first else { return [] }
        var filter = TrackFilter(configuration: configuration, tag: first.tag, floor: floor.id,
                                 tagHeightMeters: floor.tagHeightMeters)
        var modes = TrackFilter(configuration: forwardConfiguration(configuration), tag: first.tag, floor: floor.id,
                                tagHeightMeters: floor.tagHeightMeters)
        var out: [Node] = []
        var mus: [SIMD4<Double>] = []
        var i = 0, j = 0
        let outputs = outputTimesSeconds.sorted()
        let backward = backwardModeProbabilities(ranges: ranges, floor: floor, configuration: configuration)
        var round = RoundBuffers()
        while i < ranges.count || j < outputs.count {
            let takeRange = j >= outputs.count || (i < ranges.count && ranges[i].timeSeconds <= outputs[j])
            if takeRange {
                let end = roundEnd(ranges, from: i, before: j < outputs.count ? outputs[j] : .infinity)
                appendRound(ranges, i..<end, filter: &filter, modes: &modes, floor: floor, buffers: &round, backward: { backward[$0] },
                            nodes: &out, mus: &mus)
                i = end
            } else {
                let t = outputs[j]
                j += 1
                filter.predict(toSeconds: t)
                modes.predict(toSeconds: t)
                guard filter.isTracking, t - filter.lastUpdateSeconds <= configuration.reinitializeAfterSeconds else { continue }
                // The backward IMM as it stood having seen the ranges from the next one on.
                mus.append(smoothedModeProbabilities(forward: forwardModeProbabilities(&modes, else: &filter),
                                                     backward: backward[min(i, ranges.count - 1)]))
                out.append(Node(timeSeconds: max(t, filter.stateSeconds), measurement: .none, prior: nil, processNoiseDensity: 0,
                                isOutput: true))
            }
        }
        assignProcessNoise(&out, mus: mus, configuration: configuration)
        return out
    }

    /// The end of the round that starts at `ranges[start]`: the engine's epoch — the ranges up to the
    /// next output time `limit` (an epoch's fix is at its latest range), cut where a locator comes
    /// again (the engine then takes what is pending and that range on its own: its epoch table keeps
    /// one range per locator). At least one range.
    static func roundEnd(_ ranges: [RangeMeasurement], from start: Int, before limit: Double) -> Int {
        var end = start + 1
        while end < ranges.count, ranges[end].timeSeconds <= limit,
              !ranges[start..<end].contains(where: { $0.locator == ranges[end].locator }) { end += 1 }
        return end
    }

    /// A round's corrected ranges, times, anchors and addresses (reused from round to round), with each
    /// one's index in the tag's ranges and whether the journal has named it yet.
    struct RoundBuffers {
        var ranges: [Double] = [], times: [Double] = [], anchors: [Point3] = [], addresses: [LocatorAddress] = []
        var indices: [Int] = []
        var named: [Bool] = []

        mutating func removeAll() {
            ranges.removeAll(keepingCapacity: true); times.removeAll(keepingCapacity: true)
            anchors.removeAll(keepingCapacity: true); addresses.removeAll(keepingCapacity: true)
            indices.removeAll(keepingCapacity: true); named.removeAll(keepingCapacity: true)
        }
    }

    /// Hands `filter` the round `ranges[round]` (bias removed at each locator; ranges to unknown
    /// locators left out) as the engine does — one call, so that a young track judges it as a whole
    /// (`TrackFilter.updateRound`) — and appends a node per range its journal names, in its order: the
    /// prior where the track (re-)started, the range where it was accepted, none where it was refused.
    /// `backward(k)`: the backward IMM's μ having seen the tag's ranges from index k on.
    static func appendRound(_ ranges: [RangeMeasurement], _ round: Range<Int>, filter: inout TrackFilter,
                            modes: inout TrackFilter, floor: Floor,
                            buffers b: inout RoundBuffers, backward: (Int) -> SIMD4<Double>,
                            nodes: inout [Node], mus: inout [SIMD4<Double>]) {
        b.removeAll()
        for k in round {
            guard let locator = floor.locator(ranges[k].locator) else { continue }
            b.ranges.append(locator.correctedRange(ranges[k].rangeMeters))
            b.times.append(ranges[k].timeSeconds)
            b.anchors.append(locator.position)
            b.addresses.append(locator.address)
            b.indices.append(k)
            b.named.append(false)
        }
        guard !b.indices.isEmpty else { return }
        filter.startJournal()
        filter.update(rangesMeters: b.ranges.span, timesSeconds: b.times.span, anchors: b.anchors.span, addresses: b.addresses.span)
        modes.startJournal()
        modes.update(rangesMeters: b.ranges.span, timesSeconds: b.times.span, anchors: b.anchors.span, addresses: b.addresses.span)
        let modeEntries = modes.journal ?? []
        for entry in filter.journal ?? [] {
            // The round's range it names: the first not yet named with its time and locator.
            guard let m = b.indices.indices.first(where: { !b.named[$0] && b.times[$0] == entry.timeSeconds && b.addresses[$0] == entry.address })
            else { continue }
            b.named[m] = true
            var node = Node(timeSeconds: entry.timeSeconds, measurement: .none, prior: nil, processNoiseDensity: 0, isOutput: false)
            switch entry.kind {
            case .started(let state): node.prior = state
            case .accepted: node.measurement = .range(anchor: b.anchors[m], rangeMeters: b.ranges[m])
            case .refused: break
            }
            let mu = modeEntries.first(where: { $0.timeSeconds == entry.timeSeconds && $0.address == entry.address })?.modeProbabilities
            mus.append(smoothedModeProbabilities(forward: mu ?? entry.modeProbabilities, backward: backward(b.indices[m])))
            nodes.append(node)
        }
    }

    /// qₖ for the step into node k: `processNoise(for:)` of the smoothed model probabilities at the
    /// nodes within ±`smootherModeWindowSeconds` of node k, averaged (`windowMean`). (With the causal
    /// probabilities alone, a window maximum over ±0.5–2 s had been measured and was worse;
    /// docs/tracking.md, Smoother.)
    static func assignProcessNoise(_ nodes: inout [Node], mus: [SIMD4<Double>], configuration: TrackFilterConfiguration) {
        let averaged = windowMean(mus, timesSeconds: nodes.map(\.timeSeconds), halfWidthSeconds: configuration.smootherModeWindowSeconds)
        for k in nodes.indices { nodes[k].processNoiseDensity = processNoise(for: averaged[k], configuration: configuration) }
    }

    // MARK: forward + RTS

    /// Forward Kalman pass and backward RTS over the nodes; returns the smoothed state of every node.
    /// - Throws: `E4005` when a step goes non-finite or loses positive definiteness.
    package static func smoothStates(_ nodes: [Node], tagHeightMeters: Double,
                                     configuration: TrackFilterConfiguration) throws(LocusError) -> [KalmanState] {
        let n = nodes.count
        guard n > 0 else { return [] }
        // Built by appending and updated in place (a state is 160 bytes: each copy through a local
        // is a memcpy call); the backward pass then smooths `states` in place.
        var states: [KalmanState] = []
        states.reserveCapacity(n)
        var predicted: [KalmanState] = []
        predicted.reserveCapacity(n)
        let variance = configuration.rangeSigmaMeters * configuration.rangeSigmaMeters
        // The rows of a difference node's update, reused from node to node.
        var differenceRows: [Double] = []
        for k in 0..<n {
            if let prior = nodes[k].prior {
                states.append(prior)
            } else {
                precondition(k > 0, "TrackSmoother: the first node must carry a prior")
                states.append(states[k - 1])
                guard KalmanKernels.predict(&states[k], overSeconds: nodes[k].timeSeconds - nodes[k - 1].timeSeconds,
                                            processNoiseDensity: nodes[k].processNoiseDensity) == .accepted else {
                    throw LocusError(.filterDivergence, "smoother: prediction failed at t = \(nodes[k].timeSeconds) s")
                }
            }
            predicted.append(states[k])
            var innovation = KalmanInnovation()
            let outcome: KalmanOutcome
            switch nodes[k].measurement {
            case .none:
                outcome = .accepted
            case let .position(x, y, rxx, rxy, ryy):
                outcome = KalmanKernels.updatePosition(&states[k], zx: x, zy: y, rxx: rxx, rxy: rxy, ryy: ryy, gate: .infinity,
                                                       innovation: &innovation)
            case let .range(anchor, r):
                // The causal filter takes a range 2.5–4σ long with its variance raised (the soft long gate,
                // `KalmanKernels.softGateExtraVariance`); the same rule here against this pass's own
                // prediction (probed on a copy; never refused: the causal filter accepted the range).
                var probe = states[k]
                _ = KalmanKernels.updateRange(&probe, anchor: anchor, tagHeightMeters: tagHeightMeters, rangeMeters: r,
                                              varianceSquareMeters: variance, gateLong: 0, gateShort: 0, innovation: &innovation)
                let extra = KalmanKernels.softGateExtraVariance(residualMeters: innovation.residualMeters,
                                                                innovationVarianceSquareMeters: innovation.innovationVariance,
                                                                gateLong: configuration.rangeGateLongSigmas, gateShort: .infinity)
                outcome = KalmanKernels.updateRange(&states[k], anchor: anchor, tagHeightMeters: tagHeightMeters, rangeMeters: r,
                                                    varianceSquareMeters: extra > 0 ? variance + extra : variance,
                                                    gateLong: .infinity, gateShort: .infinity, innovation: &innovation)
            case let .differences(reference, locators, differences):
                let m = min(locators.count, differences.count)
                if differenceRows.count < m * DifferenceRows.stride {
                    differenceRows = [Double](repeating: 0, count: m * DifferenceRows.stride)
                }
                var rows = differenceRows.mutableSpan
                for j in 0..<m { DifferenceRows.set(&rows, row: j, locator: locators[j], differenceMeters: differences[j]) }
                outcome = KalmanKernels.updateDifferences(&states[k], reference: reference, rows: &rows, count: m,
                                                          tagHeightMeters: tagHeightMeters, varianceSquareMeters: variance,
                                                          gateLong: .infinity, gateShort: .infinity).0
            }
            guard outcome == .accepted || outcome == .invalidArgument else {
                throw LocusError(.filterDivergence, "smoother: update failed at t = \(nodes[k].timeSeconds) s")
            }
        }
        let failed = KalmanKernels.smoothBackward(&states, predicted: &predicted) { k in
            nodes[k + 1].prior == nil ? nodes[k + 1].timeSeconds - nodes[k].timeSeconds : nil
        }
        if let k = failed { throw LocusError(.filterDivergence, "smoother: RTS step failed at t = \(nodes[k].timeSeconds) s") }
        return states
    }

    /// Smooths a tag's least-squares fixes (loosely coupled): causal filter for gating and mode
    /// probabilities, then forward Kalman + RTS with per-step q. One fix out per fix kept.
    /// Complexity O(n) time and memory.
    /// - Throws: `E4005` when the numbers go non-finite.
    package static func smooth(_ fixes: [PositionFix],
                               configuration: TrackFilterConfiguration = .standard) throws(LocusError) -> [PositionFix] {
        guard let first = fixes.first else { return [] }
        let nodes = nodes(fixes: fixes, configuration: configuration)
        let states = try smoothStates(nodes, tagHeightMeters: first.position.z, configuration: configuration)
        return makeFixes(nodes: nodes, states: states, tag: first.tag, floor: first.floor, tagHeightMeters: first.position.z)
    }

    /// Smooths one tag's ranges (tightly coupled: extended RTS linearised at the forward estimates),
    /// reporting a fix at each output time the track covers. Complexity O(n) time and memory.
    /// - Throws: `E4005` when the numbers go non-finite.
    static func smooth(ranges: [RangeMeasurement], floor: Floor, outputTimesSeconds: [Double],
                       configuration: TrackFilterConfiguration = .standard) throws(LocusError) -> [PositionFix] {
        guard let first = ranges.first else { return [] }
        let nodes = nodes(ranges: ranges, floor: floor, outputTimesSeconds: outputTimesSeconds, configuration: configuration)
        let states = try smoothStates(nodes, tagHeightMeters: floor.tagHeightMeters, configuration: configuration)
        return makeFixes(nodes: nodes, states: states, tag: first.tag, floor: floor.id, tagHeightMeters: floor.tagHeightMeters)
    }

    static func makeFixes(nodes: [Node], states: [KalmanState], tag: TagID, floor: FloorID,
                          tagHeightMeters: Double) -> [PositionFix] {
        var out: [PositionFix] = []
        out.reserveCapacity(nodes.count)
        for (node, s) in zip(nodes, states) where node.isOutput {
            out.append(PositionFix(timeSeconds: node.timeSeconds, tag: tag, floor: floor,
                                   position: Point3(x: s.x[0], y: s.x[1], z: tagHeightMeters),
                                   velocity: Vector3(x: s.x[2], y: s.x[3], z: 0),
                                   covariance: SymmetricMatrix3(xx: s.p[0], xy: s.p[1], yy: s.p[5], zz: 0),  // P₀₀, P₀₁, P₁₁
                                   quality: FixQuality(hdop: 0, pdop: 0, residualRMSMeters: 0,
                                                       locatorsUsed: { if case .none = node.measurement { 0 } else { 1 } }())))
        }
        return out
    }
}
