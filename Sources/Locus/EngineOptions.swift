import LocusCore
import LocusSolvers

/// The engine's user-facing settings, as every face spells them: `locus replay`'s options, the C
/// ABI's `locus_options`, `FloorSession.Configuration`, the Python package. Each face fills one of
/// these; `EngineConfiguration(_:)` turns it into the engine's settings in one place, so that the
/// faces cannot drift apart (they did: σ reached the tag-offset estimator from the command line only).
///
/// Defaults are SPEC §5's: 4 Hz, σ = 0.1 m, the causal filter tightly coupled, the solver's mode
/// chosen by the locators' heights, the per-tag range offset on uncalibrated planar floors.
package struct EngineOptions: Sendable, Hashable {
    /// Output rate per tag, Hz, in `rateRange`.
    package var rateHertz: Double = 4
    /// Range noise σ assumed by the solver, the filter and the tag-offset estimator, metres, in `sigmaRange`.
    package var sigmaMeters: Double = 0.1
    /// What turns ranges into the fixes the engine reports.
    package var filter: Filter = .kalman
    /// How the filter uses ranges (meaningful with `.kalman`).
    package var coupling: TrackFilterConfiguration.Coupling = .tight
    /// The solver's height model.
    package var mode: TrilaterationMode = .automatic
    /// When the per-tag common range offset is estimated.
    package var tagOffset: TagOffset = .automatic
    /// Whether per-locator range biases are estimated where the tag offset is.
    var locatorBias: LocatorBias = .automatic
    /// The floor of rows that name none; nil: the site's first floor.
    package var defaultFloor: FloorID?
    /// Whether positions are smoothed offline over the whole recording (`--smooth`): events stay causal.
    package var smooth = false

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

    /// The defaults.
    package init() {}

    /// Accepted output rates, Hz.
    static let rateRange: ClosedRange<Double> = 0.001...1000
    /// Accepted range noise σ, metres.
    static let sigmaRange: ClosedRange<Double> = 1e-6...100

    /// Checks the numbers (`what` prefixes the option names in messages, e.g. "options." for the C ABI).
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
    /// estimator alike. The one place where options become a configuration.
    package init(_ options: EngineOptions) {
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
                  locatorBias: options.locatorBias == .off ? .off : .automatic(bias))
    }
}
