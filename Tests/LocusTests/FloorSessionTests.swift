import Foundation
@testable import Locus
import LocusCore
import LocusIO
import LocusTestSupport
import Testing

@Suite("Floor session")
struct FloorSessionTests {
    @Test("a session fed by a TraceProvider gives byte-identical positions and events to `locus replay`")
    func matchesReplay() async throws {
        let directory = TestPaths.temporaryDirectory()
        let positionsPath = directory + "/replay.csv", eventsPath = directory + "/replay.jsonl"
        let locus = SessionFixtures.productsDirectory.appendingPathComponent("locus")
        let process = Process()
        process.executableURL = locus
        process.arguments = ["replay", "--site", SessionFixtures.hallSite, "--trace", SessionFixtures.hallWalk,
                             "--positions", positionsPath, "--events", eventsPath]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)

        let session = try FloorSession(sitePath: SessionFixtures.hallSite)
        try session.setFloorMap("1F", buildingID: session.site.building.id)
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        try session.begin(provider: try TraceProvider(path: SessionFixtures.hallWalk))
        await session.waitForProvider()
        session.end()

        var positions = PositionsWriter()
        for p in recorder.positions { positions.append(p) }
        var events = ZoneEventWriter()
        for e in recorder.events { events.append(e) }
        let expectedPositions = TestPaths.bytes(positionsPath), expectedEvents = TestPaths.bytes(eventsPath)
        #expect(recorder.positions.count > 600)
        #expect(!recorder.events.isEmpty)
        #expect(positions.bytes == expectedPositions)
        #expect(events.bytes == expectedEvents)
    }

    @Test("positions and events are the same whatever the call sizes")
    func batchSizeIndependent() throws {
        let site = SessionFixtures.smallSite()
        var ranges = SessionFixtures.rounds(at: Point3(x: 2, y: 2, z: 1.2), count: 40)
        ranges += SessionFixtures.rounds(at: Point3(x: 12, y: 9, z: 1.2), count: 40, start: 10)
        func run(chunk: Int) throws -> ([PositionFix], [ZoneEvent]) {
            let session = try FloorSession(site: site, configuration: .init(floor: "1F"))
            let recorder = SessionRecorder()
            recorder.attach(to: session)
            try session.begin()
            var i = 0
            while i < ranges.count {
                try session.ingest(contentsOf: ranges[i..<min(ranges.count, i + chunk)])
                i += chunk
            }
            session.advance(toSeconds: 30)
            session.end()
            return (recorder.positions, recorder.events)
        }
        let one = try run(chunk: 1), many = try run(chunk: 97)
        #expect(one.0.count > 70)
        #expect(one.0 == many.0)
        #expect(one.1 == many.1)
        // Enter at 0 s, dwell at 5 s and 10 s (the last detection is at 9.775 s, the exit at 12.775 s).
        #expect(one.1.map(\.kind) == [.enter, .dwell, .dwell, .exit])
    }

    @Test("a chunk's positions and zone events reach the callbacks interleaved in time order, not all positions first (an event after the positions up to its time)")
    func interleavedDelivery() throws {
        let site = try SiteDecoder.load(path: SessionFixtures.hallSite)
        let trace = try TraceReader.read(path: SessionFixtures.hallWalk)
        let session = try FloorSession(site: site, configuration: .init(floor: "1F"))
        let order = Mutex<[(time: Double, isEvent: Bool)]>([])
        session.onPosition = { fix in order.withLock { $0.append((fix.timeSeconds, false)) } }
        session.onZoneEnter = { _, e in order.withLock { $0.append((e.timeSeconds, true)) } }
        session.onZoneExit = { _, e in order.withLock { $0.append((e.timeSeconds, true)) } }
        session.onZoneDwell = { _, _, e in order.withLock { $0.append((e.timeSeconds, true)) } }
        try session.begin()
        // The whole trace in one call: every position and event of it is released by that call.
        try session.ingest(contentsOf: (0..<trace.rows.count).map { trace.measurement($0) })
        session.end()
        let seen = order.withLock { $0 }
        #expect(seen.contains { $0.isEvent } && seen.contains { !$0.isEvent })
        // Times never go back; at equal times the positions come first.
        for k in 1..<seen.count {
            let (a, b) = (seen[k - 1], seen[k])
            #expect(a.time < b.time || (a.time == b.time && (!a.isEvent || b.isEvent)), "item \(k): \(a) then \(b)")
            if a.time > b.time { break }
        }
        // The first event is delivered right after the position it follows, not after the last position.
        let firstEvent = try #require(seen.firstIndex { $0.isEvent })
        #expect(firstEvent < seen.count / 10, "first event at item \(firstEvent) of \(seen.count)")
    }

    @Test("callers on several threads at once: every position is handed out once, in order per tag, and delivered in callback order")
    func concurrentCallers() async throws {
        let sink = RecordingSink()
        let session = try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "1F"), sink: sink)
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        try session.begin()
        await withTaskGroup(of: Void.self) { group in
            for k in 0..<4 {
                let rows = SessionFixtures.rounds(at: Point3(x: 3 + 3 * Double(k), y: 7, z: 1.2), count: 40, tag: TagID("T\(k)"))
                group.addTask {
                    for chunk in stride(from: 0, to: rows.count, by: 7) {
                        try? session.ingest(contentsOf: rows[chunk..<min(rows.count, chunk + 7)])
                        if chunk % 35 == 0 { session.send() }
                    }
                }
            }
        }
        session.end()
        let positions = recorder.positions
        #expect(positions.count > 100)
        // Across tags the order follows the arrival of the rows (each thread plays one tag's whole
        // timeline), so only each tag's own order is fixed.
        for (_, own) in Dictionary(grouping: positions, by: \.tag) {
            #expect(zip(own, own.dropFirst()).allSatisfy { a, b in a.timeSeconds < b.timeSeconds })
            #expect(own.count >= 38)
        }
        #expect(Set(positions.map { "\($0.tag)@\($0.timeSeconds)" }).count == positions.count)
        #expect(session.undeliveredPositionCount == 0)
        #expect(sink.delivered.flatMap(\.positions) == positions)
    }

    @Test("a session on a one-floor site without a floor map positions on the site's floor, as locus replay does")
    func singleFloorIsTheFloorMap() throws {
        var site = SessionFixtures.smallSite()
        site.floors = [site.floors[0]]
        let session = try FloorSession(site: site)
        #expect(session.floor?.id == site.floors[0].id)
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        try session.begin()
        try session.ingest(contentsOf: SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: 8))
        session.end()
        #expect(recorder.positions.count >= 6)
        #expect(!recorder.logs.contains { $0.1.hasPrefix("[E3001]") })
    }

    @Test("zone callbacks carry the site's zone and the dwell seconds")
    func zoneCallbacks() throws {
        let session = try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "1F"))
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        try session.begin()
        try session.ingest(contentsOf: SessionFixtures.rounds(at: Point3(x: 2, y: 2, z: 1.2), count: 48))
        session.advance(toSeconds: 30)
        session.end()
        let snapshot = recorder.snapshot.withLock { $0 }
        #expect(snapshot.zoneNames == ["Room", "Room", "Room", "Room"])
        #expect(snapshot.dwellSeconds == [5, 10])
        #expect(snapshot.events.map(\.kind) == [.enter, .dwell, .dwell, .exit])
    }

    @Test("without a floor map on a site of several floors, rows that name no floor are refused with E3001 and logged; setFloorMap switches while running")
    func noFloorMap() throws {
        let session = try FloorSession(site: SessionFixtures.smallSite())
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        try session.begin()
        #expect(session.floor == nil)
        let refused = #expect(throws: LocusError.self) {
            try session.ingest(contentsOf: SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: 4))
        }
        #expect(refused?.code == .noFloorMap)
        #expect(refused?.message.hasPrefix("24 ranges named no floor") == true)
        #expect(recorder.logs.contains { $0.0 == .warn && $0.1.hasPrefix("[E3001]") })
        try session.setFloorMap("1F", buildingID: "b1")
        #expect(session.floor?.id == "1F")
        try session.ingest(contentsOf: SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: 8, start: 2))
        session.end()
        #expect(recorder.positions.count >= 6)
        #expect(recorder.positions.allSatisfy { $0.floor == "1F" })
        #expect(throws: LocusError.self) { try session.setFloorMap("9F", buildingID: "b1") }
        #expect(throws: LocusError.self) { try session.setFloorMap("1F", buildingID: "other") }
    }

    @Test("a tag can be put on its own floor; rows that name a floor keep theirs")
    func floorPerTag() throws {
        let session = try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "1F", positioning: .leastSquares))
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        try session.setFloor("2F", forTag: "T2")
        #expect(throws: LocusError.self) { try session.setFloor("9F", forTag: "T2") }
        try session.begin()
        let p = Point3(x: 8, y: 8, z: 1.2)
        var rows = SessionFixtures.rounds(at: p, count: 4, tag: "T1") + SessionFixtures.rounds(at: p, count: 4, tag: "T2")
        rows += SessionFixtures.rounds(at: p, count: 4, tag: "T3").map { var m = $0; m.floor = "2F"; return m }
        try session.ingest(contentsOf: rows.sorted { $0.timeSeconds < $1.timeSeconds })
        session.end()
        let floors = Dictionary(grouping: recorder.positions, by: \.tag).mapValues { Set($0.map(\.floor)) }
        #expect(floors["T1"] == ["1F"])
        #expect(floors["T2"] == ["2F"])
        #expect(floors["T3"] == ["2F"])
        #expect(session.refreshZones().map(\.id) == ["room"])
    }

    @Test("an empty floor is logged at info with E3003, not as an error")
    func emptyFloorIsInfo() throws {
        let session = try FloorSession(site: SessionFixtures.smallSite(zones: false))
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        try session.setFloorMap("1F", buildingID: "b1")
        let logs = recorder.logs
        #expect(logs.contains { $0.0 == .info && $0.1.hasPrefix("[E3003]") })
        #expect(!logs.contains { $0.0 >= .warn })
        #expect(session.refreshZones().isEmpty)
    }

    @Test("log levels order log < info < warn < error, and the hook sees only its level and above")
    func logLevels() throws {
        #expect(LogLevel.log < .info && LogLevel.info < .warn && LogLevel.warn < .error)
        #expect(LogLevel.allCases.sorted() == [.log, .info, .warn, .error])
        let session = try FloorSession(site: SessionFixtures.smallSite(zones: false))
        let recorder = SessionRecorder()
        recorder.attach(to: session, minimumLevel: .warn)
        try session.setFloorMap("1F", buildingID: "b1")
        try session.begin()
        session.end()
        #expect(recorder.logs.isEmpty)
    }

    @Test("log texts come in English, Korean and Japanese, each with its code")
    func languages() throws {
        let session = try FloorSession(site: SessionFixtures.smallSite(zones: false))
        let recorder = SessionRecorder()
        recorder.attach(to: session, minimumLevel: .info)
        for code in ["en", "ko", "ja"] {
            try session.setLanguage(code)
            try session.setFloorMap("1F", buildingID: "b1")
        }
        let texts = recorder.logs.map(\.1).filter { $0.hasPrefix("[E3003]") }
        #expect(texts.count == 3)
        #expect(texts[0].contains("has no zones yet"))
        #expect(texts[1].contains("구역"))
        #expect(texts[2].contains("ゾーン"))
        #expect(throws: LocusError.self) { try session.setLanguage("fr") }
        #expect(LogLanguage.processLocale { $0 == "LANG" ? "ko_KR.UTF-8" : nil } == .korean)
        #expect(LogLanguage.processLocale { $0 == "LC_ALL" ? "ja_JP" : ($0 == "LANG" ? "ko_KR" : nil) } == .japanese)
        #expect(LogLanguage.processLocale { _ in nil } == .english)
    }

    @Test("epochs without a fix are logged with their E4xxx code, never thrown")
    func runTimeCodes() throws {
        let session = try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "1F", positioning: .leastSquares))
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        try session.begin()
        // Two locators per round: too few for a planar fix.
        let rounds = SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: 6).filter { $0.locator.rawValue < 102 }
        try session.ingest(contentsOf: rounds)
        session.end()
        #expect(recorder.positions.isEmpty)
        #expect(recorder.logs.contains { $0.0 == .warn && $0.1.hasPrefix("[E4001]") })
    }

    @Test("calls out of order: begin twice throws E1002; ranges before begin are dropped and logged")
    func callOrder() throws {
        let session = try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "1F"))
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        try session.ingest(SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: 1)[0])
        #expect(recorder.logs.contains { $0.1.hasPrefix("[E1002]") })
        #expect(!session.isRunning)
        try session.begin()
        #expect(session.isRunning)
        do {
            try session.begin()
            Issue.record("begin twice did not throw")
        } catch {
            #expect(error.code == .callOrder)
        }
        session.end()
        #expect(!session.isRunning)
        #expect(throws: LocusError.self) { try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "nope")) }
    }

    @Test("a mock provider's positions are judged into zone events; its zone events pass through")
    func mockProvider() throws {
        let session = try FloorSession(site: SessionFixtures.smallSite())
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        let mock = MockPositioningProvider(tag: "M1")
        mock.simulatePosition(Point3(x: 1, y: 1, z: 0), floorID: "1F", at: 0)  // before begin: ignored
        try session.begin(provider: mock)
        mock.simulateEnter(buildingID: "b1")
        #expect(session.floor?.id == "1F")
        for k in 0..<8 { mock.simulatePosition(Point3(x: 2, y: 2, z: 1.2), floorID: "1F", at: Double(k) * 0.25) }
        #expect(recorder.positions.count == 8)
        #expect(recorder.events.map(\.kind) == [.enter])
        #expect(recorder.events.first?.timeSeconds == 0)
        mock.simulateZone("lobby", status: .enter, floorID: "2F", at: 10)
        mock.simulateZone("lobby", status: .dwell, floorID: "2F", at: 15)
        mock.simulateZone("lobby", status: .exit, floorID: "2F", at: 16)
        let simulated = recorder.events.filter { $0.zone == "lobby" }
        #expect(simulated.map(\.kind) == [.enter, .dwell, .exit])
        #expect(simulated[1].dwellSeconds == 5)
        session.end()
        mock.simulatePosition(Point3(x: 1, y: 1, z: 0), floorID: "1F", at: 20)  // after end: ignored
        #expect(recorder.positions.count == 8)
    }

    @Test("AsyncStreams carry the same positions and events as the callbacks and finish at end()")
    func streams() async throws {
        let session = try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "1F"))
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        let positions = session.positionStream(), events = session.zoneEventStream()
        try session.begin(provider: try TraceProvider(ranges: SessionFixtures.rounds(at: Point3(x: 2, y: 2, z: 1.2), count: 30)))
        await session.waitForProvider()
        session.advance(toSeconds: 20)
        session.end()
        var streamed: [PositionFix] = []
        for await p in positions { streamed.append(p) }
        var streamedEvents: [ZoneEvent] = []
        for await e in events { streamedEvents.append(e) }
        #expect(streamed.count > 20)
        #expect(streamed == recorder.positions)
        #expect(streamedEvents == recorder.events)
    }

    @Test("real-time playback sleeps the recording's own span (injected sleeper, no wall clock)")
    func realTimePace() async throws {
        let slept = SleepLog()
        let ranges = SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: 9)
        let provider = try TraceProvider(ranges: ranges, pace: .realTime(speed: 2), sleeper: { s in slept.add(s) })
        let session = try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "1F"))
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        try session.begin(provider: provider)
        await session.waitForProvider()
        session.end()
        // 8 × 0.25 s + 5 × 5 ms of data at double speed.
        #expect(abs(slept.total - provider.durationSeconds / 2) < 1e-9)
        #expect(abs(provider.durationSeconds - 2.025) < 1e-9)
        #expect(recorder.positions.count >= 7)
        #expect(throws: LocusError.self) { try TraceProvider(ranges: ranges, pace: .realTime(speed: 0)) }
    }
}

/// Sums requested sleeps.
final class SleepLog: Sendable {
    private let seconds = Mutex(0.0)
    func add(_ s: Double) { seconds.withLock { $0 += s } }
    var total: Double { seconds.withLock { $0 } }
}
import Synchronization
