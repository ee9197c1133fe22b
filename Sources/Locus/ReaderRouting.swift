import LocusCore

/// A reader's ids resolved against an engine, once per id: the trace readers number tags and
/// floors in order of first appearance (`TraceRowParser.tags`, `.floors`; `RangeTrace` the same), and
/// this table turns those reader-local indices into the engine's `TagIndex` and `FloorIndex` (nil:
/// a floor the site does not have, whose rows are skipped as `unknownFloor`). The one routing of
/// rows by id that the whole-recording replay and the tag-sharded group (`ShardedEngine`, whose table
/// gives each reader tag its index in its own shard) share, through `EngineDriver.ingest(_:routing:)`.
struct ReaderRouting: Sendable {
    /// Engine tag index of each reader tag.
    private(set) var tags: [TagIndex] = []
    /// Engine floor of each reader floor; nil for a floor the site does not have.
    private(set) var floors: [FloorIndex?] = []

    init() {}

    /// Resolves the ids the reader added since the last call (`tagIDs`, `floorIDs`: all the reader's
    /// ids so far, in its order), registering new tags with the engine (`register`).
    /// O(new ids).
    mutating func update(tagIDs: [TagID], floorIDs: [FloorID], site: Site, register: (TagID) -> TagIndex) {
        add(newTagIDs: tagIDs.dropFirst(tags.count), newFloorIDs: floorIDs.dropFirst(floors.count), site: site, register: register)
    }

    /// `update`, given only the ids the reader added since the last call (the reader's ids from
    /// number `tags.count` and `floors.count` on, in its order): a streamed reader's, handed over
    /// block by block without copying all its ids each time.
    mutating func add(newTagIDs: some Collection<TagID>, newFloorIDs: some Collection<FloorID>, site: Site,
                      register: (TagID) -> TagIndex) {
        for id in newTagIDs { tags.append(register(id)) }
        for id in newFloorIDs { floors.append(site.floorIndex(of: id)) }
    }

    /// The engine floor of a row with reader floor index `floorIndex` (< 0: none named → `defaultFloor`);
    /// nil when the site has no such floor.
    @inline(__always)
    func floor(_ floorIndex: Int32, default defaultFloor: FloorIndex) -> FloorIndex? {
        floorIndex < 0 ? defaultFloor : floors[Int(floorIndex)]
    }
}
