import Locus
import LocusCore

/// `locus lint`: errors and warnings for a site file (SPEC §5).
///
/// Errors are what makes the file invalid input: every one of them (`SiteDecoder.validate`), each
/// with file, line, column and JSON path; exit 2. Warnings, checked once the file is valid, are
/// legal configurations that will not behave as intended (`SiteLint`): floors that cannot position
/// or lack a UWB session id, locator layouts that are clustered, collinear (planar) or coplanar
/// (3-D), locators outside the floor, zone rules that can never enter or flicker, zones outside the
/// floor, beyond every locator's range or partly outside positioning coverage. The command parses
/// and prints; the report is Locus's `SiteLintReport` (`SiteDecoder.validate`, `SiteLint.warnings`).
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
        let period = 1 / (try arguments.double("rate", default: 4, in: 0.001...1000))
        let report = SiteLintReport.make(path: arguments.string("site") ?? "", positionPeriodSeconds: period,
                                         json: arguments.flag("json"))
        console.out(report.text)
        return report.firstError.map(LocusTool.exitCode(for:)) ?? 0
    }
}
