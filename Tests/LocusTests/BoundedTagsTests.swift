@testable import Locus
@testable import LocusCore
@testable import LocusIO
import LocusTestSupport
import Testing

/// Issue #41 item 4: the engine's per-tag state is bounded (`EngineConfiguration.tagLimit`): a new
/// tag beyond the limit is skipped as `tag_limit`, an idle tag is evicted once its zones have exited
/// per `outPeriod`, and its index is reused — without changing a byte of the other tags' output.
@Suite("Bounded tags: limit, idle eviction, index reuse")
struct BoundedTagsTests {
    /// SoakTests' room: 4 locators, zones a–d (outPeriod 3 s, inCountInterval 1 s).
    static let site = SoakTests.site()

    /// One round of ranges of `tag` at `p`, time t (the four locators 1 ms apart), noise-free.
    static func round(_ tag: String, at p: Point3, time t: Double) -> [RangeMeasurement] {
        site.floors[0].locators.enumerated().map { i, locator in
            RangeMeasurement(timeSeconds: t + 0.001 * Double(i), tag: TagID(tag), locator: locator.address,
                             rangeMeters: p.distance(to: locator.position))
        }
    }

    /// Honest tags H0…H4 walking (SoakTests' walk) a round each 0.25 s for `seconds`, and a flood
    /// of new ids F0, F1, … — one round each, every `floodEvery` seconds, standing inside zone a —
    /// interleaved in time order.
    static func rows(seconds: Double, floodEvery: Double) -> [RangeMeasurement] {
        var rows: [RangeMeasurement] = []
        var t = 0.0
        while t < seconds {
            for j in 0..<5 { rows += round("H\(j)", at: SoakTests.position(tag: j, atSeconds: t), time: t + 0.01 * Double(j)) }
            t += 0.25
        }
        var k = 0, f = 0.003
        while f < seconds {
            rows += round("F\(k)", at: Point3(x: 6, y: 5.5, z: 1.1), time: f)
            k += 1
            f += floodEvery
        }
        return rows.sorted { ($0.timeSeconds, $0.tag.rawValue) < ($1.timeSeconds, $1.tag.rawValue) }
    }

    static func run(_ rows: [RangeMeasurement], _ configuration: EngineConfiguration) throws -> PositioningEngine {
        var engine = try PositioningEngine(site: site, configuration: configuration)
        for (i, row) in rows.enumerated() { engine.ingest(row, line: i + 1) }
        engine.finish()
        return engine
    }

    @Test("a new tag beyond the limit is skipped as tag_limit and counted; the live tags are not displaced")
    func limitRefusesNewTags() throws {
        var configuration = EngineConfiguration(tracking: .none)
        configuration.tagLimit = .init(maximumTags: 2, idleSeconds: 10)
        var rows = Self.round("A", at: Point3(x: 5, y: 5, z: 1.1), time: 0) + Self.round("B", at: Point3(x: 20, y: 5, z: 1.1), time: 0.01)
        rows += Self.round("C", at: Point3(x: 15, y: 15, z: 1.1), time: 0.02)
        rows += Self.round("A", at: Point3(x: 5, y: 5, z: 1.1), time: 1) + Self.round("B", at: Point3(x: 20, y: 5, z: 1.1), time: 1.01)
        let engine = try Self.run(rows, configuration)
        #expect(engine.diagnostics.skipped.count(.tagLimit) == 4)
        #expect(engine.liveTagCount == 2)
        #expect(Set(engine.fixes.map(\.tag.rawValue)) == ["A", "B"])
        #expect(engine.fixes.count == 4)
        #expect(engine.diagnostics.tagsEvicted == 0)
    }

    @Test("an invalid limit is refused with E1003; an engine with a limit is not partitioned")
    func invalidLimit() throws {
        for limit in [EngineConfiguration.TagLimit(maximumTags: 0, idleSeconds: 1), .init(maximumTags: 5, idleSeconds: 0),
                      .init(maximumTags: 5, idleSeconds: .nan), .init(maximumTags: 5, idleSeconds: .infinity)] {
            var configuration = EngineConfiguration()
            configuration.tagLimit = limit
            #expect(throws: LocusError.self) { _ = try PositioningEngine(site: Self.site, configuration: configuration) }
        }
        var configuration = EngineConfiguration()
        configuration.tagLimit = .init(maximumTags: 5, idleSeconds: 1)
        var engine = try PositioningEngine(site: Self.site, configuration: configuration)
        #expect(throws: LocusError.self) { try engine.setPartition(index: 0, count: 2) }
    }

