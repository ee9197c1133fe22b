import LocusCore
import LocusNumerics

// The tightly coupled filter's range-difference (TDoA) updates: an epoch's differences, group by
// group (`DifferencePair`), through every motion model (`TrackFilter`'s own file keeps ranges and fixes).
extension TrackFilter {

    /// Tightly coupled update with an epoch's range differences (`DifferencePair`s, by index into
    /// `locators`, the epoch's locator positions, and `addresses`, their addresses: one per locator),
    /// as the engine calls it when a difference epoch closes; then `closeEpoch(atSeconds:)` as for ranges.
    ///
    /// Per group (a run of pairs with the same reference and time, `DifferencePair.sharesArrival`):
    /// 1. predict to the group's time t (a group up to `differenceLatenessSeconds` older than the track
    ///    is taken at the track's time, unpredicted);
    /// 2. gate each raw difference zⱼ = d(tag, Bⱼ) − d(tag, A) on its own, planar at the floor's tag
    ///    height: hⱼ = ‖p − bⱼ‖ − ‖p − a‖, Hⱼ = ∂hⱼ/∂p (`DifferenceModel`), νⱼ = (zⱼ − hⱼ)/√(HⱼPHⱼᵀ + 2σ²),
    ///    refused when νⱼ > `rangeGateLongSigmas` (Bⱼ long: NLOS) or νⱼ < −`rangeGateShortSigmas` (IMM:
    ///    on the manoeuvring model, as ranges); σ = `rangeSigmaMeters`, the per-arrival σ;
    /// 3. whiten the n survivors, whose noise is Σ = σ²(I + 11ᵀ) (the reference's arrival is shared):
    ///    W = I + c11ᵀ, c = (1/√(n+1) − 1)/n, so z' = Wz, h' = Wh, H' = WH have noise σ²I;
    /// 4. apply them as n sequential scalar updates of the linearisation at the predicted state x₀,
    ///    y'ⱼ = z'ⱼ − h'ⱼ(x₀) − H'ⱼ(x − x₀) — together exactly the vector EKF update —, to every model
    ///    (IMM: each model's likelihood N(y'ⱼ; 0, S'ⱼ) pending into μ as for ranges; single model: Joseph
    ///    form), all or nothing.
    /// Bookkeeping as for ranges, in pair order: +1 to the rejection score per gated difference (its
    /// locator B listed as rejected in the epoch's quality), −1 (not below 0) per applied one; the
    /// epoch's quality adds the applied whitened rows (`TrackEpochQuality.accept(differences:…)`:
    /// `locatorsUsed` counts applied differences, HDOP is √trace((Σ H'ᵀH')⁻¹)).
    ///
    /// **Initialisation contract.** Differences alone cannot start a track (the filter keeps no
    /// difference buffer and solves no difference least squares): the engine seeds it. Whenever the
    /// result is `.buffered` or `.diverged`, the filter has no state (`isTracking` false) — it had none,
    /// or the group came more than `reinitializeAfterSeconds` after the last accepted measurement, or
    /// more than `differenceLatenessSeconds` before the track's time, or the rejection score reached
    /// `gateOpenScore` (re-acquisition: the gate opens), or the numbers went non-finite — and the engine
    /// is to solve the epoch's differences by least squares and seed the filter with that fix,
    /// `reset(toFix:)` (or `reset(to:atSeconds:)` with a state of its own) at the fix's time, **without**
    /// applying the epoch's differences again (the fix already holds them), then `closeEpoch(atSeconds:)`.
    /// Without a fix (too few differences) the filter stays without state until one comes. A hybrid
    /// tag's ranges still initialise the filter from its range buffer as usual.
    ///
    /// - Returns: `.buffered` (`.diverged` if a group diverged) when the filter has no state on return;
    ///   else `.accepted` when some difference was applied, `.gated` when every usable one was gated,
    ///   `.unusable` when none was usable (bad indices, the reference as B, non-finite numbers).
    ///   No allocation (each group's rows live on the stack).
    package mutating func update(differences pairs: Span<DifferencePair>, locators: Span<Point3>,
                                 addresses: Span<LocatorAddress>) -> TrackUpdateOutcome {
        update(differences: pairs, locators: locators, addresses: addresses) { _, _ in }
    }

