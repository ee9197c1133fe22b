import LocusCore
import LocusNumerics

/// Settings of the calibration without truth (`SelfCalibration.estimate`).
package struct SelfCalibrationConfiguration: Sendable, Hashable {
    /// Also fit each locator's scale error sᵢ (r = (1 + sᵢ)·d + bᵢ).
    var fitsSlope = false
    /// Estimate each locator's position correction and flag those the data put away from their survey.
    var checksSurvey = true
    /// A locator needs this many ranges to be estimated.
    var minimumRanges = 50
    /// A combination of the biases whose standard deviation exceeds this is not determined by the
    /// recording (metres): it is held at the site's value (`looseBiasDirections`), and a locator whose
    /// own bias is that loose is reported so (kept, or partly determined).
    var observableSDMeters = 0.03
    /// A recording with fewer than half of its epochs holding two ranges beyond the tag's coordinates
    /// has no held-out figure (nothing truth-free judges it); when the median dilution of its epochs
    /// (PDOP in 3-D, HDOP planar, at the fitted positions) also exceeds this, its biases are kept:
    /// centimetres of range error that no constant bias describes move such fixes by decimetres. On
    /// the simulated four-locator flights (median PDOP 1.9–2.5) the biases make 47 of 48 runs better;
    /// on the Hanyang runs (a far tag, a 5 m cluster: 6.4–19) two of three written were worse, and with
    /// truth no bias model held (docs/calibration.md, "Four locators in 3-D").
    var unvalidatedMaximumDilution = 5.0
    /// The common offset (the mean bias, shared with the tag's own delay) is separable when its
    /// standard deviation is below this, metres; otherwise the biases are relative and their mean is
    /// held at the site's.
    var commonOffsetSDMeters = 0.03
    /// A tag path narrower than this across its principal direction (metres, 1σ) is nearly collinear:
    /// said in a warning, and with `lineAspectRatio` a line, whose biases are not calibrated without
    /// truth (`SelfCalibration.estimate`: a shift of the path across the line trades against a pattern
    /// of biases that held-out blocks on the same line cannot judge).
    var collinearSpreadMeters = 0.5
    /// A path whose spread across is also below this fraction of its spread along is a line, and a
    /// tag whose spread along is below `stillSpreadMeters` (metres, 1σ) barely moved: neither is
    /// calibrated without truth. A random walk in a small room (0.4–0.7 m across, 0.6–0.8 m along) is
    /// neither; a walk along one line (0.1 m across, 1.4 m along) and a tag standing still (0.02 m) are.
    var lineAspectRatio = 0.2
    /// A fit that rejects more than this share of the ranges (Tukey weight 0) has broken down: its biases
    /// are not written (`SelfCalibration.estimate`).
    var maximumOutlierShare = 0.5
    var stillSpreadMeters = 0.1
    /// From ranges and differences (`surveyTest`): a direction is checkable when its honest σ
    /// is at most this, metres. A linear model would allow 0.3/(z(1 − α/2) + z(0.95)) = 0.3/(3.89 +
    /// 1.64) ≈ 0.054 for a 0.3 m error to be flagged 95 % of the time at `surveyAlpha`; but along the
    /// direction a locator's bias nearly takes (radial, at a floor's corner) the fitted offset is
    /// shrunk — a corner 0.3 m out fits 0.14 m with σ 0.042 (docs/calibration.md) — so the stated
    /// bound is 0.03 m: a 0.3 m error is 10σ there.
    var surveyCheckableSDMeters = 0.03
    /// The test's level, the false-alarm rate per locator checked (a p-value of Hotelling's T² with
    /// the block covariance below it flags; ≤ n·α per site of n locators)…
    var surveyAlpha = 1e-4
    /// …and the smallest offset along the checkable directions that is flagged, metres (a real
    /// model error — a range scale, a lever arm — gives a small δ consistent across blocks).
    var surveyMinimumEffectMeters = 0.15
    /// The time blocks the honest covariance is estimated from (their spread; at least 8 must hold
    /// epochs).
    var surveyBlocks = 20
    /// The side of the square cells, metres, by which epochs are grouped into places for the place
    /// blocks of the survey test (a place's multipath and shadowing stay alike within about this).
    var surveyPlaceCellMeters = 1.0
    /// The share of a locator's epochs in which the others over-determine the tag (D + 1 of them)
    /// for it to be checkable.
    var surveyMinimumSupport = 0.5
    /// Gauss–Newton steps of each locator's trial fit with its correction free (from the fit
    /// without it).
    var surveyTrialSteps = 3
    /// Write the flagged locators' positions corrected: the biases are then those fitted with the
    /// corrections (otherwise those of the positions as surveyed).
    var fixesPositions = false
    /// Gauss–Newton steps (at most), the first `huberIterations` with Huber weights.
    var maximumIterations = 40
    var huberIterations = 3
    /// The steps stop when no parameter moves by more than this (and no position by more than ten
    /// times this), metres.
    var convergenceMeters = 1e-4
    /// Robust weights: Huber k and Tukey c in units of the locator's scale, the smallest scale.
    var huberThreshold = 1.345
    var tukeyThreshold = 4.685
    var minimumScaleMeters = 0.01
    /// Eigenvalues of the reduced normal matrix below this fraction of the largest are directions
    /// the data do not determine.
    var rankThreshold = 1e-10
    /// An adjustment whose last step (of `maximumIterations`) still moves a tag position or a
    /// parameter by more than this is diverging (metres; `SelfCalibration.solveToConvergence`).
    var divergenceMeters = 1.0

    /// Bias only, survey check on, the thresholds above.
    init() {}

    /// The defaults with the settings a face chooses: `fitsSlope`, `minimumRanges` and
    /// `fixesPositions` as the fields say.
    package init(fitsSlope: Bool = false, minimumRanges: Int = 50, fixesPositions: Bool = false) {
        self.fitsSlope = fitsSlope
        self.minimumRanges = minimumRanges
        self.fixesPositions = fixesPositions
    }

    /// The defaults.
    static let standard = SelfCalibrationConfiguration()
}

