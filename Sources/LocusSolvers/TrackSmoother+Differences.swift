import LocusCore
import LocusNumerics

extension TrackSmoother {
    /// One step of a recording with range differences, in time order: a range, a group of differences
    /// (a run of `differences` with one time and one reference), or an output time.
    enum DifferenceEvent: Sendable {
        case range(Int)
        case group(Range<Int>)
        case output(Double)
    }

    /// A group of `RangeDifference`s as the filter takes it: pairs by index into `locators` (the
    /// reference first, index 0), the locators' addresses, z less the locators' biases
    /// (z − (b_B − b_A); a difference carries no tag offset, which cancels). Rows with an unknown locator
    /// are left out; nil when the reference is unknown or nothing is left.
    struct DifferenceGroup {
        var pairs: [DifferencePair] = []
        var locators: [Point3] = []
        var addresses: [LocatorAddress] = []
        var timeSeconds = 0.0

        init?(_ rows: ArraySlice<RangeDifference>, floor: Floor, timeSign: Double = 1) {
            guard let first = rows.first, let a = floor.locator(first.reference) else { return nil }
            timeSeconds = timeSign * first.timeSeconds
            locators.append(a.position)
            addresses.append(a.address)
            for d in rows {
                guard let b = floor.locator(d.locator) else { continue }
                pairs.append(DifferencePair(reference: 0, locator: locators.count, differenceMeters: d.differenceMeters - (b.biasMeters - a.biasMeters),
                                            timeSeconds: timeSeconds))
                locators.append(b.position)
                addresses.append(b.address)
            }
            if pairs.isEmpty { return nil }
        }

        /// `filter.update(differences:…)`, then — when the filter is left without a state — the seed of the
        /// initialisation contract, `reset(toFix:)` with `seed`'s fix (nil: none, the filter stays
        /// without state; `.initialized` when seeded). `report` as `TrackFilter.update(differences:…:report:)`.
        @discardableResult
        func apply(to filter: inout TrackFilter, seed: () -> PositionFix?,
                   report: (Int, DifferenceRows.Outcome) -> Void = { _, _ in }) -> TrackUpdateOutcome {
            let outcome = filter.update(differences: pairs.span, locators: locators.span, addresses: addresses.span, report: report)
            if outcome == .buffered || outcome == .diverged, let fix = seed(), filter.reset(toFix: fix) { return .initialized }
            return outcome
        }

        /// The group's own least-squares fix (`DifferenceSolver`, planar at the floor's tag height, σ the
        /// filter's per-arrival σ): the seed of a track without the engine's fixes to start from.
        func leastSquaresFix(floor: Floor, sigmaMeters: Double, tag: TagID) -> PositionFix? {
            var configuration = TrilaterationConfiguration.standard
            configuration.mode = .planar
            configuration.tagHeightMeters = floor.tagHeightMeters
            configuration.sigmaMeters = sigmaMeters
            guard let s = try? DifferenceSolver(configuration: configuration).solve(locators: locators, pairs: pairs) else { return nil }
            return PositionFix(timeSeconds: timeSeconds, tag: tag, floor: floor.id, position: s.position, covariance: s.covariance,
                               quality: FixQuality(hdop: s.hdop, pdop: s.pdop, residualRMSMeters: s.residualRMSMeters,
                                                   locatorsUsed: s.locatorsUsed))
        }
    }

    /// The seed of a track the differences left without a state, as the engine seeds it: the engine's
    /// own fix (`seeds`, its causal fixes of the tag in time order) of the epoch that holds the group —
    /// the first at or after the group's time, within `withinSeconds` (the filter's re-initialisation
    /// gap) —, taken at the group's own time (so that the smoother's nodes stay in time order, whichever
    /// epoch or kind closed that fix), or else the group's own least-squares fix. `timeSign` −1: the
    /// backward pass (the last fix at or before the group's time; times negated).
    static func seed(for group: DifferenceGroup, seeds: [PositionFix], timeSign: Double, withinSeconds: Double,
                     floor: Floor, configuration: TrackFilterConfiguration, tag: TagID) -> PositionFix? {
        let t = timeSign * group.timeSeconds
        if !seeds.isEmpty {
            var lo = 0, hi = seeds.count  // the first seed at or after t (binary search)
            while lo < hi {
                let mid = (lo + hi) / 2
                if seeds[mid].timeSeconds >= t { hi = mid } else { lo = mid + 1 }
            }
            let k = lo
            let chosen = timeSign > 0 ? (k < seeds.count ? k : nil) : (k < seeds.count && seeds[k].timeSeconds == t ? k : (k > 0 ? k - 1 : nil))
            if let chosen, abs(seeds[chosen].timeSeconds - t) <= withinSeconds {
                // The engine's position and covariance, at the group's own (signed) time: the smoother's
                // nodes stay in time order whichever epoch (or kind, on a hybrid tag) the fix closed.
                var fix = seeds[chosen]
                fix.timeSeconds = group.timeSeconds
                return fix
            }
        }
        return group.leastSquaresFix(floor: floor, sigmaMeters: configuration.rangeSigmaMeters, tag: tag)
    }

