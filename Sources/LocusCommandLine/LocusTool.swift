import LocusCore
import LocusNumerics

/// The `locus` command: dispatches to a subcommand and maps errors to exit codes (SPEC §5):
/// 0 success, 1 the work failed at run time, 2 usage error or invalid input.
package enum LocusTool {
    /// Every subcommand, in the order `locus --help` lists them.
    static let commands: [any LocusCommand.Type] = [
        ReplayCommand.self,
        StreamCommand.self,
        ServeCommand.self,
        ZonesCommand.self,
        SimulateCommand.self,
        CalibrateCommand.self,
        LintCommand.self,
        GeometryCommand.self,
        HelpCommand.self,
    ]

    static var overview: String {
        var text = """
        locus — UWB ranges to positions and zone events.

        usage: locus <command> [options]     (locus <command> --help for its options)
        exit codes: 0 success, 1 the work failed at run time, 2 usage error or invalid input

        commands:

        """
        let width = (commands.map { $0.spec.name.count }.max() ?? 0) + 2
        for c in commands {
            text += "  " + c.spec.name + String(repeating: " ", count: width - c.spec.name.count) + c.spec.summary + "\n"
        }
        return text
    }

    /// The process-wide settings of `locus`, made once before the first command runs: OpenBLAS on one
    /// thread (its LAPACKE problems are small; `LapackThreads`).
    private static let processConfigured: Bool = {
        LapackThreads.useOneThreadUnlessConfigured()
        return true
    }()

    /// Runs `locus` with `arguments` (without the program name) and returns the exit code.
    package static func run(_ arguments: [String], console: Console) -> Int32 {
        _ = processConfigured
        // `locus help` alone is the overview; with options it is `HelpCommand` (man pages, completions).
        guard let name = arguments.first, name != "--help", name != "-h", name != "help" || arguments.count > 1 else {
            console.out(overview)
            return arguments.isEmpty ? 2 : 0
        }
        if name == "--version" { console.out("locus \(LocusVersion.string)\n"); return 0 }
        guard let command = commands.first(where: { $0.spec.name == name }) else {
            console.err("locus: unknown command '\(name)'\n\n" + overview)
            return 2
        }
        do {
            let parsed = try command.spec.parse(Array(arguments.dropFirst()))
            if parsed.flag("help") {
                console.out(command.spec.helpText)
                return 0
            }
            return try command.run(parsed, console: console)
        } catch {
            console.err("locus \(name): error: \(error)\n")
            return exitCode(for: error.code)
        }
    }

    /// 2 for usage errors and invalid input (site, trace, arguments), 1 for failures at run time
    /// (`LocusErrorCode.isRunTimeFailure`).
    static func exitCode(for code: LocusErrorCode) -> Int32 {
        code.isRunTimeFailure ? 1 : 2
    }
}

/// A subcommand: its option table and what it does.
protocol LocusCommand: Sendable {
    static var spec: CommandSpec { get }
    /// Runs with parsed arguments; returns the exit code.
    /// - Throws: a `LocusError`, mapped to the exit code by `LocusTool.exitCode(for:)`.
    static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32
}