/// One locator's calibration without truth: what `SelfCalibration.estimate` fits, and the public
/// `SiteCalibration.LocatorReport` of `Locus` (the same type: one result, not a copy of it).
public struct SelfCalibratedLocator: Sendable, Hashable {
    /// The locator.
    public var address: LocatorAddress
    /// Tag ranges to it.
    public var rangeCount: Int
    /// The estimated bias bᵢ, metres; nil when not estimated (the site's value is kept).
    public var biasMeters: Double?
    /// Its standard deviation, metres.
    public var biasSDMeters: Double?
    /// The estimated scale error sᵢ (with `fitsSlope`), and its standard deviation.
    public var slope: Double?
    public var slopeSD: Double?
    /// Robust range noise σᵢ = 1.4826·MAD of its residuals, metres.
    public var noiseMeters: Double?
    /// Whether this recording determines the locator's bias.
    public var isObservable: Bool
    /// The fitted correction of its surveyed position (survey check), metres, with its largest
    /// standard deviation; nil when not checked.
    public var positionOffset: Vector3?
    public var positionOffsetSDMeters: Double?
    /// The data put it away from its surveyed position beyond what the noise explains.
    public var isFlagged: Bool
    /// Why it was not estimated, or why it was flagged (for the report).
    public var note: String?
    /// From range differences: what the recording can say about its surveyed position (nil from ranges).
    var positionCheck: SelfCalibrationPositionCheck? = nil
}

/// What a calibration without truth was fitted to.
enum SelfCalibrationMeasurement: String, Sendable, Hashable {
    /// Ranges (`SelfCalibration.estimate`): each bias whole.
    case ranges
    /// Range differences (`DifferenceSelfCalibration.estimate`): only differences of biases.
    case differences
}

