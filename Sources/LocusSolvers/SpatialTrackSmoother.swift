import LocusCore
import LocusNumerics

/// The offline smoother of floors solved in 3-D (`locus replay --smooth`, issue #42): a Rauch–Tung–Striebel
/// pass over `SpatialTrack`'s forward filter.
///
/// Forward: the 3-D constant-velocity EKF of `SpatialTrack` (same q_h, q_v, σ_r, gate with its soft long side,
/// hysteresis and re-seeding; seeded from the causal fix at or after the first range of a stretch)
/// runs over the tag's ranges in time order; every range and every output time is a node k with its
/// predicted state (x̂ₖ⁻, Pₖ⁻) and filtered state (x̂ₖ, Pₖ) (an output node: the state settled there as
/// the causal engine settles each epoch's end — predicted, then the height prior, `SpatialTrack.settle`).
/// Backward, within each stretch of one track (a re-seed starts a new one):
///   G = Pₖ Fᵀ (Pₖ₊₁⁻)⁻¹, x̂ₖˢ = x̂ₖ + G (x̂ₖ₊₁ˢ − x̂ₖ₊₁⁻), Pₖˢ = Pₖ + G (Pₖ₊₁ˢ − Pₖ₊₁⁻) Gᵀ
/// (`locus_kalman_cv3_rts_step`, Δt the nodes' spacing). The smoothed fix at each output time is its
/// node's smoothed state; an output time the forward pass had no track for keeps its causal fix.
/// O(n) time and memory (672 bytes per node): an offline tool.
package enum SpatialTrackSmoother {
    /// Smoothed fixes of one tag's stretch on `floor` at `seeds`' times (the causal fixes, in time
    /// order, their quality figures kept), from its `ranges` (in time order, the tag's range offset
    /// already removed; the locators' biases are removed here).
    package static func smooth(ranges: [RangeMeasurement], floor: Floor, seeds: [PositionFix],
                               configuration: TrackFilterConfiguration) -> [PositionFix] {
        let shared = TrackFilterConfiguration.Shared(configuration)
        struct Node {
            var t: Double
            var predicted: SpatialKalmanState
            var filtered: SpatialKalmanState
            var stretch: Int
            var output: Int  // index into seeds, or −1 for a range node
        }
        var nodes: [Node] = []
        nodes.reserveCapacity(ranges.count + seeds.count)
        var track = SpatialTrack(shared: shared)
        var stretch = 0, nextSeed = 0, k = 0
        // After a (re-)seed, the ranges up to the seed's time are its epoch's: the seed already holds them.
        var seededAt = -Double.infinity
        // Events in time order: ranges, then an output at the same time (a fix follows its epoch's ranges).
        while k < ranges.count || nextSeed < seeds.count {
            let takeRange = k < ranges.count && (nextSeed >= seeds.count || ranges[k].timeSeconds <= seeds[nextSeed].timeSeconds)
            if takeRange {
                let r = ranges[k]
                k += 1
                guard let locator = floor.locator(r.locator), r.timeSeconds > seededAt else { continue }
                if !track.accepts(atSeconds: r.timeSeconds) {
                    // (Re-)seed from the causal fix at or after this range (the engine's seed of the epoch).
                    guard let seed = seeds[nextSeed...].first(where: { $0.timeSeconds >= r.timeSeconds }), track.reset(toFix: seed) else { continue }
                    stretch += 1
                    seededAt = seed.timeSeconds
                    continue
                }
                let before = track.stateAt(r.timeSeconds)
                track.update(rangeMeters: locator.correctedRange(r.rangeMeters), timeSeconds: r.timeSeconds, address: locator.address,
                             anchor: locator.position)
                guard track.isTracking else { continue }
                nodes.append(Node(t: track.stateTimeSeconds, predicted: before ?? track.filteredState, filtered: track.filteredState,
                                  stretch: stretch, output: -1))
            } else {
                let s = seeds[nextSeed]
                // The causal engine's epoch end: the epoch's refusals counted (a run of them drops the
                // track, as in the engine), predicted there, then the height prior (`SpatialTrack.settle`).
                track.countEpochRefusals()
                if let predicted = track.stateAt(s.timeSeconds),
                   let settled = track.settle(atSeconds: s.timeSeconds, tagHeightMeters: floor.tagHeightMeters) {
                    nodes.append(Node(t: track.stateTimeSeconds, predicted: predicted, filtered: settled, stretch: stretch, output: nextSeed))
                }
                nextSeed += 1
            }
        }
        // Backward pass per stretch.
        var smoothed = nodes.map(\.filtered)
        if nodes.count >= 2 {
            for i in stride(from: nodes.count - 2, through: 0, by: -1) where nodes[i].stretch == nodes[i + 1].stretch {
                let dt = max(0, nodes[i + 1].t - nodes[i].t)
                if let s = nodes[i].filtered.smoothed(predicted: nodes[i + 1].predicted, next: smoothed[i + 1], overSeconds: dt) {
                    smoothed[i] = s
                }
            }
        }
        var out = seeds
        for (i, node) in nodes.enumerated() where node.output >= 0 {
            let s = smoothed[i]
            out[node.output].position = s.position
            out[node.output].velocity = s.velocity
            out[node.output].covariance = s.positionCovariance
        }
        return out
    }
}
