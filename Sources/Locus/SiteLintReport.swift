import LocusCore
import LocusIO

/// What `locus lint` prints for a site file: every error `SiteDecoder.validate` finds (then no
/// warnings are checked), or for a valid site its warnings (`SiteLint`) and counts — as lines of
/// text or one JSON object (`{"errors": [...], "warnings": [...], "floors", "locators", "zones"}`).
package enum SiteLintReport {
    /// The report on the site at `path`, its zone rules judged against positions every
    /// `positionPeriodSeconds`; `json`: one object instead of lines. `firstError`: the code of the
    /// first error (nil for a valid site; warnings are not errors). Problems of the file itself are
    /// reported, never thrown.
    package static func make(path: String, positionPeriodSeconds: Double, json: Bool) -> (text: String, firstError: LocusErrorCode?) {
        var options = SiteLint.Options.standard
        options.positionPeriodSeconds = positionPeriodSeconds
        let (decoded, errors) = SiteDecoder.validate(path: path)
        guard let site = decoded, errors.isEmpty else {
            var text = ""
            if json {
                text = JSONWriter(style: .compact).string(.object([
                    ("errors", .array(errors.map(errorJSON))), ("warnings", .array([])),
                ])) + "\n"
            } else {
                for e in errors { text += "error: \(e)\n" }
                text += "\(path): \(plural(errors.count, "error")); warnings are checked once the site is valid\n"
            }
            return (text, errors.first?.code ?? .usage)
        }
        let warnings = SiteLint.warnings(for: site, options: options)
        let locators = site.floors.reduce(0) { $0 + $1.locators.count }, zones = site.floors.reduce(0) { $0 + $1.zones.count }
        var text = ""
        if json {
            text = JSONWriter(style: .compact).string(.object([
                ("errors", .array([])),
                ("warnings", .array(warnings.map { w in
                    .object([("key", .string(w.key)), ("floor", .string(w.floor.rawValue)), ("path", .string(w.path)),
                             ("message", .string(w.message))])
                })),
                ("floors", .integer(site.floors.count)),
                ("locators", .integer(locators)),
                ("zones", .integer(zones)),
            ])) + "\n"
        } else {
            for w in warnings { text += "\(path): \(w.path): warning: \(w.key): \(w.message)\n" }
            text += "\(path): no errors, \(plural(warnings.count, "warning")) "
                + "(\(plural(site.floors.count, "floor")), \(plural(locators, "locator")), \(plural(zones, "zone")))\n"
        }
        return (text, nil)
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
