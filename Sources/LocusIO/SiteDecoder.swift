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
/// lacks it). One walk finds them all (`validate(_:file:)`, for `locus lint`); `decode` throws the
/// first of them. JSON that does not parse has exactly one error, the parser's.
public enum SiteDecoder {
    /// Decodes and validates a site from UTF-8 JSON bytes; `file` is only used in error contexts.
    /// - Throws: `LocusError` with `.malformedJSON` (E5002) for JSON that does not parse, or one of
    ///   `.siteMissingField` (E3101), `.siteWrongType` (E3102), `.siteDuplicateID` (E3103),
    ///   `.siteDuplicateAddress` (E3104), `.siteNonFiniteNumber` (E3105), `.siteNegativeValue`
    ///   (E3106), `.siteNoFloor` (E3107), `.polygonTooFewVertices` (E3108),
    ///   `.polygonSelfIntersecting` (E3109), `.polygonZeroArea` (E3110), `.invalidLocatorAddress`
    ///   (E3111), `.siteValueOutOfRange` (E3112: non-integer `inCount`/`priority`/`sessionId`/
    ///   `floorCount`, empty id).
    public static func decode(_ bytes: [UInt8], file: String) throws(LocusError) -> Site {
        try decodeNotated(bytes, file: file).site
    }

    /// `decode(_:file:)`, and how each locator address was written (for `SiteEncoder` to write the
    /// site back in the input's notation).
    /// - Throws: as `decode(_:file:)`.
    static func decodeNotated(_ bytes: [UInt8], file: String) throws(LocusError)
        -> (site: Site, addressNotation: SiteAddressNotation) {
        let outcome = read(bytes, file: file)
        if let first = outcome.errors.first { throw first }
        return (outcome.site, outcome.notation)
    }

    /// Every problem of a site file, not just the first: the site when there is none, otherwise nil
    /// and the errors in document order (as `decode(_:file:)` would meet them: `errors[0]` is
    /// exactly what it throws).
    ///
    /// The walk records a problem and carries on with the next field, locator, zone or floor.
    /// Whatever depends on a part that failed is not checked, so one mistake gives one error: a
    /// locator whose address cannot be read takes no part in the duplicate-address check, an id
    /// that cannot be read none in the duplicate-id check, a polygon with an unreadable point
    /// gets no polygon check, and the members of a value that is not an object are not read.
    /// Duplicates are all reported, each naming the first occurrence. Bytes that are not JSON give
    /// the one parse error (E5002) with its line and column.
    public static func validate(_ bytes: [UInt8], file: String) -> (site: Site?, errors: [LocusError]) {
        let outcome = read(bytes, file: file)
        return (outcome.errors.isEmpty ? outcome.site : nil, outcome.errors)
    }

    /// Parses and walks `bytes`: the site read (placeholders where a part failed; meaningful only
    /// when `errors` is empty), the address spellings, and every error in walk order.
    private static func read(_ bytes: [UInt8], file: String)
        -> (site: Site, notation: SiteAddressNotation, errors: [LocusError]) {
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            return (Site(building: Site.Building(id: ""), floors: []), SiteAddressNotation(), [error.inFile(file)])
        }
        var reader = SiteReader(file: file)
        var notation = SiteAddressNotation()
        let site = reader.site(root, notation: &notation)
        return (site, notation, reader.errors)
    }
}

/// The validating walk over a parsed site; each method names the JSON path it reads.
///
/// Every check records its problem in `errors` and returns nil (or a default) instead of
/// throwing, so the walk goes on to the next part. The walk keeps the order the throwing decoder
/// always had — fields in the order below, a floor's locators and zones before the floor's own
/// duplicate-id check — so the first error recorded is the one `decode` throws.
private struct SiteReader {
    let file: String
    /// The problems found so far, in walk order.
    private(set) var errors: [LocusError] = []

    init(file: String) {
        self.file = file
    }

    // MARK: - Site, floors, locators, zones