/// Each locator's range bias (and scale, and a check of its surveyed position) from the
/// redundancy of the ranges alone, with no known tag position: a bundle adjustment over the
/// recording's epochs (`SelfCalibrationSolver`).
///
/// With more ranges per epoch than position coordinates, the ranges overdetermine the tag; a bias
/// that is wrong leaves residuals whose pattern across epochs the adjustment removes. What the data
/// cannot say is reported, not guessed: a locator heard too rarely keeps its value; the combinations
/// of the biases the recording leaves loose (a common offset of all of them, shared with the tag's own
/// delay, where the geometry does not separate it; one locator's bias; or, with 4 locators in 3-D, a
/// mixture) are held at the site's values and the rest is fitted; a tag path
/// that is nearly a line is said (what it determines, the covariance decides).
///
/// Survey check: for each locator in turn its position correction δᵢ is fitted too (the others
/// hold the frame) and tested on the directions the recording can see, with a covariance from the
/// spread of its time blocks (`surveyTest`: p-value below `surveyAlpha` and
/// |δ| along them ≥ `surveyMinimumEffectMeters`); the most significant flagged locator keeps its δ
/// free along its checkable directions (held at the survey along the others) and the others are
/// checked again, until none is flagged (at most n − 3; `surveyCheck`). Every locator's
/// `positionCheck` says what was checkable ("± x m along (u, v)") or why not, and for a flagged one
/// what was left as surveyed.
///
/// The public `SiteCalibration.FloorReport` of `Locus` is this type (its public fields).
public struct SelfCalibration: Sendable {
    /// The floor calibrated.
    public var floor: FloorID
    /// Per locator, in the floor's order.
    public var locators: [SelfCalibratedLocator]
    /// Whether the recording separates the biases' common offset, and its standard deviation
    /// (+∞ when not determined at all), metres.
    public var commonOffsetSeparable: Bool
    public var commonOffsetSDMeters: Double
    /// RMS of the residuals the final weights keep, metres, and the ranges they reject (NLOS); when
    /// the biases are not calibrated (the first warning says why), those of the site as it stands
    /// (its biases held, the epochs' positions fitted), as are the locators' noise scales.
    public var residualRMSMeters: Double
    public var outlierCount: Int
    /// Epochs used (more ranges than position coordinates), and Gauss–Newton steps taken.
    public var epochs: Int
    var iterations: Int
    /// The tag path's spread across and along its principal direction (1σ), metres.
    var pathSpreadMeters: (minor: Double, major: Double)
    /// The tag's share of the biases c, metres, when ranges between locators were used.
    public var tagDelayMeters: Double?
    /// What the recording could not determine, in words.
    public var warnings: [String]
    /// The settings used.
    var configuration: SelfCalibrationConfiguration
    /// What was fitted: ranges, or range differences (then `differenceCount` rows, the biases'
    /// mean held at the site's: `commonOffsetSeparable` is false).
    var measurement = SelfCalibrationMeasurement.ranges
    var differenceCount = 0

