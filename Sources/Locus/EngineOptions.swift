import LocusCore
import LocusSolvers

/// The engine's user-facing settings, as every face spells them: `locus replay`'s options, the C
/// ABI's `locus_options`, `FloorSession.Configuration`, the Python package. Each face fills one of
/// these (`init(rateHertz:sigmaMeters:filter:coupling:mode:tagOffset:defaultFloor:smooth:)`, or
/// `init(value:number:smooth:)` from a command line); `EngineConfiguration(_:)` turns it into the
/// engine's settings in one place, so that the faces cannot drift apart (they did: σ reached the
/// tag-offset estimator from the command line only). The faces read back only what they report or
/// need before the engine exists (`rateHertz`, `sigmaMeters`, `filter`, `defaultFloor`, `smooth`).
///
/// Defaults are SPEC §5's: 4 Hz, σ = 0.1 m, the causal filter tightly coupled, the solver's mode
/// chosen by the locators' heights, the per-tag range offset on uncalibrated planar floors.
package struct EngineOptions: Sendable, Hashable {
    /// Output rate per tag, Hz, in `rateRange`.
    package let rateHertz: Double
    /// Range noise σ assumed by the solver, the filter and the tag-offset estimator, metres, in `sigmaRange`.
    package let sigmaMeters: Double
    /// What turns ranges into the fixes the engine reports.
    package let filter: Filter
    /// How the filter uses ranges (meaningful with `.kalman`).
    let coupling: TrackFilterConfiguration.Coupling
    /// The solver's height model.
    let mode: TrilaterationMode
    /// When the per-tag common range offset is estimated.
    let tagOffset: TagOffset
    /// Whether per-locator range biases are estimated where the tag offset is.
    let locatorBias: LocatorBias
    /// The floor of rows that name none; nil: the site's first floor.
    package let defaultFloor: FloorID?
    /// Whether positions are smoothed offline over the whole recording (`--smooth`): events stay causal.
    package let smooth: Bool

    /// `--filter`.
    package enum Filter: String, Sendable, Hashable, CaseIterable {
        /// Raw per-epoch least-squares fixes.
        case none
        /// The causal filter.
        case kalman
    }

    /// `--tag-offset`.
    package enum TagOffset: String, Sendable, Hashable, CaseIterable {
        /// On planar floors whose locators carry no bias.
        case automatic = "auto"
        /// On every planar floor.
        case on
        /// Never.
        case off
    }

    /// `--locator-bias`.
    enum LocatorBias: String, Sendable, Hashable, CaseIterable {
        /// Wherever the tag offset is estimated (`tagOffset`).
        case automatic = "auto"
        /// Never.
        case off
    }

    /// Options; each left out keeps its default (4 Hz, σ 0.1 m, the causal filter tightly coupled,
    /// the solver's mode by the locators' heights, the tag offset and locator biases `.automatic`,
    /// the site's first floor, no smoothing).
    package init(rateHertz: Double = 4, sigmaMeters: Double = 0.1, filter: Filter = .kalman,
                 coupling: TrackFilterConfiguration.Coupling = .tight, mode: TrilaterationMode = .automatic,
                 tagOffset: TagOffset = .automatic, defaultFloor: FloorID? = nil, smooth: Bool = false) {
        self.init(rateHertz: rateHertz, sigmaMeters: sigmaMeters, filter: filter, coupling: coupling, mode: mode,
                  tagOffset: tagOffset, locatorBias: .automatic, defaultFloor: defaultFloor, smooth: smooth)
    }

    /// Every option, `locatorBias` included (only the command line sets it).
    init(rateHertz: Double, sigmaMeters: Double, filter: Filter, coupling: TrackFilterConfiguration.Coupling,
         mode: TrilaterationMode, tagOffset: TagOffset, locatorBias: LocatorBias, defaultFloor: FloorID?, smooth: Bool) {
        self.rateHertz = rateHertz
        self.sigmaMeters = sigmaMeters
        self.filter = filter
        self.coupling = coupling
        self.mode = mode
        self.tagOffset = tagOffset
        self.locatorBias = locatorBias
        self.defaultFloor = defaultFloor
        self.smooth = smooth
    }

    /// Accepted output rates, Hz.
    static let rateRange: ClosedRange<Double> = 0.001...1000
    /// Accepted range noise σ, metres.
    static let sigmaRange: ClosedRange<Double> = 1e-6...100

    /// Checks the numbers (`what` names the options in messages, e.g. "options.rate_hz" for the C ABI).
    /// - Throws: E1003 for a rate or σ outside its range (or not finite).
    package func validate(naming what: (rate: String, sigma: String) = ("rate", "sigma")) throws(LocusError) {
        guard Self.rateRange.contains(rateHertz) else {
            throw LocusError(.invalidArgument, "\(what.rate) \(rateHertz) is outside [\(Self.rateRange.lowerBound), \(Self.rateRange.upperBound)] Hz")
        }
        guard Self.sigmaRange.contains(sigmaMeters) else {
            throw LocusError(.invalidArgument, "\(what.sigma) \(sigmaMeters) is outside [\(Self.sigmaRange.lowerBound), \(Self.sigmaRange.upperBound)] m")
        }
    }
}

extension EngineConfiguration {
    /// The engine's settings for `options`: σ goes to the solver, the filter and the tag-offset
    /// estimator alike. The one place where options become a configuration. `tagLimit`: the bound on
    /// live tags (`locus stream`'s `--max-tags`, `--tag-idle`; `TagLimit`), nil for none;
    /// `releaseLatenessSeconds`: its `--max-lag` (`releaseLatenessSeconds` of the configuration).
    package init(_ options: EngineOptions, tagLimit: (maximumTags: Int, idleSeconds: Double)? = nil,
                 releaseLatenessSeconds: Double = 0) {
        var solver = TrilaterationConfiguration.standard
        solver.sigmaMeters = options.sigmaMeters
        solver.mode = options.mode
        var filter = TrackFilterConfiguration.standard
        filter.coupling = options.coupling
        filter.rangeSigmaMeters = options.sigmaMeters
        var offset = TagRangeOffsetConfiguration.standard
        offset.rangeSigmaMeters = options.sigmaMeters
        let tagOffset: TagRangeOffset
        switch options.tagOffset {
        case .automatic: tagOffset = .automatic(offset)
        case .on: tagOffset = .on(offset)
        case .off: tagOffset = .off
        }
        var bias = TagLocatorBiasConfiguration.standard
        bias.rangeSigmaMeters = options.sigmaMeters
        self.init(rateHertz: options.rateHertz, defaultFloor: options.defaultFloor, solver: solver,
                  tracking: options.filter == .none ? .none : .kalman(filter), tagRangeOffset: tagOffset,
                  locatorBias: options.locatorBias == .off ? .off : .automatic(bias),
                  tagLimit: tagLimit.map { TagLimit(maximumTags: $0.maximumTags, idleSeconds: $0.idleSeconds) })
        self.releaseLatenessSeconds = releaseLatenessSeconds
    }
}
