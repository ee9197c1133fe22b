@testable import LocusCommandLine
import Testing

@Suite("locus help: man pages and completions from the option tables")
struct HelpFormatsTests {
    @Test("a command's man page has every option of its table, its value name and its help")
    func manPageHasEveryOption() {
        for command in LocusTool.commands {
            let spec = command.spec
            let page = ManPage.command(spec, version: "0.0.0")
            #expect(page.contains(".TH LOCUS\\-\(ManPage.escape(spec.name.uppercased())) 1"))
            for option in spec.options {
                #expect(page.contains("\\fB\\-\\-\(ManPage.escape(option.name))\\fR"), "\(spec.name): --\(option.name) missing")
                if let placeholder = option.placeholder {
                    #expect(page.contains("\\fI\(ManPage.escape(placeholder))\\fR"), "\(spec.name): \(placeholder) missing")
                }
                #expect(page.contains(ManPage.escape(option.help)), "\(spec.name): help of --\(option.name) missing")
            }
        }
        let replay = CapturedRun(["help", "--format", "man", "--command", "replay"])
        #expect(replay.status == 0 && replay.out.contains("\\-\\-truth\\-shift"))
        let tool = CapturedRun(["help", "--format", "man"]).out
        for command in LocusTool.commands { #expect(tool.contains("\\fBlocus\\-\(command.spec.name)\\fR(1)")) }
    }

    @Test("no line of a man page starts with a roff control character it does not mean")
    func manPageLinesAreSafe() {
        for command in LocusTool.commands {
            for line in ManPage.command(command.spec, version: "1").split(separator: "\n") where line.hasPrefix(".") || line.hasPrefix("'") {
                let request = line.dropFirst().prefix { $0 != " " }
                #expect(["TH", "SH", "TP", "PP", "B", "br", "nf", "fi", "nh", "ad", "\\\""].contains(String(request)), "\(command.spec.name): \(line)")
            }
        }
    }

    @Test("the bash completion lists every subcommand and every option, with choices and file names")
    func bashListsEverything() {
        let script = CapturedRun(["help", "--format", "bash"]).out
        #expect(script.contains("complete -F _locus locus"))
        let names = LocusTool.commands.map { $0.spec.name }
        #expect(script.contains("compgen -W \"\(names.joined(separator: " ")) --help --version\""))
        for command in LocusTool.commands {
            #expect(script.contains("        \(command.spec.name))\n"))
            for option in command.spec.options { #expect(script.contains("--\(option.name)"), "--\(option.name)") }
        }
        #expect(script.contains("compgen -W \"none kalman\""))
        #expect(script.contains("--site|--trace|--truth|--report|--positions|--events)"))
    }

    @Test("the zsh completion describes every subcommand and every option")
    func zshListsEverything() {
        let script = HelpCommand.output(.zsh, command: nil)
        #expect(script.hasPrefix("#compdef locus\n"))
        for command in LocusTool.commands {
            #expect(script.contains("    '\(command.spec.name):"))
            #expect(script.contains("    \(command.spec.name))\n      _arguments"))
            for option in command.spec.options { #expect(script.contains("'--\(option.name)"), "--\(option.name)") }
        }
        #expect(script.contains("'--site=[Site JSON (SPEC §1).]:SITE:_files'"))
        #expect(script.contains(":KIND:(none kalman)'"))
    }

    @Test("every value placeholder is classified: a path, or a number, a name or a choice")
    func placeholdersClassified() {
        for command in LocusTool.commands {
            for option in command.spec.options {
                guard let placeholder = option.placeholder else { continue }
                let known = OptionSpec.pathPlaceholders.contains(placeholder) || placeholder.contains(".")
                    || OptionSpec.plainPlaceholders.contains(placeholder)
                #expect(known, "\(command.spec.name) --\(option.name): placeholder \(placeholder) is neither a path nor plain")
            }
        }
        #expect(ReplayCommand.spec.options.first { $0.name == "site" }?.takesPath == true)
        #expect(ReplayCommand.spec.options.first { $0.name == "rate" }?.takesPath == false)
        #expect(ReplayCommand.spec.options.first { $0.name == "filter" }?.takesPath == false)
    }

    @Test("locus help alone is the overview; --command goes with text and man only")
    func helpDispatch() {
        #expect(CapturedRun(["help"]).out == CapturedRun(["--help"]).out)
        #expect(CapturedRun(["help", "--command", "zones"]).out == CapturedRun(["zones", "--help"]).out)
        let names = CapturedRun(["help", "--format", "names"]).out
        #expect(names == LocusTool.commands.map { $0.spec.name + "\n" }.joined())
        let mixed = CapturedRun(["help", "--format", "bash", "--command", "replay"])
        #expect(mixed.status == 2 && mixed.err.contains("--command"))
    }
}
