import LocusCore

/// Writes a `Site` as a SPEC §1 site file: pretty JSON (2-space indent, small objects such as
/// polygon points and locators inline), a final newline, every field spelled out (defaults and
/// `biasM` included), numbers in `JSONNumberFormat.shortest` so that
/// `SiteDecoder.decode(SiteEncoder.encode(site)) == site` for every valid site.
///
/// Addresses are written as `"0x9DD7"`, or as the file had them when the decoder's
/// `SiteAddressNotation` is passed in; `building` is omitted when its id is empty (a site read
/// without one); `sessionId` and `floorCount` only when set. Complexity O(size of the site).
public enum SiteEncoder {
    /// The site file's bytes; each locator address in its `addressNotation` spelling when it has one.
    public static func encode(_ site: Site, addressNotation: SiteAddressNotation = SiteAddressNotation()) -> [UInt8] {
        JSONWriter(style: .pretty).bytes(jsonValue(site, addressNotation: addressNotation)) + [UInt8(ascii: "\n")]
    }

    /// The site as a JSON tree, members in SPEC order.
    static func jsonValue(_ site: Site, addressNotation: SiteAddressNotation = SiteAddressNotation()) -> JSONValue {
        var root: [(String, JSONValue)] = []
        if !site.building.id.isEmpty {
            var building: [(String, JSONValue)] = [("id", .string(site.building.id)), ("name", .string(site.building.name))]
            if let count = site.building.floorCount { building.append(("floorCount", .integer(count))) }
            root.append(("building", .object(building)))
        }
        root.append(("floors", .array(site.floors.map { floor($0, addressNotation) })))
        return .object(root)
    }

    private static func number(_ value: Double) -> JSONValue { .number(value, .shortest) }

    private static func floor(_ floor: Floor, _ notation: SiteAddressNotation) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .string(floor.id.rawValue)),
            ("name", .string(floor.name)),
            ("originX", number(floor.originX)),
            ("originY", number(floor.originY)),
            ("widthM", number(floor.widthMeters)),
            ("heightM", number(floor.heightMeters)),
            ("tagHeightM", number(floor.tagHeightMeters)),
        ]
        if let session = floor.sessionID { members.append(("sessionId", .integer(session))) }
        members.append(("locators", .array(floor.locators.map { locator($0, notation[floor.id, $0.address]) })))
        members.append(("zones", .array(floor.zones.map(zone))))
        return .object(members)
    }

    private static func locator(_ locator: Locator, _ spelling: SiteAddressNotation.Spelling?) -> JSONValue {
        let address: JSONValue = switch spelling {
        case .number: .integer(Int(locator.address.rawValue))
        case .string(let text): .string(text)
        case nil: .string(locator.address.description)
        }
        var members: [(String, JSONValue)] = [
            ("address", address),
            ("x", number(locator.position.x)),
            ("y", number(locator.position.y)),
            ("z", number(locator.position.z)),
            ("biasM", number(locator.biasMeters)),
        ]
        // The range-scale extension is written only where it is used, so sites without it keep
        // the SPEC §1 shape.
        if locator.biasSlope != 0 { members.append(("biasSlope", number(locator.biasSlope))) }
        return .object(members)
    }

    private static func zone(_ zone: Zone) -> JSONValue {
        let rules = zone.rules
        return .object([
            ("id", .string(zone.id.rawValue)),
            ("name", .string(zone.name)),
            ("polygon", .array(zone.polygon.map { .object([("x", number($0.x)), ("y", number($0.y))]) })),
            ("inDist", number(rules.inDistanceMeters)),
            ("inCount", .integer(rules.inCount)),
            ("inCountInterval", number(rules.inCountIntervalSeconds)),
            ("outPeriod", number(rules.outPeriodSeconds)),
            ("priority", .integer(rules.priority)),
            ("callInout", .bool(rules.callInout)),
            ("dwellSeconds", number(rules.dwellSeconds)),
        ])
    }
}
