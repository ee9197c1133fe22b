import LocusCore
import LocusNumerics

/// The settings of one rejection search (from `TrilaterationConfiguration`).
struct DifferenceSearchSettings {
    /// λ: χ² price of one rejected locator.
    var rejectionPenalty: Double
    /// K: most locators rejected in one fix.
    var maximumRejections: Int
    /// σ², m² (per arrival).
    var sigmaSquared: Double
    /// The final fit's tolerance, metres.
    var tolerance: Double
    /// Gauss–Newton steps per fit.
    var maximumIterations: Int
}

/// The index buffers of one rejection search (each at least n entries; `picks` 4 per slot).
struct DifferenceSearchSets {
    /// The locators of the all-arrivals fit (`census(eligible:)`), `count` of them.
    var eligible: UnsafeMutableBufferPointer<Int32>
    var count: Int
    /// The best set of the last level (a greedy level extends it).
    var level: UnsafeMutableBufferPointer<Int32>
    /// The best set so far (the answer).
    var best: UnsafeMutableBufferPointer<Int32>
    /// The set being fitted.
    var candidate: UnsafeMutableBufferPointer<Int32>
    /// Per candidate slot of an exhaustive level: its (up to `maximumExhaustiveLevel`) picks.
    var picks: UnsafeMutableBufferPointer<Int32>
    /// The current k-combination (indices into `eligible`).
    var combination: UnsafeMutableBufferPointer<Int32>
    /// Per candidate slot: the predicted χ² (+∞ once taken).
    var predicted: UnsafeMutableBufferPointer<Double>
    /// Per candidate slot: the start of its fit (x, y, z).
    var starts: UnsafeMutableBufferPointer<Double>
}

extension DifferenceFit {
    /// A level fits at most this many of its screened candidates, lowest predicted χ² first ...
    static let fitsPerLevel = 3
    /// ... and only those whose predicted χ² is within this margin (χ² units) of the lowest among
    /// the level's candidates that read long at their screened start, and whose predicted cost
    /// χ² + λk is below the best cost so far plus the margin (the margin absorbs the error of the
    /// one-step linear prediction), as the range kernel's search.
    static let screenMargin = 2.0
    /// An exhaustive level followed by a greedy one fits up to this many candidates to find a best
    /// set for the greedy level to extend.
    static let fitsBeforeGreedy = 8
    /// Levels up to this size can be exhaustive (`isExhaustive`): with 8 locators every level to 4,
    /// the most a planar fix can leave out. Half the arrivals
    /// NLOS by similar lengths makes the wrong half fit well (rejected by the long-reading test), so
    /// no 3-set qualifies for a greedy fourth level to extend; an exhaustive fourth level finds it.
    static let maximumExhaustiveLevel = 4
    /// A level checks at most this many candidates for reading long at their screened start.
    static let checksPerLevel = 24
    /// A greedy level tries this many of the longest-reading locators.
    static let greedyCandidates = 4
    /// Candidate fits stop at this step; the chosen fit is then polished to the full tolerance.
    static let candidateToleranceMeters = 1e-6
    /// Mean squared whitened residual (m²) of the all-arrivals fit above which its outliers are
    /// gross: (1 m)², 10σ at the standard σ. The search then screens each candidate from its own
    /// seed (one model pass each) rather than from the all-arrivals fit's stored rows.
    static let grossResidualSquareMeters = 1.0

    /// Per locator i, Σ over its arrivals of eᵢ − ē_g at `x`: its residual eᵢ = zᵢ − (ρᵢ − ρ_A)
    /// (`DifferenceModel.predicted`; the reference's own arrival 0) less its group's offset estimate
    /// ē_g, the mean over the arrivals in the fit (groups with none are skipped). Positive: the
    /// locator's arrivals read long — as NLOS makes them (an NLOS reference makes every other
    /// difference of its group short, so its own arrival reads long). O(pairs + n).
    func readingScores(at x: Point3) {
        for i in 0..<locators.count { scores[i] = 0 }
        var start = 0
        while start < pairs.count {
            let end = groupEnd(from: start)
            let reference = Int(pairs[start].reference)
            let a = locators[reference]
            var active = excluded[reference] == 0 ? 1 : 0
            var sum = 0.0
            for j in start..<end {
                let pair = pairs[j]
                let b = locators[Int(pair.locator)]
                let e = pair.differenceMeters - DifferenceModel.predicted(at: x, reference: a, locator: b)
                residuals[j] = e
                if excluded[Int(pair.locator)] == 0 { sum += e; active += 1 }
            }
            if active >= 1 {
                let mean = sum / Double(active)
                scores[reference] -= mean
                for j in start..<end { scores[Int(pairs[j].locator)] += residuals[j] - mean }
            }
            start = end
        }
    }

