import LocusCore

/// Reads a site file (SPEC §1) into a `Site`, validating every rule with its own error code.
///
/// Required: the root object, a non-empty `floors` array, each floor's `id`, each locator's
/// `address`, `x`, `y`, each zone's `id` and `polygon` (and each polygon point's `x`, `y`).
/// Everything else is optional with a default: `building` (absent → id `""`; when present its
/// `id` is required), floor `name` `""`, `originX`/`originY`/`widthM`/`heightM` 0 (0 size means
/// "extent not given"), `tagHeightM` 0, `sessionId` none, `locators`/`zones` empty, locator `z` and
/// `biasM` 0, zone `name` `""` and the rules of `ZoneRules.standard`. A member whose value is
/// `null` counts as absent. Ids are strings or JSON integers (taken as their digits), never empty.
/// Unknown members are ignored; for a repeated member the last one wins.
///
/// Errors carry `context.file`, `context.jsonPath` (`floors[0].locators[2].address`, or `$` for
/// the root) and the line/column of the offending value (for a missing member: of the object that
/// lacks it). The first problem found is thrown.
package enum SiteDecoder {
    /// Decodes and validates a site from UTF-8 JSON bytes; `file` is only used in error contexts.
    /// - Throws: `LocusError` with `.malformedJSON` (E5002) for JSON that does not parse, or one of
    ///   `.siteMissingField` (E3101), `.siteWrongType` (E3102), `.siteDuplicateID` (E3103),
    ///   `.siteDuplicateAddress` (E3104), `.siteNonFiniteNumber` (E3105), `.siteNegativeValue`
    ///   (E3106), `.siteNoFloor` (E3107), `.polygonTooFewVertices` (E3108),
    ///   `.polygonSelfIntersecting` (E3109), `.polygonZeroArea` (E3110), `.invalidLocatorAddress`
    ///   (E3111), `.siteValueOutOfRange` (E3112: non-integer `inCount`/`priority`/`sessionId`/
    ///   `floorCount`, empty id).
    package static func decode(_ bytes: [UInt8], file: String) throws(LocusError) -> Site {
        try decodeNotated(bytes, file: file).site
    }

    /// `decode(_:file:)`, and how each locator address was written (for `SiteEncoder` to write the
    /// site back in the input's notation).
    /// - Throws: as `decode(_:file:)`.
    package static func decodeNotated(_ bytes: [UInt8], file: String) throws(LocusError)
        -> (site: Site, addressNotation: SiteAddressNotation) {
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            throw error.inFile(file)
        }
        var notation = SiteAddressNotation()
        let site = try SiteReader(file: file).site(root, notation: &notation)
        return (site, notation)
    }
}

/// The validating walk over a parsed site; each method names the JSON path it reads.
private struct SiteReader {
    let file: String

    // MARK: - Site, floors, locators, zones

    /// The site; each locator address's spelling goes into `notation`.
    func site(_ root: JSONValue, notation: inout SiteAddressNotation) throws(LocusError) -> Site {
        try expectObject(root, path: "")
        var building = Site.Building(id: "")
        if let value = optional(root, "building") {
            try expectObject(value, path: "building")
            building.id = try identifier(required(value, "id", path: "building"), path: "building.id")
            building.name = try optionalString(value, "name", path: "building") ?? ""
            if let count = optional(value, "floorCount") {
                building.floorCount = try nonNegativeInteger(count, path: "building.floorCount")
            }
        }
        guard let floorsValue = optional(root, "floors") else {
            throw error(.siteNoFloor, "the site has no floor: 'floors' is missing", at: root, path: "floors")
        }
        let floorValues = try array(floorsValue, path: "floors")
        if floorValues.isEmpty {
            throw error(.siteNoFloor, "the site has no floor: 'floors' is empty", at: floorsValue, path: "floors")
        }
        var floors: [Floor] = []
        var firstPathOfID: [FloorID: String] = [:]
        for (i, value) in floorValues.enumerated() {
            let path = "floors[\(i)]"
            let floor = try self.floor(value, path: path, notation: &notation)
            if let previous = firstPathOfID[floor.id] {
                let idValue = value["id"] ?? value
                throw error(.siteDuplicateID, "duplicate floor id \"\(floor.id)\" (also at \(previous))",
                            at: idValue, path: path + ".id")
            }
            firstPathOfID[floor.id] = path + ".id"
            floors.append(floor)
        }
        return Site(building: building, floors: floors)
    }

