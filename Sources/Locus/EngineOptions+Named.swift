import LocusCore

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
        self.init()
        rateHertz = try number("rate", rateHertz, Self.rateRange)
        sigmaMeters = try number("sigma", sigmaMeters, Self.sigmaRange)
        if let text = value("filter"), let choice = Filter(rawValue: text) { filter = choice }
        coupling = value("coupling") == "loose" ? .loose : .tight
        switch value("mode") ?? "auto" {
        case "planar": mode = .planar
        case "spatial": mode = .spatial
        default: mode = .automatic
        }
        if let text = value("tag-offset"), let choice = TagOffset(rawValue: text) { tagOffset = choice }
        if let text = value("locator-bias"), let choice = LocatorBias(rawValue: text) { locatorBias = choice }
        defaultFloor = value("floor").map { FloorID($0) }
        self.smooth = smooth
    }
}
