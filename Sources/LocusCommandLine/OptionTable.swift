import LocusCore

/// One option of a subcommand: the single table row that drives both parsing and `--help`.
struct OptionSpec: Sendable {
    enum Kind: Sendable {
        /// `--name` alone.
        case flag
        /// `--name VALUE` or `--name=VALUE`.
        case value(placeholder: String)
    }
    var name: String
    var kind: Kind
    var help: String
    var isRequired: Bool
    /// When non-empty, the only values accepted.
    var choices: [String]

    static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, kind: .flag, help: help, isRequired: false, choices: [])
    }
    static func value(_ name: String, _ placeholder: String, _ help: String, required: Bool = false,
                              choices: [String] = []) -> OptionSpec {
        OptionSpec(name: name, kind: .value(placeholder: placeholder), help: help, isRequired: required, choices: choices)
    }
}

/// A subcommand's name, summary and option table.
struct CommandSpec: Sendable {
    var name: String
    var summary: String
    var options: [OptionSpec]
    /// Extra paragraphs for `--help` (examples, notes).
    var discussion: String

    init(name: String, summary: String, options: [OptionSpec], discussion: String = "") {
        self.name = name
        self.summary = summary
        self.options = options + [.flag("help", "Show this help.")]
        self.discussion = discussion
    }

    /// The `--help` text, generated from the table.
    var helpText: String {
        var usage = "usage: locus \(name)"
        for o in options where o.name != "help" {
            var part = "--\(o.name)"
            if case .value(let placeholder) = o.kind { part += " \(placeholder)" }
            usage += " " + (o.isRequired ? part : "[\(part)]")
        }
        var text = "\(summary)\n\n\(usage)\n\noptions:\n"
        let labels = options.map { o -> String in
            if case .value(let placeholder) = o.kind { return "--\(o.name) \(placeholder)" }
            return "--\(o.name)"
        }
        let width = (labels.map(\.count).max() ?? 0) + 2
        for (o, label) in zip(options, labels) {
            var help = o.help
            if !o.choices.isEmpty { help += " One of: \(o.choices.joined(separator: ", "))." }
            if o.isRequired { help += " Required." }
            text += "  " + label + String(repeating: " ", count: max(1, width - label.count)) + help + "\n"
        }
        if !discussion.isEmpty { text += "\n" + discussion + "\n" }
        return text
    }

    /// Parses `arguments` (after the subcommand name) against the table: a pure function.
    /// - Throws: `E1001` naming the option: unknown, repeated, missing value, value not among the
    ///   choices, stray positional argument, or a required option missing (unless `--help`).
    func parse(_ arguments: [String]) throws(LocusError) -> ParsedArguments {
        var values: [String: String] = [:]
        var flags: Set<String> = []
        var i = 0
        func usage(_ message: String) -> LocusError {
            LocusError(.usage, message + " (see: locus \(name) --help)")
        }
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            if argument == "-h" { flags.insert("help"); continue }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw usage("unexpected argument '\(argument)'")
            }
            var body = String(argument.dropFirst(2))
            var inlineValue: String? = nil
            if let eq = body.firstIndex(of: "=") {
                inlineValue = String(body[body.index(after: eq)...])
                body = String(body[..<eq])
            }
            guard let spec = options.first(where: { $0.name == body }) else {
                throw usage("unknown option '--\(body)'")
            }
            if values[body] != nil || flags.contains(body) {
                throw usage("option '--\(body)' given more than once")
            }
            switch spec.kind {
            case .flag:
                if inlineValue != nil { throw usage("option '--\(body)' takes no value") }
                flags.insert(body)
            case .value(let placeholder):
                var value: String
                if let v = inlineValue { value = v } else {
                    guard i < arguments.count, !(arguments[i].hasPrefix("--") && arguments[i].count > 2) else {
                        throw usage("option '--\(body)' needs a value \(placeholder)")
                    }
                    value = arguments[i]
                    i += 1
                }
                if !spec.choices.isEmpty && !spec.choices.contains(value) {
                    throw usage("option '--\(body)' must be one of \(spec.choices.joined(separator: ", ")), not '\(value)'")
                }
                if value.isEmpty { throw usage("option '--\(body)' needs a non-empty value") }
                values[body] = value
            }
        }
        if !flags.contains("help") {
            for o in options where o.isRequired && values[o.name] == nil {
                throw usage("missing required option '--\(o.name)'")
            }
        }
        return ParsedArguments(command: name, values: values, flags: flags)
    }
}

/// The result of parsing: values by option name, and the flags given.
struct ParsedArguments: Sendable, Equatable {
    var command: String
    var values: [String: String]
    var flags: Set<String>

    func flag(_ name: String) -> Bool { flags.contains(name) }
    func string(_ name: String) -> String? { values[name] }

    /// The option's value as a number, or `defaultValue` when absent.
    /// - Throws: `E1001` when present but not a finite number within `range`.
    func double(_ name: String, default defaultValue: Double, in range: ClosedRange<Double> = -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude) throws(LocusError) -> Double {
        guard let text = values[name] else { return defaultValue }
        guard let v = Double(text), v.isFinite, range.contains(v) else {
            throw LocusError(.usage, "option '--\(name)' needs a number in \(range.lowerBound)…\(range.upperBound), not '\(text)' (see: locus \(command) --help)")
        }
        return v
    }

    /// The option's value as a whole number, or `defaultValue` when absent.
    /// - Throws: `E1001` when present but not an integer within `range`.
    func integer(_ name: String, default defaultValue: Int, in range: ClosedRange<Int> = Int.min...Int.max) throws(LocusError) -> Int {
        guard let text = values[name] else { return defaultValue }
        guard let v = Int(text), range.contains(v) else {
            throw LocusError(.usage, "option '--\(name)' needs a whole number in \(range.lowerBound)…\(range.upperBound), not '\(text)' (see: locus \(command) --help)")
        }
        return v
    }
}
