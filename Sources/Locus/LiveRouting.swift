import LocusCore
import LocusIO

/// One CSV reader's tag and floor ids resolved against `locus stream`'s bounded engine, row by row
/// (here, beside the engine, so that the per-row calls into it inline: one call per row from the stream).
///
/// The reader numbers ids in order of first appearance (`TraceRowParser.tags`, `.floors`); resolving
/// an id to the engine's index costs a hash, a number is an array read. But a bounded engine evicts
/// idle tags and hands their indices to new ids, so a remembered index is only good while no tag has
/// been evicted since: each entry keeps the engine's eviction count (`EngineDriver.tagsEvicted`) from
/// when it was resolved, and a row whose entry is older — or was refused — goes by id again. Every
/// row first lets the engine evict what is due (`evictIdleTagsIfDue`), exactly as feeding it by id
/// (`PositioningEngine.ingest(_:line:)`) would: eviction, then the tag (its limit), then the floor,
/// then the row — so the outputs and counts are those of the by-id path, whatever the batches or
/// when the reader forgets its ids (`forget()`, with `TraceRowParser.forgetIDs`). Nothing is
/// registered until a row of the tag reaches the engine — which keeps the reader's order of first
/// appearance, the order the replay's `ReaderRouting` registers in (fixes at equal times leave in tag
/// index order): the reader interns a tag only at a row it keeps, and a tag's first row always
/// passes its clock, so every tag it met has its first row fed, in its order.
package struct LiveRouting: Sendable {
    /// Per reader tag: the engine's index (−1: not resolved, or refused) and the eviction count then.
    private var tags: [(index: Int32, evictions: Int)] = []
    /// Per reader floor: the site's floor, nil when it has none (resolved as first met).
    private var floors: [FloorIndex?] = []

    package init() {}

    /// Forgets every resolution (the reader forgot its ids).
    package mutating func forget() {
        tags = []
        floors = []
    }

    /// Feeds one row read by `parser` to the engine (skips counted there).
    package mutating func feed(_ r: TraceRow, parser: TraceRowParser, driver: inout EngineDriver, site: Site) {
        driver.evictIdleTagsIfDue()
        let k = Int(r.tagIndex), line = Int(r.line)
        if k >= tags.count { tags.append(contentsOf: repeatElement((index: Int32(-1), evictions: -1), count: k + 1 - tags.count)) }
        let tag: TagIndex
        if tags[k].index >= 0, tags[k].evictions == driver.tagsEvicted {
            tag = TagIndex(Int(tags[k].index))
        } else {
            guard let resolved = driver.admittedTagIndex(for: parser.tags[k], line: line) else { return }
            tags[k] = (Int32(truncatingIfNeeded: resolved.rawValue), driver.tagsEvicted)
            tag = resolved
        }
        var floor = driver.engine.defaultFloor
        if r.floorIndex >= 0 {
            let f = Int(r.floorIndex)
            while floors.count <= f { floors.append(site.floorIndex(of: parser.floors[floors.count])) }
            guard let known = floors[f] else { driver.recordSkipped(.unknownFloor, line: line); return }
            floor = known
        }
        if r.isDifference {
            driver.ingest(tag: tag, floor: floor, reference: r.reference, locator: r.locator, differenceMeters: r.differenceMeters,
                          timeSeconds: r.timeSeconds, line: line)
        } else {
            driver.ingest(tag: tag, floor: floor, locator: r.locator, rangeMeters: r.rangeMeters, timeSeconds: r.timeSeconds, line: line)
        }
    }
}