    /// True when every locator of `set[0..<count]` reads long at `x` (`readingScores`): NLOS only
    /// delays an arrival.
    func readsLong(_ set: UnsafeMutableBufferPointer<Int32>, count: Int, at x: Point3) -> Bool {
        readingScores(at: x)
        for q in 0..<count where !(scores[Int(set[q])] > 0) { return false }
        return true
    }

    /// Sets (1) or clears (0) the left-out flag of the locators `set[0..<count]`.
    @inline(__always)
    func mark(_ set: UnsafeMutableBufferPointer<Int32>, count: Int, _ flag: Int32) {
        for q in 0..<count { excluded[Int(set[q])] = flag }
    }

    /// True when the fit without the current left-out locators still has p + 1 independent
    /// differences from p + 2 locators (as a solve needs).
    @inline(__always)
    mutating func isSolvable() -> Bool {
        let unknowns = planar ? 2 : 3
        let c = census()
        return c.differences >= unknowns + 1 && c.locators >= unknowns + 2
    }

    /// The closed-form start of the fit without the left-out locators when it lies inside the site,
    /// else `otherwise` (the locators' centroid when nil).
    func insideStart(sets: DifferenceSearchSets, otherwise: Point3? = nil) -> Point3 {
        if let start = seed(), !isOutsideSite(start, eligible: sets.eligible, count: sets.count) { return start }
        return otherwise ?? centroid()
    }

    /// A candidate's fit from `start`, again from the locators' centroid when the first lands outside
    /// the site (`isOutsideSite`); nil when neither fit succeeds inside it.
    func fitInside(from start: Point3, tolerance: Double, sets: DifferenceSearchSets,
                   settings s: DifferenceSearchSettings) -> DifferenceFitResult? {
        if let fit = try? gaussNewton(from: start, tolerance: tolerance, maximumIterations: s.maximumIterations),
           !isOutsideSite(fit.position, eligible: sets.eligible, count: sets.count,
                          ceiling: ceilingMargin(fit.normal, sigmaSquared: s.sigmaSquared)) {
            return fit
        }
        if let fit = try? gaussNewton(from: centroid(), tolerance: tolerance, maximumIterations: s.maximumIterations),
           !isOutsideSite(fit.position, eligible: sets.eligible, count: sets.count,
                          ceiling: ceilingMargin(fit.normal, sigmaSquared: s.sigmaSquared)) {
            return fit
        }
        return nil
    }

    /// Whether level k of n eligible locators takes every k-subset: C(n, k) ≤ 64 for k ≤ 3 (the range
    /// kernel's budget), C(n, 4) ≤ 128 for k = 4 (n = 8, 9); greedy otherwise.
    static func isExhaustive(_ n: Int, _ k: Int) -> Bool {
        k <= 3 ? combinations(n, k) <= 64
            : k == maximumExhaustiveLevel && combinations(n, k) <= Double(DifferenceWorkspace.candidateSlots)
    }

    /// C(n, k) as a double (k small).
    static func combinations(_ n: Int, _ k: Int) -> Double {
        var c = 1.0
        for i in 0..<k { c = c * Double(n - i) / Double(i + 1) }
        return c
    }

