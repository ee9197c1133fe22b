/// Which option values are file paths: what the shell completions offer file names for.
extension OptionSpec {
    /// Placeholders that name a file to read or write (`OUT.csv` and the like are recognised by
    /// their extension). Every value placeholder of the tool is either here, has an extension, or
    /// is a number, a name or a choice (OptionTableTests checks that none is unclassified).
    static let pathPlaceholders: Set<String> = ["SITE", "SITE_OUT", "TRACE", "TRUTH", "POSITIONS"]

    /// Placeholders of values that are not paths: numbers, identifiers and choices.
    static let plainPlaceholders: Set<String> = [
        "ADDR", "HZ", "ID", "KIND", "M", "METRES", "MODE", "MS", "N", "NAME", "P", "PATH", "S", "SECONDS", "SECONDS|auto",
        "SIGMA_M", "SOURCE", "URI", "FORMAT", "WHEN", "X", "HOST:PORT", "MB", "LO:HI",
    ]

    /// True when the option takes a value that is a file path (and has no fixed choices).
    var takesPath: Bool {
        guard case .value(let placeholder) = kind, choices.isEmpty else { return false }
        return Self.pathPlaceholders.contains(placeholder) || placeholder.contains(".")
    }

    /// The value placeholder, or nil for a flag.
    var placeholder: String? {
        if case .value(let placeholder) = kind { return placeholder }
        return nil
    }
}
