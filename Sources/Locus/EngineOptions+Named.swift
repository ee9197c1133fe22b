import LocusCore
import LocusSolvers

extension EngineOptions {
    /// The options as a face names them (`locus replay`'s and `locus stream`'s `--rate`, `--sigma`,
    /// `--filter`, `--coupling`, `--mode`, `--tag-offset`, `--locator-bias`, `--floor`; `smooth` for
    /// `--smooth`), read in that order: `value(name)` is an option's text (nil: absent, the default
    /// kept); `number(name, default, range)` reads a number and checks it is in `range`
    /// (`rateRange`, `sigmaRange`), in the face's own words. A choice that is none of the known
    /// spellings keeps the default (the faces offer only those).
    /// - Throws: what `number` throws.
    package init(value: (String) -> String?, number: (String, Double, ClosedRange<Double>) throws(LocusError) -> Double,
                 smooth: Bool) throws(LocusError) {
        let defaults = EngineOptions()
        let rateHertz = try number("rate", defaults.rateHertz, Self.rateRange)
        let sigmaMeters = try number("sigma", defaults.sigmaMeters, Self.sigmaRange)
        let mode: TrilaterationMode
        switch value("mode") ?? "auto" {
        case "planar": mode = .planar
        case "spatial": mode = .spatial
        default: mode = .automatic
        }
        self.init(rateHertz: rateHertz, sigmaMeters: sigmaMeters,
                  filter: value("filter").flatMap(Filter.init(rawValue:)) ?? defaults.filter,
                  coupling: value("coupling") == "loose" ? .loose : .tight, mode: mode,
                  tagOffset: value("tag-offset").flatMap(TagOffset.init(rawValue:)) ?? defaults.tagOffset,
                  locatorBias: value("locator-bias").flatMap(LocatorBias.init(rawValue:)) ?? defaults.locatorBias,
                  defaultFloor: value("floor").map { FloorID($0) }, smooth: smooth)
    }
}
