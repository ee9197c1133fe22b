import LocusCore

/// `locus help`: the option tables in other forms — a command's `--help` text, man pages, and bash
/// and zsh completion scripts — so that what scripts/install puts in `share/` is generated from the
/// same tables that parse the arguments and cannot drift from them.
enum HelpCommand: LocusCommand {
    static let spec = CommandSpec(
        name: "help",
        summary: "Print the help of the tool or a command, as text, a man page or a shell completion script.",
        options: [
            .value("format", "KIND", "text (--help, default), man (roff for man -l), bash or zsh (completion scripts for every command), or names (the commands, one a line).",
                   choices: Format.allCases.map(\.rawValue)),
            .value("command", "NAME", "The command to describe (text and man); without it, the tool as a whole.",
                   choices: documentedNames),
        ],
        discussion: """
        locus help alone is locus --help. Man pages: locus help --format man > locus.1, and
        locus help --format man --command replay > locus-replay.1. Completions:
        locus help --format bash > /usr/share/bash-completion/completions/locus and
        locus help --format zsh > /usr/local/share/zsh/site-functions/_locus (scripts/install does both).
        Exit codes: 0 success, 2 usage error or invalid input.
        """)

    /// What `--format` can ask for.
    enum Format: String, CaseIterable, Sendable {
        case text, man, bash, zsh, names
    }

    /// The names `--command` accepts: every subcommand, this one included (its own spec is not
    /// consulted here: it is being built).
    private static var documentedNames: [String] {
        LocusTool.commands.compactMap { $0 == HelpCommand.self ? nil : $0.spec.name } + ["help"]
    }

    static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32 {
        let format = Format(rawValue: arguments.string("format") ?? "text") ?? .text
        let command = arguments.string("command").flatMap { name in LocusTool.commands.first { $0.spec.name == name } }
        if command != nil, ![.text, .man].contains(format) {
            throw LocusError(.usage, "--command goes with --format text or man only (see: locus help --help)")
        }
        console.out(output(format, command: command?.spec))
        return 0
    }

    /// The text `--format` asks for, of one command's spec or (nil) of the whole tool.
    static func output(_ format: Format, command: CommandSpec?) -> String {
        let specs = LocusTool.commands.map { $0.spec }
        let version = "\(LocusVersion.string)"
        switch format {
        case .text: return command?.helpText ?? LocusTool.overview
        case .man: return command.map { ManPage.command($0, version: version) } ?? ManPage.tool(specs, version: version)
        case .bash: return BashCompletion.script(specs)
        case .zsh: return ZshCompletion.script(specs)
        case .names: return specs.map { $0.name + "\n" }.joined()
        }
    }
}