    /// Calibrates `floor`'s locators from `data` (slots index `floor.locators`): from its ranges, or,
    /// when it holds range differences only, from those (`DifferenceSelfCalibration`: only
    /// differences of biases, the mean held at the site's; its warnings say so). A floor with both
    /// is calibrated from its ranges (each sees its bias whole).
    /// - Parameter planar: positions in x, y at the floor's tag height (else x, y, z).
    /// - Throws: `E4001` (tooFewRanges) when fewer than 10 epochs have more ranges than position
    ///   coordinates; `E4002` when LAPACK fails.
    package static func estimate(floor: Floor, data: SelfCalibrationData, planar: Bool,
                                 configuration: SelfCalibrationConfiguration = .standard) throws(LocusError) -> SelfCalibration {
        if data.rangeCount == 0, let differences = data.differences, differences.differenceCount > 0 {
            return try DifferenceSelfCalibration.estimate(floor: floor, data: differences, planar: planar, configuration: configuration)
        }
        let n = floor.locators.count
        var solver = Self.solver(atSiteOf: floor, data: data, planar: planar, configuration: configuration)
        let usable = (0..<data.epochCount).filter(solver.isUsable).count
        guard usable >= 10 else {
            throw LocusError(.tooFewRanges, "\(usable) epochs hold more ranges than the tag has coordinates: at least 10 are needed to calibrate without truth")
        }
        var notes = [String?](repeating: nil, count: n)
        var warnings: [String] = []
        let counts = solver.residualFigures().counts
        for i in 0..<n where counts[i] < configuration.minimumRanges {
            solver.parameters.freeBias[i] = false
            solver.parameters.freeSlope[i] = false
            notes[i] = "heard in \(counts[i]) ranges (fewer than \(configuration.minimumRanges)): its bias is kept"
        }
        if configuration.fitsSlope {
            // The common range scale trades off against the common offset (the ranges of a room are of
            // similar length) and takes up model errors: only the locators' relative scales are fitted,
            // their mean held at the site's.
            let fitted = (0..<n).filter { solver.parameters.freeSlope[$0] }
            solver.parameters.meanSlopePrior = fitted.isEmpty ? nil : fitted.reduce(0.0) { $0 + floor.locators[$1].biasSlope } / Double(fitted.count)
        }
        try Self.solveToConvergence(&solver)

        var refused = false
        /// Locator i keeps the site's bias and scale: no longer free.
        func keep(_ i: Int) {
            solver.parameters.freeBias[i] = false
            solver.parameters.freeSlope[i] = false
            solver.parameters.bias[i] = floor.locators[i].biasMeters
            solver.parameters.slope[i] = floor.locators[i].biasSlope
        }
        /// Whether any locator's bias is still free.
        func anyFree() -> Bool { (0..<n).contains { solver.parameters.freeBias[$0] } }
        /// Nothing can validate the biases: every free locator keeps the site's, with `note`, and
        /// "the biases are not calibrated: `reason`" comes first in the warnings.
        func keepEvery(because reason: String, note: String) {
            warnings.insert("the biases are not calibrated: \(reason)", at: 0)
            refused = true
            for i in 0..<n where solver.parameters.freeBias[i] {
                keep(i)
                notes[i] = "its bias is not calibrated (\(note)): kept"
            }
        }

        // A path along a line (or a tag standing still): the biases are kept. Each epoch still fixes
        // the tag when the locators surround it, and on simulated walks with constant biases the fit
        // comes out right; but a shift of the whole path across the line changes each locator's
        // ranges by nearly one amount, a pattern of biases, told apart only by how the lines of sight
        // turn along the walk — and real range errors that vary along the walk decide it instead.
        // The held-out blocks lie on the same line and cannot say (a real 44 s walk along a line,
        // 4 locators: biases written −0.16 / −0.34 / +0.20 / +0.22 m against the truth's +0.05 /
        // −0.14 / +0.03 / −0.07, the track 0.36 m across the line, 0.1846 → 0.3994 m; the held-out
        // median residual 0.157 → 0.042 m accepted it).
        let spread = solver.pathSpread()
        let still = spread.major < configuration.stillSpreadMeters
        let line = spread.minor < configuration.collinearSpreadMeters && spread.minor < configuration.lineAspectRatio * spread.major
        if still || line, anyFree() {
            let path = still
                ? "the tag barely moved (\(Self.metres(spread.major)) m), where a shift of its place looks like a pattern of biases "
                    + "and blocks held out at the same place cannot tell them apart"
                : "the tag's path is nearly a line (\(Self.metres(spread.minor)) m across, \(Self.metres(spread.major)) m along), "
                    + "where a shift of the whole path across it looks like a pattern of biases and blocks held out on the same "
                    + "line cannot tell them apart"
            keepEvery(because: path + "; walk the tag across the floor or calibrate with --truth",
                      note: still ? "the tag barely moved" : "the tag's path is a line")
        } else if spread.minor < configuration.collinearSpreadMeters {
            warnings.append("the tag path is nearly collinear (\(Self.metres(spread.minor)) m across, \(Self.metres(spread.major)) m along): "
                            + "what is calibrated rests on the locators' spread around it alone; walk across the floor for a sturdier calibration")
        }

        // A fit that rejects most of the ranges has broken down: an M-estimate holds up to half of the
        // data as outliers, beyond that its scales and biases describe the few ranges it kept. A still
        // tag with one anchor of four blocked (Bielefeld blocked-a2-2): 9,455 of 9,496 ranges rejected
        // and a bias of −10.3 m fitted to the blocked anchor.
        let fitted = solver.residualFigures()
        let rangeTotal = fitted.counts.reduce(0, +)
        if rangeTotal > 0, Double(fitted.outliers) > configuration.maximumOutlierShare * Double(rangeTotal), anyFree() {
            let share = Int((100 * Double(fitted.outliers) / Double(rangeTotal)).rounded())
            keepEvery(because: "the robust fit rejected \(share) % of the ranges as outliers (more than "
                          + "\(Int((100 * configuration.maximumOutlierShare).rounded())) %: it has broken down, its biases would describe the few "
                          + "ranges it kept); check the recording for a blocked or faulty locator, or calibrate with --truth",
                      note: "the fit broke down")
        }

        // Poor geometry with nothing to validate against: the biases are kept.
        let geometry = solver.geometryFigures()
        if geometry.redundantShare < 0.5, geometry.medianDilution > configuration.unvalidatedMaximumDilution, anyFree() {
            let dilution = geometry.medianDilution.isFinite ? DecimalText.string(geometry.medianDilution, decimals: 1) : "unbounded"
            let share = Int((geometry.redundantShare * 100).rounded())
            keepEvery(because: "the geometry dilutes range errors by a median \(planar ? "HDOP" : "PDOP") of "
                          + "\(dilution) (above \(DecimalText.string(configuration.unvalidatedMaximumDilution, decimals: 1))), and with \(share) % "
                          + "of the epochs holding two ranges beyond the tag's coordinates nothing can validate them; move the tag "
                          + "among the locators (locus geometry) or calibrate with --truth",
                      note: "poor geometry, nothing to validate against")
        }

        // What the recording determines: the common offset, each locator's own bias, and the
        // combinations of the biases it leaves loose (σ above `observableSDMeters`), which are held
        // at the site's values while the rest is fitted (`looseBiasDirections`). Holding a loose
        // locator's own bias instead let its correlated neighbours absorb its error (4 locators in
        // 3-D, or a common offset held along the mean where the loose combination was another:
        // biases 0.1–0.5 m off and calibrated sites up to 1.5 times worse than as surveyed).
        var uncertainty = try solver.uncertainty()
        let free = (0..<n).filter { solver.parameters.freeBias[$0] }
        var commonSD = uncertainty.standardDeviation(free.map { (.bias($0), 1 / Double(free.count)) })
        let separable = !free.isEmpty && commonSD <= configuration.commonOffsetSDMeters
        if !separable, !free.isEmpty {
            let siteMean = free.reduce(0.0) { $0 + floor.locators[$1].biasMeters } / Double(free.count)
            warnings.append("the common offset of the biases is not separable from this recording (σ "
                            + (commonSD.isFinite ? "\(Self.metres(commonSD)) m" : "unbounded")
                            + "): the biases are relative, their common part held at the site's (mean \(Self.metres(siteMean)) m)")
        }
        var ownSD = [Double](repeating: 0, count: n)
        for i in free { ownSD[i] = uncertainty.standardDeviation([(.bias(i), 1)]) }
        let held = try solver.looseBiasDirections(maximumSD: configuration.observableSDMeters, reference: floor.locators.map(\.biasMeters))
        if !held.isEmpty {
            solver.parameters.heldBiasDirections = held
            try Self.solveToConvergence(&solver)
        }
        // A locator whose own bias is loose: kept when the determined combinations did not move it
        // (by 1 mm), else written as they moved it and said to be partly determined.
        var partly = [Bool](repeating: false, count: n)
        for i in free where ownSD[i] > configuration.observableSDMeters {
            let moved = solver.parameters.bias[i] - floor.locators[i].biasMeters
            let sdText = ownSD[i].isFinite ? "\(Self.metres(ownSD[i])) m" : "unbounded"
            if abs(moved) < 0.001 {
                keep(i)
                notes[i] = "its bias is not determined by this recording (σ \(sdText)): kept"
            } else {
                partly[i] = true
                notes[i] = "its bias alone is not determined by this recording (σ \(sdText)): moved by \(Self.metres(moved)) m "
                    + "with the combinations of the biases it determines, the rest held at the site's"
            }
        }
        uncertainty = try solver.uncertainty()

        // Survey check: each observable locator's position correction in turn, judged by the block
        // test on its checkable directions (`surveyCheck`); the most significant flagged one keeps its
        // correction (along its checkable directions) and the others are checked again.
        var offsets = [Vector3?](repeating: nil, count: n), offsetSDs = [Double?](repeating: nil, count: n)
        var checks = [SelfCalibrationPositionCheck?](repeating: nil, count: n)
        var flagged = [Bool](repeating: false, count: n)
        let surveyed = solver
        if configuration.checksSurvey {
            let outcome = try Self.surveyCheck(&solver, floor: floor, planar: planar, maximumFlagged: max(0, n - 3), notes: &notes)
            (checks, offsets, offsetSDs, flagged) = (outcome.checks, outcome.offsets, outcome.offsetSDs, outcome.flagged)
            for k in 0..<n where !solver.parameters.freeBias[k] && counts[k] > 0 {
                checks[k] = SelfCalibrationPositionCheck(directions: [], sdMeters: [], thresholdMeters: configuration.surveyCheckableSDMeters)
            }
            for k in 0..<n where !flagged[k] {
                if let c = checks[k], !c.checkable, notes[k] == nil { notes[k] = "its surveyed position is \(c.summary)" }
            }
            uncertainty = try solver.uncertainty()
            // The biases for the positions as surveyed, unless the corrections are to be written.
            if !configuration.fixesPositions {
                solver = surveyed
                uncertainty = try solver.uncertainty()
            }
        }

        let free2 = (0..<n).filter { solver.parameters.freeBias[$0] }
        commonSD = free2.isEmpty ? .infinity : uncertainty.standardDeviation(free2.map { (.bias($0), 1 / Double(free2.count)) })
        // Refused, the fit's figures describe nothing written, and on a still tag nothing at all (its
        // position trades against the biases: Bielefeld blocked-a1 fitted biases of −5 to +6 m and
        // read "residual RMS 0.0000 m, 9,628 ranges rejected"): the site's own, as it stands.
        let reported = refused ? try Self.siteAsItStands(floor: floor, data: data, planar: planar, configuration: configuration) : solver
        let figures = reported.residualFigures()
        let locators = (0..<n).map { i -> SelfCalibratedLocator in
            let estimated = solver.parameters.freeBias[i]
            return SelfCalibratedLocator(
                address: floor.locators[i].address, rangeCount: figures.counts[i],
                biasMeters: estimated ? solver.parameters.bias[i] : nil,
                biasSDMeters: estimated ? uncertainty.standardDeviation([(.bias(i), 1)]) : nil,
                slope: estimated && configuration.fitsSlope ? solver.parameters.slope[i] : nil,
                slopeSD: estimated && configuration.fitsSlope ? uncertainty.standardDeviation([(.slope(i), 1)]) : nil,
                noiseMeters: figures.counts[i] > 0 ? reported.sigma[i] : nil, isObservable: estimated && !partly[i],
                positionOffset: offsets[i], positionOffsetSDMeters: offsetSDs[i], isFlagged: flagged[i], note: notes[i],
                positionCheck: checks[i])
        }
        return SelfCalibration(floor: floor.id, locators: locators, commonOffsetSeparable: separable, commonOffsetSDMeters: commonSD,
                               residualRMSMeters: figures.rms, outlierCount: figures.outliers, epochs: usable,
                               iterations: reported.iterations, pathSpreadMeters: spread,
                               tagDelayMeters: data.pairs.isEmpty ? nil : solver.parameters.tagDelay, warnings: warnings, configuration: configuration)
    }

