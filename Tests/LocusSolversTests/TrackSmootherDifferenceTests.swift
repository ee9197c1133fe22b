import Testing
@testable import LocusCore
@testable import LocusNumerics
@testable import LocusSimulation
@testable import LocusSolvers
import LocusTestSupport

/// The offline smoother on range differences (TDoA, issue #40 item 3): accuracy against the per-fix
/// Cramér–Rao bound, hybrid tags, the causal filter's gate decisions, and the range path unchanged.
@Suite struct TrackSmootherDifferenceTests {
    static func smoothed(_ run: DifferenceFixture.Run, ranges: [RangeMeasurement] = [],
                         differences: [RangeDifference]? = nil, outputs: [Double]? = nil,
                         configuration: TrackFilterConfiguration = .standard) throws -> [PositionFix] {
        try TrackSmoother.smooth(ranges: ranges, differences: differences ?? run.blinks.flatMap(\.rows), floor: DifferenceFixture.hall,
                                 outputTimesSeconds: outputs ?? run.blinks.map(\.timeSeconds), configuration: configuration)
    }

    @Test("Smoothed RMSE on differences is at most 0.55 × the per-fix CRB", arguments: [1, 2, 3] as [UInt64])
    func smoothedBeatsBound(seed: UInt64) throws {
        let run = DifferenceFixture.simulate(seed: seed)
        let fixes = try Self.smoothed(run)
        let score = DifferenceFixture.score(fixes, run: run)
        #expect(fixes.count == run.blinks.count)
        #expect(fixes.allSatisfy { $0.position.isFinite && $0.covariance.isFinite })
        #expect(score.ratio <= 0.55, "RMSE \(score.rmseMeters) m vs CRB \(score.crbMeters) m")
        let causal = DifferenceFixture.score(DifferenceFixture.runCausal(run), run: run)
        #expect(score.rmseMeters < causal.rmseMeters)
        print("differences smoothed seed \(seed): RMSE \(score.rmseMeters) m, CRB \(score.crbMeters) m, ratio \(score.ratio) (causal \(causal.ratio))")
    }

    @Test("The single-model smoother configuration smooths differences too")
    func singleModel() throws {
        let run = DifferenceFixture.simulate(seed: 1, durationSeconds: 60)
        let fixes = try Self.smoothed(run, configuration: TrackFilterConfiguration(usesInteractingModels: false))
        let score = DifferenceFixture.score(fixes, run: run)
        #expect(fixes.count == run.blinks.count)
        #expect(score.ratio <= 0.9, "RMSE \(score.rmseMeters) m vs CRB \(score.crbMeters) m")
    }

    @Test("A hybrid tag's ranges and differences are smoothed in one track, better than either alone")
    func hybrid() throws {
        let run = DifferenceFixture.simulate(seed: 1)
        let ranges = run.rounds.enumerated().filter { $0.offset % 2 == 0 }.flatMap(\.element)
        let differences = run.blinks.enumerated().filter { $0.offset % 2 == 1 }.flatMap(\.element.rows)
        let outputs = run.blinks.map(\.timeSeconds)
        let both = DifferenceFixture.score(try Self.smoothed(run, ranges: ranges, differences: differences, outputs: outputs), run: run)
        let rangesAlone = DifferenceFixture.score(try TrackSmoother.smooth(ranges: ranges, floor: DifferenceFixture.hall,
                                                                           outputTimesSeconds: outputs), run: run)
        let differencesAlone = DifferenceFixture.score(try Self.smoothed(run, differences: differences, outputs: outputs), run: run)
        #expect(both.rmseMeters < rangesAlone.rmseMeters && both.rmseMeters < differencesAlone.rmseMeters,
                "hybrid \(both.rmseMeters) m, ranges alone \(rangesAlone.rmseMeters) m, differences alone \(differencesAlone.rmseMeters) m")
        print("hybrid smoothed: \(both.rmseMeters) m, ranges alone \(rangesAlone.rmseMeters) m, differences alone \(differencesAlone.rmseMeters) m")
    }

    @Test("The smoother takes exactly the differences the causal filter applied: the outliers it gated never enter")
    func sameGateDecisions() throws {
        let outlier: (Int, Int) -> Double = { k, j in k >= 16 && k % 10 == 5 && j == 3 ? 5 : (k >= 16 && k % 10 == 0 && j == 6 ? 25 : 0) }
        let run = DifferenceFixture.simulate(seed: 2, durationSeconds: 60, outlier: outlier)
        let differences = run.blinks.flatMap(\.rows)
        let nodes = TrackSmoother.nodes(ranges: [], differences: differences, floor: DifferenceFixture.hall,
                                        outputTimesSeconds: run.blinks.map(\.timeSeconds), configuration: .standard)
        // The causal filter's own decisions, blink by blink.
        var filter = TrackFilter(configuration: TrackSmoother.forwardConfiguration(.standard), tag: "T1", floor: "1F",
                                 tagHeightMeters: DifferenceFixture.tagHeight)
        var appliedPerBlink: [Double: Int] = [:]
        for blink in run.blinks {
            var applied = 0
            let o = DifferenceFixture.apply(blink, to: &filter) { _, o in if o == .applied { applied += 1 } }
            if o != .initialized { appliedPerBlink[blink.timeSeconds] = applied }
        }
        var checked = 0
        for node in nodes {
            guard case let .differences(_, locators, values) = node.measurement else { continue }
            #expect(locators.count == appliedPerBlink[node.timeSeconds], "t = \(node.timeSeconds)")
            let k = Int((node.timeSeconds * 4).rounded())
            #expect(locators.count == (outlier(k, 3) + outlier(k, 6) != 0 ? 6 : 7) || k < 16)
            #expect(values.allSatisfy { abs($0) < 20 })
            checked += 1
        }
        #expect(checked > 200)
        let score = DifferenceFixture.score(try Self.smoothed(run, differences: differences), run: run)
        #expect(score.ratio <= 0.6, "RMSE \(score.rmseMeters) m vs CRB \(score.crbMeters) m")
    }

    @Test("Without differences, smooth(ranges:differences:…) is smooth(ranges:…), bit for bit")
    func rangePathUnchanged() throws {
        let rec = TrackFixture.recording(seed: 1, durationSeconds: 60)
        let times = RangeRounds.split(rec.ranges).compactMap { $0.last?.timeSeconds }
        let a = try TrackSmoother.smooth(ranges: rec.ranges, floor: rec.floor, outputTimesSeconds: times)
        let b = try TrackSmoother.smooth(ranges: rec.ranges, differences: [], floor: rec.floor, outputTimesSeconds: times)
        #expect(a == b)
    }
}