    /// `update(differences:locators:addresses:)`, telling `report` what became of each pair (its index
    /// in `pairs`; `.unusable` as well for the pairs of a group that was not run): the smoother's
    /// forward pass takes exactly the differences the filter applied.
    mutating func update(differences pairs: Span<DifferencePair>, locators: Span<Point3>, addresses: Span<LocatorAddress>,
                         report: (Int, DifferenceRows.Outcome) -> Void) -> TrackUpdateOutcome {
        precondition(addresses.count == locators.count, "TrackFilter.update(differences:): one address per locator")
        var accepted = false, gated = false, diverged = false
        var start = 0
        while start < pairs.count {
            var end = start + 1
            // (Not `end < n && pairs[end]…`: the autoclosure of `&&` capturing the span crashes the 6.3.1
            // optimiser in release builds — "leaked owned value" in CopyPropagation.)
            while end < pairs.count {
                guard pairs[end].sharesArrival(with: pairs[start]) else { break }
                end += 1
            }
            switch updateGroup(pairs, start..<end, locators: locators, addresses: addresses, report: report) {
            case .accepted: accepted = true
            case .gated: gated = true
            case .diverged: diverged = true
            default: break
            }
            start = end
        }
        guard isTracking else { return diverged ? .diverged : .buffered }
        return accepted ? .accepted : gated ? .gated : .unusable
    }

    /// Whether `pair` can be used with `locators`: valid, distinct indices and a finite difference.
    @inline(__always)
    private static func isUsable(_ pair: DifferencePair, locatorCount n: Int) -> Bool {
        pair.reference >= 0 && Int(pair.reference) < n && pair.locator >= 0 && Int(pair.locator) < n
            && pair.reference != pair.locator && abs(pair.differenceMeters) <= .greatestFiniteMagnitude
    }

    /// One group of `update(differences:…)`: the pairs `group` of `pairs`, sharing one reference and time.
    private mutating func updateGroup(_ pairs: Span<DifferencePair>, _ group: Range<Int>, locators: Span<Point3>,
                                      addresses: Span<LocatorAddress>, report: (Int, DifferenceRows.Outcome) -> Void) -> TrackUpdateOutcome {
        let first = pairs[group.lowerBound]
        let t = first.timeSeconds
        guard isTracking, abs(t) <= .greatestFiniteMagnitude else {
            for k in group { report(k, .unusable) }
            return isTracking ? .unusable : .buffered
        }
        if t - lastUpdateSeconds > configuration.reinitializeAfterSeconds || t < stateSeconds - configuration.differenceLatenessSeconds {
            for k in group { report(k, .unusable) }
            dropTrack()
            return .buffered
        }
        // Rows for every pair of the group (the usable ones filled in order, m of them): on the stack.
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: group.count * DifferenceRows.stride) { buffer -> TrackUpdateOutcome in
            buffer.initialize(repeating: 0)
            var rows = buffer.mutableSpan
            var m = 0
            for k in group {
                let pair = pairs[k]
                guard Self.isUsable(pair, locatorCount: locators.count) else { continue }
                DifferenceRows.set(&rows, row: m, locator: locators[Int(pair.locator)], differenceMeters: pair.differenceMeters)
                m += 1
            }
            guard m > 0 else {
                for k in group { report(k, .unusable) }
                return .unusable
            }
            let reference = locators[Int(first.reference)]
            let (outcome, predicted, statistics) = motion.predictAndUpdateDifferences(
                toSeconds: t, fromSeconds: stateSeconds, reference: reference, rows: &rows, count: m,
                tagHeightMeters: tagHeightMeters, shared)
            guard predicted else {
                for k in group { report(k, .unusable) }
                diverge(at: t)
                return .diverged
            }
            stateSeconds = max(stateSeconds, t)
            let ran = outcome == .accepted || outcome == .gated
            var applied = 0
            var r = 0
            for k in group {
                guard Self.isUsable(pairs[k], locatorCount: locators.count) else { report(k, .unusable); continue }
                let o = ran ? DifferenceRows.outcome(rows, row: r) : .unusable
                r += 1
                switch o {
                case .applied:
                    applied += 1
                    rejectionScore = max(0, rejectionScore - 1)
                case .gated:
                    rejectionScore += 1
                    epoch.reject(addresses[Int(pairs[k].locator)])
                case .unusable:
                    break
                }
                report(k, o)
            }
            switch outcome {
            case .accepted:
                lastUpdateSeconds = max(lastUpdateSeconds, t)
                lastMean = TrackFilter.Mean(statistics.mean)
                epoch.accept(differences: applied, statistics: statistics)
            case .gated:
                break
            case .invalidArgument:
                return .unusable
            default:
                diverge(at: t)
                return .diverged
            }
            if rejectionScore >= configuration.gateOpenScore {
                // The gate opens: re-acquisition from the engine's least-squares fix (see the contract).
                dropTrack()
                return .buffered
            }
            return outcome == .accepted ? .accepted : .gated
        }
    }

}