    @Test("a tag idle inside a zone exits per outPeriod first, then is evicted; its index goes to the next new tag")
    func evictionWaitsForTheExit() throws {
        var configuration = EngineConfiguration(tracking: .none)
        configuration.tagLimit = .init(maximumTags: 4, idleSeconds: 1)  // shorter than outPeriod (3 s)
        var engine = try PositioningEngine(site: Self.site, configuration: configuration)
        for row in Self.round("A", at: Point3(x: 6, y: 5.5, z: 1.1), time: 0) { engine.ingest(row) }
        // Another tag keeps the clock going; A, silent, is past its idle time at 1 s but inside zone a.
        var t = 0.5
        while t < 3.0 {
            for row in Self.round("B", at: Point3(x: 25, y: 3, z: 1.1), time: t) { engine.ingest(row) }
            t += 0.5
        }
        #expect(engine.diagnostics.tagsEvicted == 0, "A is inside zone a until its exit is decided")
        #expect(engine.events.filter { $0.tag == "A" }.map(\.kind) == [.enter])
        while t < 4.5 {
            for row in Self.round("B", at: Point3(x: 25, y: 3, z: 1.1), time: t) { engine.ingest(row) }
            t += 0.5
        }
        let exit = try #require(engine.events.first { $0.tag == "A" && $0.kind == .exit })
        #expect(exit.timeSeconds == 3.003, "the exit at the last detection + outPeriod, as without a limit")
        #expect(engine.diagnostics.tagsEvicted == 1)
        #expect(engine.registeredTagIndex("A") == nil)
        for row in Self.round("C", at: Point3(x: 15, y: 10, z: 1.1), time: t) { engine.ingest(row) }
        #expect(engine.registeredTagIndex("C") == TagIndex(0), "C takes A's index")
        #expect(engine.tagCount == 2, "no per-tag array grew")
        engine.finish()
        #expect(engine.fixes.filter { $0.tag == "C" }.count == 1)
    }

    @Test("a row of an evicted tag from before its eviction is skipped as time_backwards, so its fixes never go back in time; a new tag as far behind likewise; a row within the idle time is admitted",
          arguments: [EngineConfiguration.Tracking.none, .kalman(.standard)])
    func evictedTagCannotGoBack(tracking: EngineConfiguration.Tracking) throws {
        var configuration = EngineConfiguration(tracking: tracking)
        configuration.tagLimit = .init(maximumTags: 3, idleSeconds: 2)
        var engine = try PositioningEngine(site: Self.site, configuration: configuration)
        let p = Point3(x: 25, y: 3, z: 1.1), q = Point3(x: 24, y: 4, z: 1.1)
        for row in Self.round("A", at: p, time: 20) + Self.round("A", at: p, time: 20.25) { engine.ingest(row) }
        // B moves the clock to 200 s: A, silent since 20.25 s, is evicted.
        for row in Self.round("B", at: q, time: 200) { engine.ingest(row) }
        engine.advance(toSeconds: 200.5)
        #expect(engine.diagnostics.tagsEvicted == 1)
        #expect(engine.registeredTagIndex("A") == nil)
        // A late (or replayed) round of A from before its eviction; a new tag's round as far behind.
        for row in Self.round("A", at: p, time: 2) + Self.round("C", at: p, time: 150) { engine.ingest(row) }
        #expect(engine.diagnostics.skipped.count(.timeBackwards) == 8)
        // A back within the idle time of the clock: admitted, a fresh tag.
        for row in Self.round("A", at: p, time: 199) + Self.round("A", at: p, time: 200.75) { engine.ingest(row) }
        engine.finish()
        let times = engine.fixes.filter { $0.tag == "A" }.map(\.timeSeconds)
        #expect(times.count == 4)
        #expect(times == times.sorted(), "A's fixes in time order across its eviction: \(times)")
        #expect(times.first! < 21 && times.last! > 199)
        #expect(!engine.fixes.contains { $0.tag == "C" })
        #expect(engine.diagnostics.skipped.total == 8)
    }

