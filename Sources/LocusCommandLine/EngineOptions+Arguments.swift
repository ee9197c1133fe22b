import Locus
import LocusCore

extension EngineOptions {
    /// The engine's options on the command line, as `locus replay` and `locus stream` list them
    /// (`--smooth`, offline only, is replay's own).
    static let optionSpecs: [OptionSpec] = [
        .value("floor", "ID", "Floor for rows without a floor column (default: the site's first floor)."),
        .value("rate", "HZ", "Output rate per tag, Hz (default 4)."),
        .value("filter", "KIND", "none: raw per-epoch least-squares fixes; kalman: the causal filter (default).",
               choices: ["none", "kalman"]),
        .value("coupling", "KIND", "How the filter uses ranges: tight (each range an update, default) or loose (each epoch's least-squares fix).",
               choices: ["tight", "loose"]),
        .value("mode", "MODE", "Solver mode (default auto: planar when the locators are near-coplanar in height).",
               choices: ["auto", "planar", "spatial"]),
        .value("sigma", "METRES", "Range noise σ assumed by the solver, metres (default 0.1)."),
        .value("tag-offset", "WHEN", "Estimate and remove a per-tag common range offset online: auto (on planar floors without biasM, default), on, off.",
               choices: ["auto", "on", "off"]),
        .value("locator-bias", "WHEN", "Estimate and remove per-tag, per-locator range biases online: auto (wherever the tag offset is estimated, on floors of 6 or more locators; and, with the default filter, on floors solved in 3-D without biasM with 4–16 locators; default), off.",
               choices: ["auto", "off"]),
    ]

    /// The engine options of `locus replay` (`--rate`, `--sigma`, `--filter`, `--coupling`, `--mode`,
    /// `--tag-offset`, `--locator-bias`, `--floor`, `--smooth`), read by Locus's
    /// `EngineOptions.init(value:number:smooth:)`; absent options keep their defaults.
    /// - Throws: E1001 for a value that is not a number or is out of range.
    init(_ arguments: ParsedArguments) throws(LocusError) {
        try self.init(value: arguments.string,
                      number: { (name: String, value: Double, range: ClosedRange<Double>) throws(LocusError) in
                          try arguments.double(name, default: value, in: range)
                      },
                      smooth: arguments.flag("smooth"))
    }
}