    /// The penalised subset search over locators (the range kernel's, `trilateration.c` step 3):
    /// minimise χ²(without E) + λ|E| over sets E of left-out locators, |E| ≤ K, keeping p + 2 locators
    /// and p + 1 differences, among sets whose locators all read long at the fit without them
    /// (`readsLong`). Leaving a locator out drops its arrivals; a group whose reference is left out is
    /// re-referenced to its remaining arrivals (see the type's comment).
    ///
    /// Level k takes every k-subset while `isExhaustive` (C(n, k) ≤ 64 for k ≤ 3, ≤ 128 for k = 4),
    /// each screened by one linearised step — its predicted χ² = c_E − b_E·N_E⁻¹b_E — from the
    /// all-arrivals fit's stored rows (O(pairs), no square root), or, when that fit's outliers are
    /// gross, from the candidate's own closed-form start. Candidates whose locators do not read long at
    /// their screened start are passed over; of the rest the best `fitsPerLevel` within `screenMargin`
    /// are fitted. Otherwise level k extends level k − 1's best set by each of the `greedyCandidates`
    /// longest-reading locators. Level k runs only while the best cost exceeds λk. A fit that leaves
    /// the site (`isOutsideSite`: spatial TDoA's second solution) is retried from the centroid, never
    /// taken. The chosen set's fit is polished to `tolerance`; its locators are left marked in
    /// `excluded`.
    /// - Returns: the chosen fit and the number of rejected locators (their indices in `sets.best`).
    /// - Throws: as `gaussNewton` for the polish.
    mutating func searchRejections(full: DifferenceFitResult, sets: DifferenceSearchSets,
                                   settings s: DifferenceSearchSettings)
        throws(LocusError) -> (fit: DifferenceFitResult, rejected: Int) {
        let unknowns = planar ? 2 : 3
        let n = sets.count
        let kmax = min(s.maximumRejections, n - (unknowns + 2))
        guard kmax >= 1 else { return (full, 0) }
        let lambda = s.rejectionPenalty
        let candidateTolerance = max(s.tolerance, Self.candidateToleranceMeters)
        var bestCost = full.normal.c / s.sigmaSquared
        var best = full
        var bestCount = 0
        let xFull = full.position
        var xLevel = xFull
        var levelCount = 0
        var levelHasBest = true
        _ = linearize(at: xFull, source: .modelStoringRows)
        // Gross outliers (metres to tens of metres) drag the all-arrivals fit so far — at times out of
        // the hall, towards infinity — that its linearisation ranks nothing: screen from each
        // candidate's own closed-form start instead.
        let gross = full.normal.c > Self.grossResidualSquareMeters * Double(max(1, census().differences))
            || isOutsideSite(xFull, eligible: sets.eligible, count: sets.count)
        for k in 1...kmax {
            let penalty = lambda * Double(k)
            if bestCost <= penalty { break }
            let exhaustive = Self.isExhaustive(n, k)
            if !exhaustive && !levelHasBest { break }
            var levelBest = Double.infinity
            var levelX = xLevel
            if exhaustive {
                // Screen every k-combination of the eligible locators (lexicographic).
                var slots = 0
                var lowest = Double.infinity
                for q in 0..<k { sets.combination[q] = Int32(q) }
                while true {
                    for q in 0..<k { sets.candidate[q] = sets.eligible[Int(sets.combination[q])] }
                    mark(sets.candidate, count: k, 1)
                    if isSolvable() {
                        let origin = gross ? insideStart(sets: sets) : xFull
                        let lin = linearize(at: origin, source: gross ? .model : .rows)
                        if let d = step(lin) {
                            let predicted = (lin.c - (lin.bx * d.0 + lin.by * d.1 + lin.bz * d.2)) / s.sigmaSquared
                            if predicted.isFinite {
                                sets.predicted[slots] = predicted
                                sets.starts[3 * slots] = origin.x + d.0
                                sets.starts[3 * slots + 1] = origin.y + d.1
                                sets.starts[3 * slots + 2] = origin.z + d.2
                                for q in 0..<k { sets.picks[Self.maximumExhaustiveLevel * slots + q] = sets.candidate[q] }
                                slots += 1
                                lowest = min(lowest, predicted)
                            }
                        }
                    }
                    mark(sets.candidate, count: k, 0)
                    if !Self.advance(sets.combination, n, k) { break }
                }
                // Fit the most promising few, lowest prediction first (ties: enumeration order). When a
                // greedy level follows, it needs this level's best set: fit on (up to
                // `fitsBeforeGreedy`) until one is found, whatever the margins.
                let continues = k < kmax && !Self.isExhaustive(n, k + 1)
                // A candidate whose locators do not read long at its screened start is passed over
                // before its fit (one pass; not counted as a fit): with half the arrivals NLOS the
                // wrong half predicts the lowest χ².
                var fits = 0, checks = 0
                var lowestLong = Double.infinity
                while fits < (continues ? Self.fitsBeforeGreedy : Self.fitsPerLevel) && checks < Self.checksPerLevel {
                    var q = -1
                    var least = Double.infinity
                    for r in 0..<slots where sets.predicted[r] < least { least = sets.predicted[r]; q = r }
                    if q < 0 { break }
                    sets.predicted[q] = .infinity
                    let needed = continues && levelBest == .infinity
                    if !needed && !(least + penalty < bestCost + Self.screenMargin) { break }
                    for r in 0..<k { sets.candidate[r] = sets.picks[Self.maximumExhaustiveLevel * q + r] }
                    let start = point(sets.starts[3 * q], sets.starts[3 * q + 1], sets.starts[3 * q + 2])
                    mark(sets.candidate, count: k, 1)
                    checks += 1
                    if !readsLong(sets.candidate, count: k, at: start) {
                        mark(sets.candidate, count: k, 0)
                        continue
                    }
                    if !needed && !(least <= lowestLong + Self.screenMargin) {
                        mark(sets.candidate, count: k, 0)
                        break
                    }
                    fits += 1
                    if let fit = fitInside(from: start, tolerance: candidateTolerance, sets: sets, settings: s) {
                        let chi = fit.normal.c / s.sigmaSquared
                        if lowestLong == .infinity { lowestLong = least }
                        if chi < levelBest && readsLong(sets.candidate, count: k, at: fit.position) {
                            levelBest = chi
                            levelX = fit.position
                            for r in 0..<k { sets.level[r] = sets.candidate[r] }
                            levelCount = k
                            if chi + penalty < bestCost {
                                bestCost = chi + penalty
                                best = fit
                                for r in 0..<k { sets.best[r] = sets.candidate[r] }
                                bestCount = k
                            }
                        }
                    }
                    mark(sets.candidate, count: k, 0)
                }
            } else {
                // Greedy: level k − 1's best set plus one of the longest-reading locators there.
                let base = levelCount
                mark(sets.level, count: base, 1)
                readingScores(at: xLevel)
                var chosen = 0
                for _ in 0..<Self.greedyCandidates {
                    var pick = -1
                    var longest = 0.0
                    for e in 0..<n {
                        let i = Int(sets.eligible[e])
                        if excluded[i] == 0 && scores[i] > longest { longest = scores[i]; pick = i }
                    }
                    if pick < 0 { break }
                    sets.picks[chosen] = Int32(pick)
                    scores[pick] = 0   // taken
                    chosen += 1
                }
                var levelPick: Int32 = -1
                for q in 0..<chosen {
                    for r in 0..<base { sets.candidate[r] = sets.level[r] }
                    sets.candidate[base] = sets.picks[q]
                    excluded[Int(sets.picks[q])] = 1
                    if isSolvable(),
                       let fit = fitInside(from: insideStart(sets: sets, otherwise: xLevel), tolerance: candidateTolerance,
                                           sets: sets, settings: s) {
                        let chi = fit.normal.c / s.sigmaSquared
                        if chi < levelBest && readsLong(sets.candidate, count: base + 1, at: fit.position) {
                            levelBest = chi
                            levelX = fit.position
                            levelPick = sets.picks[q]
                            if chi + penalty < bestCost {
                                bestCost = chi + penalty
                                best = fit
                                for r in 0...base { sets.best[r] = sets.candidate[r] }
                                bestCount = base + 1
                            }
                        }
                    }
                    excluded[Int(sets.picks[q])] = 0
                }
                mark(sets.level, count: base, 0)
                if levelPick >= 0 { sets.level[base] = levelPick; levelCount = base + 1 }
            }
            levelHasBest = levelBest < .infinity
            if levelHasBest { xLevel = levelX }
        }
        if !passesGate(bestCost - lambda * Double(bestCount), set: sets.best, count: bestCount),
           let (fit, cost, count) = fitEverySubset(kmax: kmax, below: bestCost, sets: sets, settings: s),
           passesGate(cost - lambda * Double(count), set: sets.level, count: count) {
            // Taken only when it passes the gate: with more arrivals NLOS than a fit can leave out
            // (4 of 8 spatial) no set is right, and a lower cost is no better a position.
            best = fit
            bestCount = count
            for r in 0..<count { sets.best[r] = sets.level[r] }
        }
        guard bestCount > 0 else { return (full, 0) }
        mark(sets.best, count: bestCount, 1)
        let polished = try gaussNewton(from: best.position, tolerance: s.tolerance, maximumIterations: s.maximumIterations)
        return (polished, bestCount)
    }

