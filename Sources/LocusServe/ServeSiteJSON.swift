import LocusCore
import LocusIO

/// `/api/site`: the site as the page draws it (docs/serve.md) — floors with their extent, locators
/// and zones, the run's mode and source. Built once at start; the page never sees the site file
/// itself (a site may carry fields the page has no business with, such as biases).
enum ServeSiteJSON {
    /// How the engine is fed.
    enum Mode: Sendable, Equatable {
        /// A trace played at `speed` × real time (0: as fast as it goes).
        case replay(source: String, speed: Double, hasTruth: Bool)
        /// A live input (`--input`).
        case live(source: String)
    }

    /// The JSON bytes (compact, one line).
    static func bytes(site: Site, mode: Mode) -> [UInt8] {
        var members: [(String, JSONValue)] = [("title", .string(site.building.name.isEmpty ? site.building.id : site.building.name))]
        switch mode {
        case .replay(let source, let speed, let hasTruth):
            members += [("mode", .string("replay")), ("source", .string(source)), ("speed", .number(speed, .shortest)),
                        ("hasTruth", .bool(hasTruth))]
        case .live(let source):
            members += [("mode", .string("live")), ("source", .string(source)), ("hasTruth", .bool(false))]
        }
        members.append(("floors", .array(site.floors.enumerated().map { floorJSON($0.element, index: $0.offset) })))
        return Array(JSONWriter(style: .compact).string(.object(members)).utf8)
    }

    private static func floorJSON(_ floor: Floor, index: Int) -> JSONValue {
        func metres(_ x: Double) -> JSONValue { .number(x, .shortest) }
        return .object([
            ("index", .integer(index)),
            ("id", .string(floor.id.rawValue)),
            ("name", .string(floor.name)),
            ("originX", metres(floor.originX)), ("originY", metres(floor.originY)),
            ("widthM", metres(floor.widthMeters)), ("heightM", metres(floor.heightMeters)),
            ("tagHeightM", metres(floor.tagHeightMeters)),
            ("locators", .array(floor.locators.map { l in
                .object([("address", .string(l.address.description)), ("x", metres(l.position.x)),
                         ("y", metres(l.position.y)), ("z", metres(l.position.z))])
            })),
            ("zones", .array(floor.zones.map { z in
                .object([("id", .string(z.id.rawValue)), ("name", .string(z.name)),
                         ("polygon", .array(z.polygon.map { .array([metres($0.x), metres($0.y)]) })),
                         ("inDist", metres(z.rules.inDistanceMeters)), ("priority", .integer(z.rules.priority)),
                         ("callInout", .bool(z.rules.callInout)), ("dwellSeconds", metres(z.rules.dwellSeconds))])
            })),
        ])
    }
}