    /// The site; each locator address's spelling goes into `notation`. Parts that failed are left
    /// out or filled with defaults: the result is the site only when `errors` is empty.
    mutating func site(_ root: JSONValue, notation: inout SiteAddressNotation) -> Site {
        var building = Site.Building(id: "")
        guard expectObject(root, path: "") else { return Site(building: building, floors: []) }
        if let value = optional(root, "building"), expectObject(value, path: "building") {
            building.id = requiredIdentifier(value, "id", path: "building") ?? ""
            building.name = optionalString(value, "name", path: "building") ?? ""
            if let count = optional(value, "floorCount") {
                building.floorCount = nonNegativeInteger(count, path: "building.floorCount")
            }
        }
        guard let floorsValue = optional(root, "floors") else {
            record(.siteNoFloor, "the site has no floor: 'floors' is missing", at: root, path: "floors")
            return Site(building: building, floors: [])
        }
        guard let floorValues = array(floorsValue, path: "floors") else { return Site(building: building, floors: []) }
        if floorValues.isEmpty {
            record(.siteNoFloor, "the site has no floor: 'floors' is empty", at: floorsValue, path: "floors")
        }
        var floors: [Floor] = []
        var firstPathOfID: [FloorID: String] = [:]
        for (i, value) in floorValues.enumerated() {
            let path = "floors[\(i)]"
            guard let floor = self.floor(value, path: path, notation: &notation) else { continue }
            if !floor.id.rawValue.isEmpty { // empty: the id failed (no valid id is empty)
                if let previous = firstPathOfID[floor.id] {
                    record(.siteDuplicateID, "duplicate floor id \"\(floor.id)\" (also at \(previous))",
                           at: value["id"] ?? value, path: path + ".id")
                    continue
                }
                firstPathOfID[floor.id] = path + ".id"
            }
            floors.append(floor)
        }
        return Site(building: building, floors: floors)
    }