    @Test("releaseLatenessSeconds: a tag whose rows are ingested 0.6 s behind the others' gives the in-order run's fixes and events with a lateness of 0.7 s, not with 0; a lateness out of 0…3600 s is refused with E1003",
          arguments: [EngineConfiguration.Tracking.none, .kalman(.standard)])
    func releaseLateness(tracking: EngineConfiguration.Tracking) throws {
        let rows = Self.rows(seconds: 30, floodEvery: 1)
        let reference = try Self.run(rows, EngineConfiguration(tracking: tracking))
        // The same rows in the order a slower gateway of H1 would deliver them: H1's 0.6 s late.
        let late = rows.enumerated().sorted { a, b in
            func arrival(_ r: RangeMeasurement) -> Double { r.timeSeconds + (r.tag == "H1" ? 0.6 : 0) }
            return (arrival(a.element), a.offset) < (arrival(b.element), b.offset)
        }.map(\.element)
        var configuration = EngineConfiguration(tracking: tracking)
        let plain = try Self.run(late, configuration)
        #expect(plain.fixes.map(\.timeSeconds) != plain.fixes.map(\.timeSeconds).sorted(), "H1's fixes leave after later ones")
        #expect(plain.events != reference.events, "H1's events judged at the clock, not at its fixes' times")
        #expect(plain.diagnostics.lateFixes > 0 && plain.diagnostics.lateFixes <= plain.fixes.filter { $0.tag == "H1" }.count)
        configuration.releaseLatenessSeconds = 0.7
        let held = try Self.run(late, configuration)
        #expect(held.fixes == reference.fixes)
        #expect(held.events == reference.events)
        #expect(held.diagnostics.lateFixes == 0 && reference.diagnostics.lateFixes == 0)
        for bad in [-0.1, 3601, .nan, .infinity] {
            configuration.releaseLatenessSeconds = bad
            #expect(throws: LocusError.self) { _ = try PositioningEngine(site: Self.site, configuration: configuration) }
        }
    }

    @Test("a flood of new ids: the honest tags' fixes and events are byte-identical to a run without a limit; every flood tag in a zone exits before it goes; no array beyond the limit",
          arguments: [EngineConfiguration.Tracking.none, .kalman(.standard)])
    func floodLeavesHonestTagsAlone(tracking: EngineConfiguration.Tracking) throws {
        let rows = Self.rows(seconds: 60, floodEvery: 0.05)  // 1,200 flood ids, 20 a second, each inside zone a
        let reference = try Self.run(rows, EngineConfiguration(tracking: tracking))
        var configuration = EngineConfiguration(tracking: tracking)
        configuration.tagLimit = .init(maximumTags: 40, idleSeconds: 0.5)
        let bounded = try Self.run(rows, configuration)

        let refused = bounded.diagnostics.skipped.count(.tagLimit)
        #expect(refused > 0, "the flood outruns the limit")
        #expect(bounded.diagnostics.tagsEvicted > 500, "flood tags leave about 3.5 s after their round: 35 slots, about 10 a second")
        #expect(bounded.tagCount <= 40 && bounded.registry.ids.count <= 40, "no per-tag array beyond the limit")
        #expect(bounded.judges.judges[0].retainedCounts.tags <= 40)
        // The honest tags (never idle, registered before the flood filled the limit): exactly the
        // unbounded run's fixes and events.
        func honest(_ tag: TagID) -> Bool { tag.rawValue.hasPrefix("H") }
        #expect(bounded.fixes.filter { honest($0.tag) } == reference.fixes.filter { honest($0.tag) })
        #expect(bounded.events.filter { honest($0.tag) } == reference.events.filter { honest($0.tag) })
        #expect(Set(bounded.fixes.map(\.tag)).filter(honest).count == 5)
        // Every flood tag that entered zone a left it (per outPeriod, 3 s after its round) before it
        // was evicted: enters and exits pair up, tag by tag.
        let flood = bounded.events.filter { !honest($0.tag) }
        #expect(flood.contains { $0.kind == .exit })
        for (tag, events) in Dictionary(grouping: flood, by: \.tag) where events.allSatisfy({ $0.timeSeconds < 55 }) {
            #expect(events.filter { $0.kind == .enter }.count == events.filter { $0.kind == .exit }.count, "\(tag)")
        }
        #expect(bounded.diagnostics.skipped.total == refused)
        #expect(reference.diagnostics.tagsEvicted == 0)
    }

