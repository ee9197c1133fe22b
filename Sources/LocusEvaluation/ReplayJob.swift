import Locus
import LocusCore
import LocusIO
import LocusSolvers

/// A whole `locus replay` run as a library call: a trace through the engine (streamed over
/// `jobs` tag-sharded engines, or held whole for the smoother and the truth-shift estimate),
/// positions and events written as released, and the summary with accuracy and zone score
/// against truth. The command line, the C ABI and Python call this; each only parses and prints.
package struct ReplayJob {
    /// `--truth-shift`: how to compare a fix at t with the truth.
    package enum TruthShiftSetting: Equatable, Sendable {
        /// No shift asked for: δ = 0, not reported.
        case none
        /// δ given, seconds (−3600…3600).
        case given(Double)
        /// δ estimated from the range residuals against the truth (never from the fixes).
        case auto
    }

    let site: Site
    /// The engine's options (the one settings value every face builds).
    let options: EngineOptions
    /// Tag-sharded engines with one clock (1…256); the bytes are the same for every count.
    let jobs: Int
    /// The floor of rows that name none (`options.defaultFloor` resolved against the site).
    private let defaultFloor: FloorIndex
    /// Truth to compare with, or nil.
    let truth: GroundTruth?
    let truthShift: TruthShiftSetting
    /// How far apart a zone transition and its reference may be to match, seconds.
    let zoneWindowSeconds: Double
    /// Keep each tag's track for the SVG report (`ReplayReport`).
    let keepsTracks: Bool
    /// Rows per sorted block of an out-of-order trace (small in tests, to spill).
    var sortBlockRows = 1 << 20

    /// A replay of `site` with `options` on `jobs` cores (nil: every core online, `ProcessorCount`),
    /// judged against the truth read from `truthPath` (nil: none) with `truthShift`, zone transitions
    /// matched within `zoneWindowSeconds`; `keepsTracks` keeps each tag's track for the SVG report.
    /// - Throws: E3002 for an unknown default floor, before any input is read or output opened; then
    ///   the truth reader's errors naming `truthPath`.
    package init(site: Site, options: EngineOptions, jobs: Int?, truthPath: String? = nil, truthShift: TruthShiftSetting = .none,
                 zoneWindowSeconds: Double = 5, keepsTracks: Bool = false) throws(LocusError) {
        self.site = site
        self.options = options
        self.jobs = jobs ?? ProcessorCount.online
        defaultFloor = FloorIndex(try site.floorIndex(options.defaultFloor))
        truth = try truthPath.map { (path: String) throws(LocusError) in try GroundTruth.read(path: path) }
        self.truthShift = truthShift
        self.zoneWindowSeconds = zoneWindowSeconds
        self.keepsTracks = keepsTracks
    }

    /// Replays `source` into the sinks (nil: not written) and returns the summary (`elapsedSeconds`
    /// 0: the caller owns the clock).
    /// - Parameters:
    ///   - say: warnings and notes for people (the command line's stderr), whole lines.
    ///   - progress: called with the rows read, now and then.
    /// - Throws: the reader's E5001/E5003/E5004 naming the input; E5005 for an output.
    package func run(source: ByteSource, positions: ByteSink?, events: ByteSink?, say: (String) -> Void = { _ in },
                     progress: ((Int) -> Void)? = nil) throws(LocusError) -> ReplaySummary {
        let configuration = EngineConfiguration(options)
        if options.smooth || truthShift == .auto {
            return try wholeRecording(configuration: configuration, source: source,
                                      positions: positions, events: events, say: say, progress: progress)
        }
        let shift = try resolvedShift(trace: nil, solver: configuration.solver, say: say)
        var replay = StreamingReplay(site: site, configuration: configuration, jobs: jobs)
        replay.sortBlockRows = sortBlockRows
        if let truth {
            replay.evaluation = try ReplayEvaluation(site: site, truth: truth, shiftSeconds: shift?.seconds ?? 0,
                                                     rateHertz: configuration.rateHertz, keepsTracks: keepsTracks,
                                                     windowSeconds: zoneWindowSeconds)
        }
        replay.progress = progress
        let outcome = try replay.run(source: source, positions: positions, events: events)
        if let runs = outcome.sortedRuns {
            say("locus replay: \(source.name) is not in time order (\(plural(runs, "time-ordered run"))): "
                + (outcome.spilledBlocks > 0
                   ? "sorted through \(plural(outcome.spilledBlocks, "block")) in \(TemporaryFiles.directory) (deleted)\n"
                   : "sorted in memory\n"))
        }
        var summary = ReplaySummary(fixes: outcome.fixes, ranges: outcome.rows, tags: outcome.tags, skipped: outcome.skipped,
                                    diagnostics: outcome.diagnostics, events: outcome.events,
                                    elapsedSeconds: 0, filter: options.filter.rawValue, smooth: false, evaluation: outcome.evaluation)
        summary.truthShift = truth == nil ? nil : shift
        return summary
    }

    /// `--smooth` and `--truth-shift auto`: the whole recording read into memory and replayed by one
    /// driven engine (`EngineDriver.replay`), smoothed by the driver with `--smooth`.
    private func wholeRecording(configuration: EngineConfiguration, source: ByteSource,
                                positions: ByteSink?, events: ByteSink?, say: (String) -> Void,
                                progress: ((Int) -> Void)?) throws(LocusError) -> ReplaySummary {
        var driver = try EngineDriver(site: site, configuration: configuration, smoothing: options.smooth ? .replacing : .none)
        let trace = try TraceReader.read(source: source)
        let truthShift = try resolvedShift(trace: trace, solver: configuration.solver, say: say)
        let result = try driver.replay(trace, progress: progress)
        let fixes = result.fixes
        if let events {
            var writer = ZoneEventWriter()
            for e in result.events { writer.append(e) }
            try events.write(writer.bytes)
        }
        if let positions {
            var writer = PositionsWriter()
            for fix in fixes { writer.append(fix) }
            try positions.write(writer.bytes)
        }
        var evaluation: ReplayEvaluation? = nil
        if let truth {
            var e = try ReplayEvaluation(site: site, truth: truth, shiftSeconds: truthShift?.seconds ?? 0, rateHertz: configuration.rateHertz,
                                         keepsTracks: keepsTracks, windowSeconds: zoneWindowSeconds)
            for fix in fixes { e.add(fix) }
            for event in result.events { e.add(event) }
            e.finish()
            evaluation = e
        }
        var skipped = trace.skipped
        skipped.merge(driver.engine.diagnostics.skipped)
        var summary = ReplaySummary(fixes: fixes.count, ranges: trace.rows.count + trace.skipped.total, tags: trace.tags.count,
                                    skipped: skipped, diagnostics: driver.engine.diagnostics,
                                    events: Dictionary(grouping: result.events, by: \.kind).mapValues(\.count),
                                    elapsedSeconds: 0, filter: options.filter.rawValue, smooth: options.smooth, evaluation: evaluation)
        summary.truthShift = truth == nil ? nil : truthShift
        return summary
    }

    /// The shift δ: nil when none was asked for (δ = 0, not reported), the number when given, or
    /// with `.auto` the estimate of `ReplayTruthShift.estimate` (0 with a warning when it cannot tell).
    private func resolvedShift(trace: RangeTrace?, solver: TrilaterationConfiguration,
                               say: (String) -> Void) throws(LocusError) -> ReplayTruthShift? {
        switch truthShift {
        case .none:
            return nil
        case .given(let seconds):
            return ReplayTruthShift(seconds: seconds, source: .given)
        case .auto:
            guard let truth, let trace else {
                say("locus replay: warning: --truth-shift auto has no effect without --truth\n")
                return nil
            }
            let alignment = ReplayTruthShift.estimate(trace: trace, truth: truth, site: site, defaultFloor: defaultFloor.rawValue, solver: solver)
            if let warning = ReplayTruthShift.warning(for: alignment) { say(warning) }
            return ReplayTruthShift(seconds: alignment.shiftSeconds, source: .auto)
        }
    }
}