    /// The recording's ranges, difference groups and output times merged in time order (ties: ranges,
    /// then differences, then outputs; each list's own order kept). `ranges` and `differences` in
    /// non-decreasing time.
    static func differenceEvents(ranges: [RangeMeasurement], differences: [RangeDifference],
                                 outputTimesSeconds: [Double]) -> [DifferenceEvent] {
        var groups: [Range<Int>] = []
        var start = 0
        while start < differences.count {
            var end = start + 1
            while end < differences.count, differences[end].timeSeconds == differences[start].timeSeconds,
                  differences[end].reference == differences[start].reference { end += 1 }
            groups.append(start..<end)
            start = end
        }
        let outputs = outputTimesSeconds.sorted()
        var out: [DifferenceEvent] = []
        out.reserveCapacity(ranges.count + groups.count + outputs.count)
        var i = 0, g = 0, j = 0
        while i < ranges.count || g < groups.count || j < outputs.count {
            let tr = i < ranges.count ? ranges[i].timeSeconds : .infinity
            let tg = g < groups.count ? differences[groups[g].lowerBound].timeSeconds : .infinity
            let to = j < outputs.count ? outputs[j] : .infinity
            if i < ranges.count, tr <= tg, tr <= to {
                out.append(.range(i)); i += 1
            } else if g < groups.count, tg <= to {
                out.append(.group(groups[g])); g += 1
            } else {
                out.append(.output(outputs[j])); j += 1
            }
        }
        return out
    }

    /// The backward IMM's model probabilities after each event (as `backwardModeProbabilities(ranges:…)`,
    /// with difference groups too): a `TrackFilter` fed the events from last to first at time −t, seeded
    /// from a group's least-squares fix when it has no state. Entry e holds μᵇ having seen the
    /// measurements of events e…; an output event holds the value of the measurements after it.
    static func backwardModeProbabilities(events: [DifferenceEvent], ranges: [RangeMeasurement], differences: [RangeDifference],
                                          seeds: [PositionFix], floor: Floor, tag: TagID,
                                          configuration: TrackFilterConfiguration) -> [SIMD4<Double>] {
        let uniform = TrackFilter.uniformModeProbabilities
        var out = [SIMD4<Double>](repeating: uniform, count: events.count)
        guard configuration.usesInteractingModels else { return out }
        let forward = forwardConfiguration(configuration)
        var filter = TrackFilter(configuration: forward, tag: tag, floor: floor.id, tagHeightMeters: floor.tagHeightMeters)
        var last = uniform
        let within = configuration.reinitializeAfterSeconds
        for e in stride(from: events.count - 1, through: 0, by: -1) {
            switch events[e] {
            case .range(let i):
                let r = ranges[i]
                if let locator = floor.locator(r.locator) {
                    filter.update(correctedRangeMeters: locator.correctedRange(r.rangeMeters), timeSeconds: -r.timeSeconds,
                                  address: locator.address, anchor: locator.position)
                    last = filter.modeProbabilities
                }
            case .group(let g):
                if let group = DifferenceGroup(differences[g], floor: floor, timeSign: -1) {
                    group.apply(to: &filter, seed: {
                        Self.seed(for: group, seeds: seeds, timeSign: -1, withinSeconds: within, floor: floor, configuration: forward, tag: tag)
                    })
                    last = filter.modeProbabilities
                }
            case .output:
                break
            }
            out[e] = last
        }
        return out
    }

