import Locus
import LocusCore
import LocusSolvers

extension EngineOptions {
    /// The engine options of `locus replay` (`--rate`, `--sigma`, `--filter`, `--coupling`, `--mode`,
    /// `--tag-offset`, `--floor`, `--smooth`); absent options keep their defaults.
    /// - Throws: E1001 for a value that is not a number, E1003 for one out of range.
    init(_ arguments: ParsedArguments) throws(LocusError) {
        self.init()
        rateHertz = try arguments.double("rate", default: rateHertz, in: Self.rateRange)
        sigmaMeters = try arguments.double("sigma", default: sigmaMeters, in: Self.sigmaRange)
        if let text = arguments.string("filter"), let value = Filter(rawValue: text) { filter = value }
        coupling = arguments.string("coupling") == "loose" ? .loose : .tight
        switch arguments.string("mode") ?? "auto" {
        case "planar": mode = .planar
        case "spatial": mode = .spatial
        default: mode = .automatic
        }
        if let text = arguments.string("tag-offset"), let value = TagOffset(rawValue: text) { tagOffset = value }
        defaultFloor = arguments.string("floor").map { FloorID($0) }
        smooth = arguments.flag("smooth")
    }
}