    @Test("LiveRouting (locus stream's CSV readers): a tag evicted and back while its old index names another tag goes by id again — the same fixes, events and counts as feeding every row by id, whatever the batches and when the reader forgets")
    func routingSurvivesIndexReuse() throws {
        // Limit 3, idle 1 s. A (index 0) falls silent after 1 s and is evicted; C, new at 2.5 s,
        // takes index 0; A is back at 3 s while C is live: its remembered index 0 is C's now.
        var rows: [RangeMeasurement] = []
        var t = 0.0
        while t < 8 {
            rows += Self.round("B", at: Point3(x: 25, y: 3, z: 1.1), time: t + 0.01)
            if t <= 1 || t >= 3 { rows += Self.round("A", at: Point3(x: 12 + 0.1 * t, y: 2, z: 1.1), time: t + 0.02) }  // A in no zone
            if t >= 2.5 && t <= 5 { rows += Self.round("C", at: Point3(x: 15, y: 15 - t, z: 1.1), time: t + 0.03) }
            t += 0.25
        }
        // Values the CSV spells exactly (4 decimals), so both paths see the same numbers.
        rows = rows.map {
            var r = $0
            r.timeSeconds = ($0.timeSeconds * 1e4).rounded() / 1e4
            r.rangeMeters = ($0.rangeMeters * 1e4).rounded() / 1e4
            return r
        }
        var configuration = EngineConfiguration()
        configuration.tagLimit = .init(maximumTags: 3, idleSeconds: 1)
        var byID = try EngineDriver(site: Self.site, configuration: configuration)
        for (i, row) in rows.enumerated() { byID.ingest(row, line: i + 1) }
        try byID.finish()
        #expect(byID.diagnostics.tagsEvicted >= 1)
        #expect(byID.engine.registeredTagIndex("A") != TagIndex(0), "A came back under a new index")

        let csv = rows.map { "\(DecimalText.string($0.timeSeconds, decimals: 4)),\($0.tag.rawValue),\($0.locator.rawValue),\(DecimalText.string($0.rangeMeters, decimals: 4))\n" }
        for batch in [1, 7, 64, rows.count] {
            var parser = try TraceRowParser(header: Array("t,tag,anchor,range_m\n".utf8).span, file: "<rows>")
            var routing = LiveRouting()
            var driver = try EngineDriver(site: Self.site, configuration: configuration)
            var scratch: [TraceRow] = []
            var start = 0, batches = 0
            while start < csv.count {
                let bytes = Array(csv[start..<min(csv.count, start + batch)].joined().utf8)
                scratch.removeAll()
                _ = parser.parse(bytes.span, isLast: true, into: &scratch)
                for r in scratch { routing.feed(r, parser: parser, driver: &driver, site: Self.site) }
                start += batch
                batches += 1
                if batches % 5 == 0 { parser.forgetIDs(); routing.forget() }
            }
            try driver.finish()
            #expect(driver.engine.fixes == byID.engine.fixes, "batch \(batch)")
            #expect(driver.engine.events == byID.engine.events, "batch \(batch)")
            #expect(driver.diagnostics == byID.diagnostics, "batch \(batch)")
        }
    }

    @Test("LiveRouting gives tags the reader's order of first appearance, as the replay's ReaderRouting does, though a tag's first row is skipped by the engine: fixes at equal times leave in the same order")
    func routingKeepsFirstAppearanceOrder() throws {
        var csv = "0.5000,X,999,5.0\n"  // X met first, its row skipped (unknown anchor: the engine's skip)
        for (i, locator) in Self.site.floors[0].locators.enumerated() {
            let t = DecimalText.string(1 + 0.001 * Double(i), decimals: 4)
            let y = Point3(x: 25, y: 3, z: 1.1).distance(to: locator.position), x = Point3(x: 13, y: 2, z: 1.1).distance(to: locator.position)
            csv += "\(t),Y,\(locator.address.rawValue),\(DecimalText.string(y, decimals: 4))\n"
            csv += "\(t),X,\(locator.address.rawValue),\(DecimalText.string(x, decimals: 4))\n"
        }
        func parse() throws -> (TraceRowParser, [TraceRow]) {
            var parser = try TraceRowParser(header: Array("t,tag,anchor,range_m\n".utf8).span, file: "<rows>")
            var rows: [TraceRow] = []
            _ = parser.parse(Array(csv.utf8).span, isLast: true, into: &rows)
            return (parser, rows)
        }
        let configuration = EngineConfiguration(tracking: .none)
        var replay = try EngineDriver(site: Self.site, configuration: configuration)
        var (parser, rows) = try parse()
        var readerRouting = ReaderRouting()
        readerRouting.update(tagIDs: parser.tags, floorIDs: parser.floors, site: Self.site) { replay.tagIndex(for: $0) }
        for r in rows { replay.ingest(r, routing: readerRouting) }
        try replay.finish()
        #expect(replay.engine.fixes.map(\.tag) == ["X", "Y"], "equal times: X, met first, leaves first")

        var bounded = configuration
        bounded.tagLimit = .init(maximumTags: 10, idleSeconds: 60)
        for c in [configuration, bounded] {
            var driver = try EngineDriver(site: Self.site, configuration: c)
            var routing = LiveRouting()
            (parser, rows) = try parse()
            for r in rows { routing.feed(r, parser: parser, driver: &driver, site: Self.site) }
            try driver.finish()
            #expect(driver.engine.fixes == replay.engine.fixes)
            #expect(driver.diagnostics.skipped == replay.diagnostics.skipped)
        }
    }
}