    /// The adjustment of `data` starting at `floor`'s surveyed positions, biases and scales (every bias
    /// free, the epochs' positions from a per-epoch fit).
    static func solver(atSiteOf floor: Floor, data: SelfCalibrationData, planar: Bool,
                       configuration: SelfCalibrationConfiguration) -> SelfCalibrationSolver {
        var solver = SelfCalibrationSolver(data: data, anchors: floor.locators.map(\.position), planar: planar,
                                           tagHeight: floor.tagHeightMeters, initialBias: floor.locators.map(\.biasMeters),
                                           configuration: configuration)
        solver.parameters.slope = floor.locators.map(\.biasSlope)
        return solver
    }

    /// The site as it stands on this recording: every bias, scale and the tag delay held at the
    /// site's, the epochs' positions and the locators' noise scales fitted (the report of a
    /// calibration that was refused).
    /// - Throws: `E4002` when LAPACK fails.
    static func siteAsItStands(floor: Floor, data: SelfCalibrationData, planar: Bool,
                               configuration: SelfCalibrationConfiguration) throws(LocusError) -> SelfCalibrationSolver {
        var site = solver(atSiteOf: floor, data: data, planar: planar, configuration: configuration)
        site.parameters.freeBias = site.parameters.freeBias.map { _ in false }
        site.parameters.freeSlope = site.parameters.freeSlope.map { _ in false }
        site.parameters.freeTagDelay = false
        try site.solve(limit: configuration.maximumIterations)
        return site
    }

