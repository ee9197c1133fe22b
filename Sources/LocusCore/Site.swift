/// A building with its floors: the whole configuration a replay or a session works on.
public struct Site: Sendable, Hashable {
    public struct Building: Sendable, Hashable {
        public var id: String
        public var name: String
        public var floorCount: Int?
        public init(id: String, name: String = "", floorCount: Int? = nil) {
            self.id = id
            self.name = name
            self.floorCount = floorCount
        }
    }

    public var building: Building
    /// At least one floor, ids unique.
    public var floors: [Floor]

    public init(building: Building, floors: [Floor]) {
        self.building = building
        self.floors = floors
    }

    /// The floor with this id, or nil.
    public func floor(_ id: FloorID) -> Floor? { floors.first { $0.id == id } }
}

extension Site {
    /// The index of the floor `id`, or of the first floor when `id` is nil (the default floor of
    /// the command line and the engine).
    /// - Throws: `E3002` naming the floors the site has, when there is no floor `id`.
    package func floorIndex(_ id: FloorID?) throws(LocusError) -> Int {
        guard let id else { return 0 }
        guard let i = floorIndex(of: id) else {
            throw LocusError(.unknownFloor, "no floor '\(id)' in the site (floors: \(floors.map(\.id.rawValue).joined(separator: ", ")))")
        }
        return i.rawValue
    }

    /// The index of the floor `id`, or nil: the one lookup of a floor by id (the engine keeps the
    /// last floor it resolved in front of it). O(floors): sites have a handful.
    package func floorIndex(of id: FloorID) -> FloorIndex? {
        floors.firstIndex(where: { $0.id == id }).map(FloorIndex.init)
    }
}