    func floor(_ value: JSONValue, path: String, notation: inout SiteAddressNotation) throws(LocusError) -> Floor {
        try expectObject(value, path: path)
        var floor = Floor(id: FloorID(try identifier(required(value, "id", path: path), path: path + ".id")))
        floor.name = try optionalString(value, "name", path: path) ?? ""
        floor.originX = try optionalNumber(value, "originX", path: path) ?? 0
        floor.originY = try optionalNumber(value, "originY", path: path) ?? 0
        floor.widthMeters = try optionalNonNegative(value, "widthM", path: path) ?? 0
        floor.heightMeters = try optionalNonNegative(value, "heightM", path: path) ?? 0
        floor.tagHeightMeters = try optionalNumber(value, "tagHeightM", path: path) ?? 0
        if let session = optional(value, "sessionId") {
            floor.sessionID = try nonNegativeInteger(session, path: path + ".sessionId")
        }

        if let locatorsValue = optional(value, "locators") {
            var firstPathOfAddress: [LocatorAddress: String] = [:]
            for (j, locatorValue) in try array(locatorsValue, path: path + ".locators").enumerated() {
                let locatorPath = path + ".locators[\(j)]"
                let locator = try self.locator(locatorValue, path: locatorPath)
                if let previous = firstPathOfAddress[locator.address] {
                    throw error(.siteDuplicateAddress, "duplicate address \(locator.address) (also at \(previous))",
                                at: locatorValue["address"] ?? locatorValue, path: locatorPath + ".address")
                }
                firstPathOfAddress[locator.address] = locatorPath
                if case .string(let text) = locatorValue["address"]?.kind {
                    notation[floor.id, locator.address] = .string(text)
                } else {
                    notation[floor.id, locator.address] = .number
                }
                floor.locators.append(locator)
            }
        }

        if let zonesValue = optional(value, "zones") {
            var firstPathOfID: [ZoneID: String] = [:]
            for (k, zoneValue) in try array(zonesValue, path: path + ".zones").enumerated() {
                let zonePath = path + ".zones[\(k)]"
                let zone = try self.zone(zoneValue, path: zonePath)
                if let previous = firstPathOfID[zone.id] {
                    throw error(.siteDuplicateID, "duplicate zone id \"\(zone.id)\" (also at \(previous))",
                                at: zoneValue["id"] ?? zoneValue, path: zonePath + ".id")
                }
                firstPathOfID[zone.id] = zonePath + ".id"
                floor.zones.append(zone)
            }
        }
        return floor
    }

    func locator(_ value: JSONValue, path: String) throws(LocusError) -> Locator {
        try expectObject(value, path: path)
        let address = try locatorAddress(required(value, "address", path: path), path: path + ".address")
        let x = try coordinate(required(value, "x", path: path), path: path + ".x")
        let y = try coordinate(required(value, "y", path: path), path: path + ".y")
        let z = try optional(value, "z").map { v throws(LocusError) in try coordinate(v, path: path + ".z") } ?? 0
        let bias = try optionalNumber(value, "biasM", path: path) ?? 0
        let slope = try optionalNumber(value, "biasSlope", path: path) ?? 0
        guard abs(slope) < 0.5 else {
            throw LocusError(.siteValueOutOfRange, "biasSlope \(slope) is not a plausible range scale error (|s| < 0.5)",
                             context: .init(jsonPath: path + ".biasSlope"))
        }
        return Locator(address: address, position: Point3(x: x, y: y, z: z), biasMeters: bias, biasSlope: slope)
    }