    /// One floor, nil when `value` is not an object; id `""` when the id failed.
    mutating func floor(_ value: JSONValue, path: String, notation: inout SiteAddressNotation) -> Floor? {
        guard expectObject(value, path: path) else { return nil }
        var floor = Floor(id: FloorID(requiredIdentifier(value, "id", path: path) ?? ""))
        floor.name = optionalString(value, "name", path: path) ?? ""
        floor.originX = optionalNumber(value, "originX", path: path) ?? 0
        floor.originY = optionalNumber(value, "originY", path: path) ?? 0
        floor.widthMeters = optionalNonNegative(value, "widthM", path: path) ?? 0
        floor.heightMeters = optionalNonNegative(value, "heightM", path: path) ?? 0
        floor.tagHeightMeters = optionalNumber(value, "tagHeightM", path: path) ?? 0
        if let session = optional(value, "sessionId") {
            floor.sessionID = nonNegativeInteger(session, path: path + ".sessionId")
        }

        if let locatorsValue = optional(value, "locators"), let locatorValues = array(locatorsValue, path: path + ".locators") {
            var firstPathOfAddress: [LocatorAddress: String] = [:]
            for (j, locatorValue) in locatorValues.enumerated() {
                let locatorPath = path + ".locators[\(j)]"
                guard let locator = self.locator(locatorValue, path: locatorPath) else { continue }
                if let previous = firstPathOfAddress[locator.address] {
                    record(.siteDuplicateAddress, "duplicate address \(locator.address) (also at \(previous))",
                           at: locatorValue["address"] ?? locatorValue, path: locatorPath + ".address")
                    continue
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

        if let zonesValue = optional(value, "zones"), let zoneValues = array(zonesValue, path: path + ".zones") {
            var firstPathOfID: [ZoneID: String] = [:]
            for (k, zoneValue) in zoneValues.enumerated() {
                let zonePath = path + ".zones[\(k)]"
                guard let zone = self.zone(zoneValue, path: zonePath) else { continue }
                if !zone.id.rawValue.isEmpty { // empty: the id failed
                    if let previous = firstPathOfID[zone.id] {
                        record(.siteDuplicateID, "duplicate zone id \"\(zone.id)\" (also at \(previous))",
                               at: zoneValue["id"] ?? zoneValue, path: zonePath + ".id")
                        continue
                    }
                    firstPathOfID[zone.id] = zonePath + ".id"
                }
                floor.zones.append(zone)
            }
        }
        return floor
    }

    /// One locator, every field checked; nil when `value` is not an object or its address failed.
    mutating func locator(_ value: JSONValue, path: String) -> Locator? {
        guard expectObject(value, path: path) else { return nil }
        var address: LocatorAddress?
        if let addressValue = required(value, "address", path: path) {
            address = locatorAddress(addressValue, path: path + ".address")
        }
        let x = requiredCoordinate(value, "x", path: path)
        let y = requiredCoordinate(value, "y", path: path)
        let z = optional(value, "z").flatMap { v in coordinate(v, path: path + ".z") }
        let bias = optionalNumber(value, "biasM", path: path) ?? 0
        let slope = optionalNumber(value, "biasSlope", path: path) ?? 0
        if !(abs(slope) < 0.5) {
            record(.siteValueOutOfRange, "biasSlope \(slope) is not a plausible range scale error (|s| < 0.5)",
                   at: value["biasSlope"] ?? value, path: path + ".biasSlope")
        }
        guard let address else { return nil }
        return Locator(address: address, position: Point3(x: x ?? 0, y: y ?? 0, z: z ?? 0), biasMeters: bias, biasSlope: slope)
    }

    /// A 16-bit address: a JSON integer 0…65535, or a string `LocatorAddress(parsing:)` reads.
    mutating func locatorAddress(_ value: JSONValue, path: String) -> LocatorAddress? {
        switch value.kind {
        case .number(let number):
            guard let integer = value.intValue, let raw = UInt16(exactly: integer) else {
                record(.invalidLocatorAddress, "address \(number.literal) is not a 16-bit integer (0…65535)", at: value, path: path)
                return nil
            }
            return LocatorAddress(raw)
        case .string(let text):
            guard let address = LocatorAddress(parsing: text) else {
                record(.invalidLocatorAddress, "address \"\(text)\" is not a 16-bit value written as \"0x9DD7\" or \"40407\"",
                       at: value, path: path)
                return nil
            }
            return address
        default:
            wrongType(value, expected: "an integer or a string", path: path)
            return nil
        }
    }

    /// One zone, every field and rule checked; nil when `value` is not an object; id `""` when the
    /// id failed. The polygon is checked (`PolygonValidation`) only when all its points were read.
    mutating func zone(_ value: JSONValue, path: String) -> Zone? {
        guard expectObject(value, path: path) else { return nil }
        let id = ZoneID(requiredIdentifier(value, "id", path: path) ?? "")
        let name = optionalString(value, "name", path: path) ?? ""
        let polygonValue = required(value, "polygon", path: path)
        var points: [Point2]? // nil: the polygon could not be read whole
        if let polygonValue, let pointValues = array(polygonValue, path: path + ".polygon") {
            var read: [Point2] = []
            for (p, pointValue) in pointValues.enumerated() {
                let pointPath = path + ".polygon[\(p)]"
                guard expectObject(pointValue, path: pointPath) else { continue }
                let x = requiredCoordinate(pointValue, "x", path: pointPath)
                let y = requiredCoordinate(pointValue, "y", path: pointPath)
                if let x, let y { read.append(Point2(x: x, y: y)) }
            }
            if read.count == pointValues.count { points = read }
        }

        var rules = ZoneRules.standard
        rules.inDistanceMeters = optionalNonNegative(value, "inDist", path: path) ?? rules.inDistanceMeters
        if let count = optional(value, "inCount") {
            rules.inCount = nonNegativeInteger(count, path: path + ".inCount") ?? rules.inCount
        }
        rules.inCountIntervalSeconds = optionalNonNegative(value, "inCountInterval", path: path) ?? rules.inCountIntervalSeconds
        rules.outPeriodSeconds = optionalNonNegative(value, "outPeriod", path: path) ?? rules.outPeriodSeconds
        if let priority = optional(value, "priority") {
            rules.priority = integer(priority, path: path + ".priority") ?? rules.priority
        }
        if let callInout = optional(value, "callInout") {
            if case .bool(let flag) = callInout.kind {
                rules.callInout = flag
            } else {
                wrongType(callInout, expected: "a boolean", path: path + ".callInout")
            }
        }
        rules.dwellSeconds = optionalNonNegative(value, "dwellSeconds", path: path) ?? rules.dwellSeconds

        guard let polygonValue, let points else { return Zone(id: id, name: name, polygon: [], rules: rules) }
        if let problem = PolygonValidation.validate(points) {
            record(problem.code, problem.message, at: polygonValue, path: path + ".polygon")
            return Zone(id: id, name: name, polygon: [], rules: rules)
        }
        return Zone(id: id, name: name, polygon: PolygonValidation.normalized(points), rules: rules)
    }

    // MARK: - Typed reads: each records its problem and returns nil

    /// Records an error of `code` at `value`'s line and column, under `path` (`$` when empty).
    mutating func record(_ code: LocusErrorCode, _ message: String, at value: JSONValue, path: String) {
        errors.append(LocusError(code, message, context: LocusError.Context(file: file, jsonPath: path.isEmpty ? "$" : path, at: value)))
    }

    /// Records E3102: `value` is not what `path` needs.
    mutating func wrongType(_ value: JSONValue, expected: String, path: String) {
        record(.siteWrongType, "expected \(expected), found \(value.typeDescription)", at: value, path: path)
    }

    /// The member `key` of `object`, nil when absent or `null`.
    func optional(_ object: JSONValue, _ key: String) -> JSONValue? {
        guard let value = object[key], value.kind != .null else { return nil }
        return value
    }

    /// The member `key` of `object`; nil, recorded (E3101), when absent or `null`.
    mutating func required(_ object: JSONValue, _ key: String, path: String) -> JSONValue? {
        guard let value = optional(object, key) else {
            let memberPath = path.isEmpty ? key : path + "." + key
            record(.siteMissingField, "required field '\(key)' is missing", at: object, path: memberPath)
            return nil
        }
        return value
    }

    /// Whether `value` is an object; false recorded (E3102).
    mutating func expectObject(_ value: JSONValue, path: String) -> Bool {
        guard case .object = value.kind else {
            wrongType(value, expected: "an object", path: path)
            return false
        }
        return true
    }

    /// The elements of an array; nil recorded (E3102) for anything else.
    mutating func array(_ value: JSONValue, path: String) -> [JSONValue]? {
        guard case .array(let elements) = value.kind else {
            wrongType(value, expected: "an array", path: path)
            return nil
        }
        return elements
    }

    /// An id: a non-empty string, or a JSON integer taken as its digits.
    mutating func identifier(_ value: JSONValue, path: String) -> String? {
        let text: String
        switch value.kind {
        case .string(let string): text = string
        case .number(let number) where number.isIntegerLiteral: text = number.literal
        default:
            wrongType(value, expected: "a string", path: path)
            return nil
        }
        if text.isEmpty {
            record(.siteValueOutOfRange, "an id must not be empty", at: value, path: path)
            return nil
        }
        return text
    }

    /// The required id member `key` of `object` (`identifier`).
    mutating func requiredIdentifier(_ object: JSONValue, _ key: String, path: String) -> String? {
        guard let value = required(object, key, path: path) else { return nil }
        return identifier(value, path: path + "." + key)
    }

    /// The optional string member `key`; nil when absent or (recorded) not a string.
    mutating func optionalString(_ object: JSONValue, _ key: String, path: String) -> String? {
        guard let value = optional(object, key) else { return nil }
        guard case .string(let text) = value.kind else {
            wrongType(value, expected: "a string", path: path + "." + key)
            return nil
        }
        return text
    }

    /// A finite number (E3102 not a number, E3105 beyond a Double).
    mutating func number(_ value: JSONValue, path: String) -> Double? {
        guard case .number(let number) = value.kind else {
            wrongType(value, expected: "a number", path: path)
            return nil
        }
        guard number.value.isFinite else {
            record(.siteNonFiniteNumber, "number \(number.literal) does not fit a double", at: value, path: path)
            return nil
        }
        return number.value
    }

    /// The largest coordinate a site may use, metres: far beyond any venue (projected map
    /// coordinates reach 1e7 m), small enough that distances and areas never overflow.
    static let maximumCoordinateMeters = 1e9

    /// A coordinate (metres): a number with |v| ≤ `maximumCoordinateMeters` (beyond: E3112).
    mutating func coordinate(_ value: JSONValue, path: String) -> Double? {
        guard let v = number(value, path: path) else { return nil }
        guard abs(v) <= Self.maximumCoordinateMeters else {
            record(.siteValueOutOfRange, "coordinate \(v) m is beyond any venue (|v| ≤ 1e9 m)", at: value, path: path)
            return nil
        }
        return v
    }

    /// The required coordinate member `key` of `object` (`coordinate`), metres.
    mutating func requiredCoordinate(_ object: JSONValue, _ key: String, path: String) -> Double? {
        guard let value = required(object, key, path: path) else { return nil }
        return coordinate(value, path: path + "." + key)
    }

    /// The optional number member `key`; nil when absent or (recorded) invalid.
    mutating func optionalNumber(_ object: JSONValue, _ key: String, path: String) -> Double? {
        guard let value = optional(object, key) else { return nil }
        return number(value, path: path + "." + key)
    }

    /// The optional number member `key`, ≥ 0 (negative: E3106); nil when absent or invalid.
    mutating func optionalNonNegative(_ object: JSONValue, _ key: String, path: String) -> Double? {
        guard let value = optional(object, key) else { return nil }
        let memberPath = path + "." + key
        guard let x = number(value, path: memberPath) else { return nil }
        if x < 0 {
            record(.siteNegativeValue, "\(key) must not be negative, found \(literal(value))", at: value, path: memberPath)
            return nil
        }
        return x
    }

    /// A whole number within `Int` (2, 2.0 and 2e0 alike; otherwise E3112, or as `number`).
    mutating func integer(_ value: JSONValue, path: String) -> Int? {
        if let integer = value.intValue { return integer }
        guard let x = number(value, path: path) else { return nil }
        let problem = x.rounded(.towardZero) == x ? "a whole number within ±9.2e18" : "a whole number"
        record(.siteValueOutOfRange, "expected \(problem), found \(literal(value))", at: value, path: path)
        return nil
    }

    /// A whole number ≥ 0 (negative: E3106 naming the last path component).
    mutating func nonNegativeInteger(_ value: JSONValue, path: String) -> Int? {
        guard let n = integer(value, path: path) else { return nil }
        if n < 0 {
            let key = path.split(separator: ".").last.map(String.init) ?? path
            record(.siteNegativeValue, "\(key) must not be negative, found \(n)", at: value, path: path)
            return nil
        }
        return n
    }

    /// A number's literal as written, else its JSON type, for messages.
    func literal(_ value: JSONValue) -> String {
        if case .number(let number) = value.kind { return number.literal }
        return value.typeDescription
    }
}