    /// The next k-combination of 0..<n in lexicographic order in `c`; false after the last.
    static func advance(_ c: UnsafeMutableBufferPointer<Int32>, _ n: Int, _ k: Int) -> Bool {
        var q = k - 1
        while q >= 0 && Int(c[q]) == n - k + q { q -= 1 }
        if q < 0 { return false }
        c[q] += 1
        for r in (q + 1)..<max(q + 1, k) { c[r] = c[r - 1] + 1 }
        return true
    }

    /// Whether χ² (σ units) of the fit without `set[0..<count]` is within the 99.5 % gate of its
    /// degrees of freedom (`DifferenceSolver.chiSquareQuantile995`).
    mutating func passesGate(_ chiSquare: Double, set: UnsafeMutableBufferPointer<Int32>, count: Int) -> Bool {
        mark(set, count: count, 1)
        let differences = census().differences
        mark(set, count: count, 0)
        return chiSquare <= DifferenceSolver.chiSquareQuantile995(degreesOfFreedom: differences - (planar ? 2 : 3))
    }

    /// The thorough pass, run when the screened search's choice still fails the χ² gate: with 3 of 8
    /// arrivals NLOS the all-arrivals fit is dragged so far that its one-step predictions rank the
    /// right set out of the fitted few. Every subset of each exhaustive level (`isExhaustive`, at most
    /// 8 + 28 + 56 fits spatial with 8 locators) is fitted from its own closed-form start and taken
    /// when it reads long and lowers χ² + λk. Rare (about 1 % of fixes at 10 % NLOS) but up to ~100
    /// fits: it costs tens of microseconds when it runs.
    /// - Returns: the fit, cost χ² + λk and size k of the best set below `bound` (the set in
    ///   `sets.level`), or nil.
    mutating func fitEverySubset(kmax: Int, below bound: Double, sets: DifferenceSearchSets,
                                 settings s: DifferenceSearchSettings) -> (DifferenceFitResult, Double, Int)? {
        let n = sets.count, lambda = s.rejectionPenalty
        var bestCost = bound, best: DifferenceFitResult?, bestCount = 0
        let candidateTolerance = max(s.tolerance, Self.candidateToleranceMeters)
        for k in 1...kmax where Self.isExhaustive(n, k) {
            let penalty = lambda * Double(k)
            if bestCost <= penalty { break }
            for q in 0..<k { sets.combination[q] = Int32(q) }
            while true {
                for q in 0..<k { sets.candidate[q] = sets.eligible[Int(sets.combination[q])] }
                mark(sets.candidate, count: k, 1)
                if isSolvable(),
                   let fit = fitInside(from: insideStart(sets: sets), tolerance: candidateTolerance, sets: sets, settings: s) {
                    let cost = fit.normal.c / s.sigmaSquared + penalty
                    if cost < bestCost && readsLong(sets.candidate, count: k, at: fit.position) {
                        bestCost = cost
                        best = fit
                        for r in 0..<k { sets.level[r] = sets.candidate[r] }
                        bestCount = k
                    }
                }
                mark(sets.candidate, count: k, 0)
                if !Self.advance(sets.combination, n, k) { break }
            }
        }
        guard let best else { return nil }
        return (best, bestCost, bestCount)
    }
}