    func locatorAddress(_ value: JSONValue, path: String) throws(LocusError) -> LocatorAddress {
        switch value.kind {
        case .number(let number):
            guard let integer = number.integerValue, let raw = UInt16(exactly: integer) else {
                throw error(.invalidLocatorAddress, "address \(number.literal) is not a 16-bit integer (0…65535)",
                            at: value, path: path)
            }
            return LocatorAddress(raw)
        case .string(let text):
            guard let address = LocatorAddress(parsing: text) else {
                throw error(.invalidLocatorAddress,
                            "address \"\(text)\" is not a 16-bit value written as \"0x9DD7\" or \"40407\"",
                            at: value, path: path)
            }
            return address
        default:
            throw wrongType(value, expected: "an integer or a string", path: path)
        }
    }

    func zone(_ value: JSONValue, path: String) throws(LocusError) -> Zone {
        try expectObject(value, path: path)
        let id = ZoneID(try identifier(required(value, "id", path: path), path: path + ".id"))
        let name = try optionalString(value, "name", path: path) ?? ""
        let polygonValue = try required(value, "polygon", path: path)
        var points: [Point2] = []
        for (p, pointValue) in try array(polygonValue, path: path + ".polygon").enumerated() {
            let pointPath = path + ".polygon[\(p)]"
            try expectObject(pointValue, path: pointPath)
            let x = try coordinate(required(pointValue, "x", path: pointPath), path: pointPath + ".x")
            let y = try coordinate(required(pointValue, "y", path: pointPath), path: pointPath + ".y")
            points.append(Point2(x: x, y: y))
        }

        var rules = ZoneRules.standard
        rules.inDistanceMeters = try optionalNonNegative(value, "inDist", path: path) ?? rules.inDistanceMeters
        if let count = optional(value, "inCount") {
            rules.inCount = try nonNegativeInteger(count, path: path + ".inCount")
        }
        rules.inCountIntervalSeconds = try optionalNonNegative(value, "inCountInterval", path: path)
            ?? rules.inCountIntervalSeconds
        rules.outPeriodSeconds = try optionalNonNegative(value, "outPeriod", path: path) ?? rules.outPeriodSeconds
        if let priority = optional(value, "priority") {
            rules.priority = try integer(priority, path: path + ".priority")
        }
        if let callInout = optional(value, "callInout") {
            guard case .bool(let flag) = callInout.kind else {
                throw wrongType(callInout, expected: "a boolean", path: path + ".callInout")
            }
            rules.callInout = flag
        }
        rules.dwellSeconds = try optionalNonNegative(value, "dwellSeconds", path: path) ?? rules.dwellSeconds

        if let problem = PolygonValidation.validate(points) {
            throw error(problem.code, problem.message, at: polygonValue, path: path + ".polygon")
        }
        return Zone(id: id, name: name, polygon: PolygonValidation.normalized(points), rules: rules)
    }

    // MARK: - Typed reads

    func error(_ code: LocusErrorCode, _ message: String, at value: JSONValue, path: String) -> LocusError {
        var context = LocusError.Context(file: file, jsonPath: path.isEmpty ? "$" : path)
        if value.position != .none {
            context.line = value.position.line
            context.column = value.position.column
        }
        return LocusError(code, message, context: context)
    }

    func wrongType(_ value: JSONValue, expected: String, path: String) -> LocusError {
        error(.siteWrongType, "expected \(expected), found \(value.typeDescription)", at: value, path: path)
    }

    /// The member `key` of `object`, nil when absent or `null`.
    func optional(_ object: JSONValue, _ key: String) -> JSONValue? {
        guard let value = object[key], value.kind != .null else { return nil }
        return value
    }