    /// Builds the nodes for one tag's ranges and range differences (each in non-decreasing time) plus
    /// output times, by running the causal filter (tightly coupled) as the engine would — seeded from
    /// a group's least-squares fix when the differences leave it without a state — so that each node
    /// carries exactly the measurements the filter applied: a range node as `nodes(ranges:…)`, a
    /// difference node with the group's applied differences. Complexity O(n log n) for the merge.
    static func nodes(ranges: [RangeMeasurement], differences: [RangeDifference], floor: Floor, outputTimesSeconds: [Double],
                      seeds: [PositionFix] = [], configuration: TrackFilterConfiguration) -> [Node] {
        guard let tag = ranges.first?.tag ?? differences.first?.tag else { return [] }
        let forward = forwardConfiguration(configuration)
        // The live filter's decisions; the model probabilities from the smoother's own switching rate.
        var filter = TrackFilter(configuration: configuration, tag: tag, floor: floor.id, tagHeightMeters: floor.tagHeightMeters)
        var modes = TrackFilter(configuration: forward, tag: tag, floor: floor.id, tagHeightMeters: floor.tagHeightMeters)
        let events = differenceEvents(ranges: ranges, differences: differences, outputTimesSeconds: outputTimesSeconds)
        let backward = backwardModeProbabilities(events: events, ranges: ranges, differences: differences, seeds: seeds, floor: floor,
                                                 tag: tag, configuration: configuration)
        let within = configuration.reinitializeAfterSeconds
        var out: [Node] = []
        var mus: [SIMD4<Double>] = []
        var applied: [DifferenceRows.Outcome] = []
        var round = RoundBuffers()
        var e = 0
        while e < events.count {
            let event = events[e]
            e += 1
            switch event {
            case .range(let i):
                // The ranges up to the next group or output time, in the rounds the engine takes them
                // (`roundEnd`, `appendRound`); events e − 1 … hold ranges i … in order.
                var last = e
                while last < events.count, case .range = events[last] { last += 1 }
                let end = min(roundEnd(ranges, from: i, before: .infinity), i + (last - (e - 1)))
                let first = e - 1
                appendRound(ranges, i..<end, filter: &filter, modes: &modes, floor: floor, buffers: &round,
                            backward: { backward[first + ($0 - i)] }, nodes: &out, mus: &mus)
                e = first + (end - i)
            case .group(let g):
                guard let group = DifferenceGroup(differences[g], floor: floor) else { continue }
                let before = filter.initializationCount
                applied.removeAll(keepingCapacity: true)
                applied.append(contentsOf: repeatElement(.unusable, count: group.pairs.count))
                group.apply(to: &filter, seed: {
                    Self.seed(for: group, seeds: seeds, timeSign: 1, withinSeconds: within, floor: floor, configuration: configuration, tag: tag)
                }) { k, o in applied[k] = o }
                group.apply(to: &modes, seed: {
                    Self.seed(for: group, seeds: seeds, timeSign: 1, withinSeconds: within, floor: floor, configuration: forward, tag: tag)
                })
                guard filter.isTracking else { continue }
                var node = Node(timeSeconds: max(group.timeSeconds, filter.stateSeconds), measurement: .none, prior: nil,
                                processNoiseDensity: 0, isOutput: false)
                if filter.initializationCount != before {
                    node.prior = filter.state
                } else if applied.contains(.applied) {
                    var locators: [Point3] = [], values: [Double] = []
                    for (k, pair) in group.pairs.enumerated() where applied[k] == .applied {
                        locators.append(group.locators[Int(pair.locator)])
                        values.append(pair.differenceMeters)
                    }
                    node.measurement = .differences(reference: group.locators[0], locators: locators, differencesMeters: values)
                }
                mus.append(smoothedModeProbabilities(forward: forwardModeProbabilities(&modes, else: &filter),
                                                     backward: backward[e - 1]))
                out.append(node)
            case .output(let t):
                filter.predict(toSeconds: t)
                modes.predict(toSeconds: t)
                guard filter.isTracking, t - filter.lastUpdateSeconds <= configuration.reinitializeAfterSeconds else { continue }
                mus.append(smoothedModeProbabilities(forward: forwardModeProbabilities(&modes, else: &filter),
                                                     backward: backward[e - 1]))
                out.append(Node(timeSeconds: max(t, filter.stateSeconds), measurement: .none, prior: nil, processNoiseDensity: 0,
                                isOutput: true))
            }
        }
        assignProcessNoise(&out, mus: mus, configuration: configuration)
        return out
    }

    /// Smooths one tag's ranges and range differences (TDoA; either may be empty; a hybrid tag has
    /// both) on one floor, reporting a fix at each output time the track covers: the causal filter's
    /// gate decisions pick the measurements (`nodes(ranges:differences:…)`), then the forward Kalman pass
    /// (differences whitened per group and taken as the exact vector EKF update) and the backward RTS
    /// pass, linearised at the forward estimates, with per-step q from smoothed IMM mode probabilities.
    /// `differences` z = d(tag, B) − d(tag, A) as reported (the locators' biases are removed here), each
    /// group a run of rows with one time and one reference. Without differences this is exactly
    /// `smooth(ranges:floor:outputTimesSeconds:configuration:)`. Complexity O(n) time and memory.
    /// - Throws: `E4005` when the numbers go non-finite.
    /// `seeds`: the engine's causal fixes of the tag (time order) — where the differences leave the
    /// track without a state, the smoother's filter is seeded from the engine's fix of that epoch, as
    /// the live track was (empty: from each group's own least-squares fix).
    package static func smooth(ranges: [RangeMeasurement], differences: [RangeDifference], floor: Floor,
                               outputTimesSeconds: [Double], seeds: [PositionFix] = [],
                               configuration: TrackFilterConfiguration = .standard) throws(LocusError) -> [PositionFix] {
        guard !differences.isEmpty else {
            return try smooth(ranges: ranges, floor: floor, outputTimesSeconds: outputTimesSeconds, configuration: configuration)
        }
        guard let tag = ranges.first?.tag ?? differences.first?.tag else { return [] }
        let nodes = nodes(ranges: ranges, differences: differences, floor: floor, outputTimesSeconds: outputTimesSeconds,
                          seeds: seeds, configuration: configuration)
        let states = try smoothStates(nodes, tagHeightMeters: floor.tagHeightMeters, configuration: configuration)
        return makeFixes(nodes: nodes, states: states, tag: tag, floor: floor.id, tagHeightMeters: floor.tagHeightMeters)
    }
}
