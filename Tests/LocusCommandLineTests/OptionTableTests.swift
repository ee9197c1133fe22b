@testable import LocusCommandLine
import LocusCore
import Testing

@Suite("Option table")
struct OptionTableTests {
    let spec = CommandSpec(name: "demo", summary: "A demo.", options: [
        .value("site", "SITE", "Site.", required: true),
        .value("rate", "HZ", "Rate."),
        .value("filter", "KIND", "Filter.", choices: ["none", "kalman"]),
        .flag("json", "JSON."),
    ])

    @Test("--name value and --name=value both work, flags stand alone")
    func forms() throws {
        let a = try spec.parse(["--site", "s.json", "--rate=2.5", "--json"])
        #expect(a.string("site") == "s.json")
        #expect(try a.double("rate", default: 4) == 2.5)
        #expect(a.flag("json"))
        #expect(!a.flag("help"))
    }

    @Test("unknown, repeated, valueless and out-of-choice options are usage errors naming the option",
          arguments: [
              (["--site", "a", "--bogus"], "'--bogus'"),
              (["--site", "a", "--site", "b"], "'--site' given more than once"),
              (["--site"], "'--site' needs a value"),
              (["--site", "a", "--filter", "ekf"], "'--filter' must be one of none, kalman"),
              (["--site", "a", "stray"], "'stray'"),
              (["--rate", "2"], "missing required option '--site'"),
              (["--site", "a", "--json=yes"], "'--json' takes no value"),
          ])
    func rejected(_ arguments: [String], _ fragment: String) {
        do {
            _ = try spec.parse(arguments)
            Issue.record("expected a usage error for \(arguments)")
        } catch {
            #expect(error.code == .usage)
            #expect(error.message.contains(fragment), "\(error.message)")
        }
    }

    @Test("a number option rejects non-numbers and values out of range")
    func numbers() throws {
        let a = try spec.parse(["--site", "a", "--rate", "fast"])
        #expect(throws: LocusError.self) { try a.double("rate", default: 4) }
        let b = try spec.parse(["--site", "a", "--rate", "-1"])
        #expect(throws: LocusError.self) { try b.double("rate", default: 4, in: 0.001...1000) }
    }

    @Test("help is generated from the same table and --help needs no required option")
    func help() throws {
        let a = try spec.parse(["--help"])
        #expect(a.flag("help"))
        let text = spec.helpText
        #expect(text.contains("usage: locus demo --site SITE [--rate HZ] [--filter KIND] [--json]"))
        #expect(text.contains("One of: none, kalman."))
    }
}