    func required(_ object: JSONValue, _ key: String, path: String) throws(LocusError) -> JSONValue {
        guard let value = optional(object, key) else {
            let memberPath = path.isEmpty ? key : path + "." + key
            throw error(.siteMissingField, "required field '\(key)' is missing", at: object, path: memberPath)
        }
        return value
    }

    func expectObject(_ value: JSONValue, path: String) throws(LocusError) {
        guard case .object = value.kind else { throw wrongType(value, expected: "an object", path: path) }
    }

    func array(_ value: JSONValue, path: String) throws(LocusError) -> [JSONValue] {
        guard case .array(let elements) = value.kind else { throw wrongType(value, expected: "an array", path: path) }
        return elements
    }

    func identifier(_ value: JSONValue, path: String) throws(LocusError) -> String {
        let text: String
        switch value.kind {
        case .string(let string): text = string
        case .number(let number) where number.isIntegerLiteral: text = number.literal
        default: throw wrongType(value, expected: "a string", path: path)
        }
        if text.isEmpty { throw error(.siteValueOutOfRange, "an id must not be empty", at: value, path: path) }
        return text
    }

    func optionalString(_ object: JSONValue, _ key: String, path: String) throws(LocusError) -> String? {
        guard let value = optional(object, key) else { return nil }
        guard case .string(let text) = value.kind else {
            throw wrongType(value, expected: "a string", path: path + "." + key)
        }
        return text
    }

    func number(_ value: JSONValue, path: String) throws(LocusError) -> Double {
        guard case .number(let number) = value.kind else { throw wrongType(value, expected: "a number", path: path) }
        guard number.value.isFinite else {
            throw error(.siteNonFiniteNumber, "number \(number.literal) does not fit a double", at: value, path: path)
        }
        return number.value
    }

    /// The largest coordinate a site may use, metres: far beyond any venue (projected map
    /// coordinates reach 1e7 m), small enough that distances and areas never overflow.
    static let maximumCoordinateMeters = 1e9

    /// A coordinate (metres): a number with |v| ≤ `maximumCoordinateMeters`.
    /// - Throws: as `number`, and `E3112` beyond the bound.
    func coordinate(_ value: JSONValue, path: String) throws(LocusError) -> Double {
        let v = try number(value, path: path)
        guard abs(v) <= Self.maximumCoordinateMeters else {
            throw error(.siteValueOutOfRange, "coordinate \(v) m is beyond any venue (|v| ≤ 1e9 m)", at: value, path: path)
        }
        return v
    }

    func optionalNumber(_ object: JSONValue, _ key: String, path: String) throws(LocusError) -> Double? {
        guard let value = optional(object, key) else { return nil }
        return try number(value, path: path + "." + key)
    }

    func optionalNonNegative(_ object: JSONValue, _ key: String, path: String) throws(LocusError) -> Double? {
        guard let value = optional(object, key) else { return nil }
        let memberPath = path + "." + key
        let x = try number(value, path: memberPath)
        if x < 0 { throw error(.siteNegativeValue, "\(key) must not be negative, found \(literal(value))", at: value, path: memberPath) }
        return x
    }

    func integer(_ value: JSONValue, path: String) throws(LocusError) -> Int {
        guard case .number(let number) = value.kind, let integer = number.integerValue else {
            let x = try number(value, path: path)
            let problem = x.rounded(.towardZero) == x ? "a whole number within ±9.2e18" : "a whole number"
            throw error(.siteValueOutOfRange, "expected \(problem), found \(literal(value))", at: value, path: path)
        }
        return integer
    }

    func nonNegativeInteger(_ value: JSONValue, path: String) throws(LocusError) -> Int {
        let n = try integer(value, path: path)
        if n < 0 {
            let key = path.split(separator: ".").last.map(String.init) ?? path
            throw error(.siteNegativeValue, "\(key) must not be negative, found \(n)", at: value, path: path)
        }
        return n
    }

    func literal(_ value: JSONValue) -> String {
        if case .number(let number) = value.kind { return number.literal }
        return value.typeDescription
    }
}