    /// Solves the adjustment. One that is still moving a tag position (or a parameter) by more than
    /// `divergenceMeters` in its last step is diverging, not converging slowly, and is no calibration:
    /// on the Hanyang outdoor runs (4 locators in 3-D, NLOS) the epochs' positions still jumped by
    /// 4–2,500 m after 40 steps and the report read "noise 284 m", or all four biases −0.3 m that made
    /// the run 65 % worse; on every simulated recording of the tests the last step moves positions by
    /// at most 0.33 m (a weakly determined direction settling slowly). So it is an error, not a report.
    /// Ranges and range differences (`DifferenceSelfCalibration`) alike.
    /// - Throws: `E4004` (solverDiverged) when it diverges; `E4002` when LAPACK fails.
    static func solveToConvergence<S: SurveyCheckable>(_ solver: inout S) throws(LocusError) {
        try solver.solve(limit: solver.configuration.maximumIterations)
        // A converged solve's last step is far below the limit (convergenceMeters), so the last step decides alone.
        let move = solver.lastMove, limit = solver.configuration.divergenceMeters
        guard move.parameters <= limit && move.positions <= limit else {
            throw LocusError(.solverDiverged, "the bundle adjustment diverges (after \(solver.configuration.maximumIterations) steps it still moves "
                             + "the tag by \(Self.metres(move.positions)) m and a locator parameter by \(Self.metres(move.parameters)) a step): "
                             + "this recording does not determine the locators' biases (too few of its ranges or differences over-determine each epoch's "
                             + "tag position, or too many are outliers); nothing is calibrated")
        }
    }

    /// `floor` with the estimated biases (and slopes) written; with `fixesPositions` (configuration),
    /// the flagged locators moved to their fitted positions (along their checkable directions). Locators not estimated keep their values.
    package func applied(to floor: Floor) -> Floor {
        let fixPositions = configuration.fixesPositions
        var out = floor
        for (i, l) in locators.enumerated() where i < out.locators.count {
            if let b = l.biasMeters { out.locators[i].biasMeters = b }
            if let s = l.slope { out.locators[i].biasSlope = s }
            if fixPositions, l.isFlagged, let d = l.positionOffset {
                let p = out.locators[i].position
                out.locators[i].position = Point3(x: p.x + d.x, y: p.y + d.y, z: p.z + d.z)
            }
        }
        return out
    }

    /// Metres with 3 decimals.
    static func metres(_ value: Double) -> String {
        let scaled = (value * 1000).rounded()
        let sign = scaled < 0 ? "-" : ""
        let m = Int(abs(scaled))
        let frac = m % 1000
        return "\(sign)\(m / 1000).\(frac < 10 ? "00" : frac < 100 ? "0" : "")\(frac)"
    }
}
