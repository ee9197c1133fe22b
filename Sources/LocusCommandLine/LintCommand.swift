import LocusCore
import LocusIO
import LocusSolvers
import LocusZones

/// `locus lint`: errors and warnings for a site file (SPEC §5).
///
/// Errors are what makes the file invalid input (the first one found, with file, line, column and
/// JSON path; exit 2). Warnings are legal configurations that will not behave as intended: zone
/// rules that can never enter or flicker, zones outside the floor or without locator coverage,
/// floors that cannot position (fewer than 3 locators) or lack a UWB session id, and locator
/// layouts that are collinear (planar) or coplanar (3-D).
package enum LintCommand: LocusCommand {
    package static let spec = CommandSpec(
        name: "lint",
        summary: "Check a site file: errors (invalid input) and warnings (legal but likely wrong).",
        options: [
            .value("site", "SITE", "Site JSON (SPEC §1).", required: true),
            .value("rate", "HZ", "Position rate the zone rules are judged against (default 4).", required: false),
            .flag("json", "Print {\"errors\": [...], \"warnings\": [...]} as one JSON object."),
        ],
        discussion: "Exit codes: 0 no errors (warnings allowed), 2 usage error or invalid site (lint writes no file, so never 1).")

    /// One warning: a stable key, where, and what.
    struct Finding {
        var key: String
        var floor: FloorID
        var message: String
    }

    package static func run(_ arguments: ParsedArguments, console: Console) throws(LocusError) -> Int32 {
        let path = arguments.string("site") ?? ""
        let rate = try arguments.double("rate", default: 4, in: 0.001...1000)
        let site: Site
        do {
            site = try SiteDecoder.load(path: path)
        } catch {
            if arguments.flag("json") {
                console.out(JSONWriter(style: .compact).string(.object([
                    ("errors", .array([errorJSON(error)])), ("warnings", .array([])),
                ])) + "\n")
            } else {
                console.out("error: \(error)\n")
            }
            return LocusTool.exitCode(for: error.code)
        }
        let findings = warnings(for: site, rateHertz: rate)
        if arguments.flag("json") {
            console.out(JSONWriter(style: .compact).string(.object([
                ("errors", .array([])),
                ("warnings", .array(findings.map { f in
                    .object([("key", .string(f.key)), ("floor", .string(f.floor.rawValue)), ("message", .string(f.message))])
                })),
                ("floors", .integer(site.floors.count)),
                ("locators", .integer(site.floors.reduce(0) { $0 + $1.locators.count })),
                ("zones", .integer(site.floors.reduce(0) { $0 + $1.zones.count })),
            ])) + "\n")
        } else {
            for f in findings { console.out("\(path): floors[\(f.floor)]: warning: \(f.key): \(f.message)\n") }
            let z = site.floors.reduce(0) { $0 + $1.zones.count }, l = site.floors.reduce(0) { $0 + $1.locators.count }
            console.out("\(path): no errors, \(plural(findings.count, "warning")) "
                        + "(\(plural(site.floors.count, "floor")), \(plural(l, "locator")), \(plural(z, "zone")))\n")
        }
        return 0
    }

    static func errorJSON(_ e: LocusError) -> JSONValue {
        var members: [(String, JSONValue)] = [("code", .string(e.code.rawValue)), ("message", .string(e.message))]
        if let f = e.context.file { members.append(("file", .string(f))) }
        if let l = e.context.line { members.append(("line", .integer(l))) }
        if let c = e.context.column { members.append(("column", .integer(c))) }
        if let p = e.context.jsonPath { members.append(("path", .string(p))) }
        return .object(members)
    }

    /// Every warning of the site, floor by floor.
    static func warnings(for site: Site, rateHertz: Double) -> [Finding] {
        var out: [Finding] = []
        var options = ZoneJudgeOptions.standard
        options.positionPeriodSeconds = 1 / rateHertz
        for floor in site.floors {
            if floor.locators.count < 3 {
                out.append(Finding(key: "floor.tooFewLocators", floor: floor.id,
                                   message: "floor '\(floor.id)' has \(plural(floor.locators.count, "locator")): at least 3 are needed to position"))
            }
            if floor.sessionID == nil {
                out.append(Finding(key: "floor.noSessionId", floor: floor.id,
                                   message: "floor '\(floor.id)' has no sessionId: positioningReady is false (the engine still positions)"))
            }
            if floor.locators.count >= 3 {
                let positions = floor.locators.map(\.position)
                let mode = TrilaterationConfiguration.standard.resolvedMode(for: positions)
                let centre = Point3(x: positions.reduce(0) { $0 + $1.x } / Double(positions.count),
                                    y: positions.reduce(0) { $0 + $1.y } / Double(positions.count), z: floor.tagHeightMeters)
                do {
                    _ = try GeometryQuality.dop(locators: positions, at: centre, mode: mode, tagHeightMeters: floor.tagHeightMeters)
                } catch {
                    out.append(Finding(key: mode == .planar ? "floor.locatorsCollinear" : "floor.locatorsCoplanar", floor: floor.id,
                                       message: "floor '\(floor.id)': the locators are \(mode == .planar ? "collinear" : "coplanar") — positions cannot be determined (\(error.message))"))
                }
            }
            for w in ZoneJudge.warnings(for: floor, options: options) {
                out.append(Finding(key: w.kind.rawValue, floor: floor.id, message: w.message))
            }
        }
        return out
    }
}
