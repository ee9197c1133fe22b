import Locus
import LocusCore
import LocusIO

/// `locus lint`: errors and warnings for a site file (SPEC §5).
///
/// Errors are what makes the file invalid input: every one of them (`SiteDecoder.validate`), each
/// with file, line, column and JSON path; exit 2. Warnings, checked once the file is valid, are
/// legal configurations that will not behave as intended (`SiteLint`): floors that cannot position
/// or lack a UWB session id, locator layouts that are clustered, collinear (planar) or coplanar
/// (3-D), locators outside the floor, zone rules that can never enter or flicker, zones outside the
/// floor, beyond every locator's range or partly outside positioning coverage. The command only
/// reads and prints; the checks are `SiteDecoder.validate` and `SiteLint.warnings`.
enum LintCommand: LocusCommand {
    static let spec = CommandSpec(
        name: "lint",
        summary: "Check a site file: errors (invalid input) and warnings (legal but likely wrong).",
        options: [
            .value("site", "SITE", "Site JSON (SPEC §1).", required: true),
            .value("rate", "HZ", "Position rate the zone rules are judged against (default 4).", required: false),
            .flag("json", "Print {\"errors\": [...], \"warnings\": [...]} as one JSON object."),
        ],
        discussion: """
        Errors: every problem of the file, not just the first, one per line as
        'error: FILE:LINE:COLUMN: JSON.PATH: message [E31xx]' (a file that is not JSON has its one
        parse error, E5002). Warnings are checked once there are no errors, one per line as
        'FILE: JSON.PATH: warning: KEY: message'. Keys (ranges 30 m, as locus geometry):
          floor.tooFewLocators        fewer than 3 locators
          floor.noSessionId           no sessionId (positioningReady false)
          floor.locatorsClustered     every two locators closer than 0.5 m (horizontally)
          floor.locatorsCollinear     all in a strip along a line < 10 % of the floor across it
          floor.locatorsCoplanar      (spatial) all in a slab < 10 % of the layout's size
          locator.outsideFloor        outside originX..originX+widthM x originY..originY+heightM
          zone.inCount.zero, zone.inCountInterval.tooShort, zone.outPeriod.tooShort  (vs --rate)
          zone.outsideFloor, zone.partlyOutsideFloor   all / some vertices outside the floor
          zone.noLocatorCoverage      fewer than 3 locators within range of the zone
          zone.beyondRange            every locator out of range of the whole zone
          zone.outsideCoverage        a vertex or the centroid with fewer than 3 (spatial 4)
                                      locators in range, or a degenerate geometry there
        --json prints {"errors": [{code, message, file, line, column, path}, ...], "warnings":
        [{key, floor, path, message}, ...], "floors", "locators", "zones"} (counts when valid).
        Exit codes: 0 no errors (warnings allowed), 2 usage error or invalid site (lint writes no
        file, so never 1).
        """)

    /// Validates the site and prints every error (exit 2), or, for a valid site, its warnings and
    /// counts (exit 0) — as text or one `--json` object.
    /// - Throws: E1001 for a bad `--rate` (usage); problems of the file itself are printed, not thrown.
    static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32 {
        let path = arguments.string("site") ?? ""
        var options = SiteLint.Options.standard
        options.positionPeriodSeconds = 1 / (try arguments.double("rate", default: 4, in: 0.001...1000))
        let json = arguments.flag("json")
        let (decoded, errors) = SiteDecoder.validate(path: path)
        guard let site = decoded, errors.isEmpty else {
            if json {
                console.out(JSONWriter(style: .compact).string(.object([
                    ("errors", .array(errors.map(errorJSON))), ("warnings", .array([])),
                ])) + "\n")
            } else {
                for e in errors { console.out("error: \(e)\n") }
                console.out("\(path): \(plural(errors.count, "error")); warnings are checked once the site is valid\n")
            }
            return errors.first.map { LocusTool.exitCode(for: $0.code) } ?? 2
        }
        let warnings = SiteLint.warnings(for: site, options: options)
        let locators = site.floors.reduce(0) { $0 + $1.locators.count }, zones = site.floors.reduce(0) { $0 + $1.zones.count }
        if json {
            console.out(JSONWriter(style: .compact).string(.object([
                ("errors", .array([])),
                ("warnings", .array(warnings.map { w in
                    .object([("key", .string(w.key)), ("floor", .string(w.floor.rawValue)), ("path", .string(w.path)),
                             ("message", .string(w.message))])
                })),
                ("floors", .integer(site.floors.count)),
                ("locators", .integer(locators)),
                ("zones", .integer(zones)),
            ])) + "\n")
        } else {
            for w in warnings { console.out("\(path): \(w.path): warning: \(w.key): \(w.message)\n") }
            console.out("\(path): no errors, \(plural(warnings.count, "warning")) "
                        + "(\(plural(site.floors.count, "floor")), \(plural(locators, "locator")), \(plural(zones, "zone")))\n")
        }
        return 0
    }

    /// One error as a JSON object: `code`, `message`, and those of `file`, `line`, `column`, `path`
    /// that are known.
    static func errorJSON(_ e: LocusError) -> JSONValue {
        var members: [(String, JSONValue)] = [("code", .string(e.code.rawValue)), ("message", .string(e.message))]
        if let f = e.context.file { members.append(("file", .string(f))) }
        if let l = e.context.line { members.append(("line", .integer(l))) }
        if let c = e.context.column { members.append(("column", .integer(c))) }
        if let p = e.context.jsonPath { members.append(("path", .string(p))) }
        return .object(members)
    }
}
