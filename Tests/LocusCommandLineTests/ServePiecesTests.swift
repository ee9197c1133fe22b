import Foundation
import Locus
@testable import LocusCore
@testable import LocusIO
@testable import LocusServe
import LocusTestSupport
import Testing
@testable import LocusCommandLine

/// The parts of `locus serve` below the HTTP layer: the pacer, the frames, the site and geometry
/// JSON, the hearing table, the listen address.
@Suite("locus serve: pieces")
struct ServePiecesTests {
    private static func write(_ text: String) -> String {
        let path = TestPaths.temporaryDirectory() + "/trace.csv"
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }

    @Test("the pacer hands whole lines on as their time comes, in file order; comments go with the rows before them; a last line without newline is completed")
    func pacerLines() throws {
        let path = Self.write("# a comment\nfloor,range_m,t,tag,anchor\n1F,3.5,0.5,T1,1\n# note\n1F,3.6,1.0,T1,2\n1F,bad,2.0,T1,3\n1F,3.7,1.5,T1,4")
        var pacer = try ReplayPacer(path: path)
        #expect(String(decoding: pacer.header, as: UTF8.self) == "# a comment\nfloor,range_m,t,tag,anchor\n")
        #expect(try pacer.nextSeconds() == 0.5)
        var out: [UInt8] = []
        try pacer.take(dueSeconds: 0.9, into: &out)
        // The comment after the first row has no time: it goes with it.
        #expect(String(decoding: out, as: UTF8.self) == "1F,3.5,0.5,T1,1\n# note\n")
        #expect(pacer.firstSeconds == 0.5)
        out.removeAll()
        try pacer.take(dueSeconds: 1.9, into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "1F,3.6,1.0,T1,2\n")
        // A row stamped 2.0 holds back the row after it (1.5) until it is due.
        #expect(!pacer.isFinished)
        out.removeAll()
        try pacer.take(dueSeconds: .infinity, into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "1F,bad,2.0,T1,3\n1F,3.7,1.5,T1,4\n")
        #expect(pacer.isFinished)
        // Every byte handed on, the completed last newline included.
        #expect(pacer.consumedBytes == pacer.header.count + out.count + "1F,3.5,0.5,T1,1\n# note\n1F,3.6,1.0,T1,2\n".utf8.count)
    }

    @Test("a trace without a header or without a t column is refused, naming the file")
    func pacerRefuses() {
        #expect(throws: LocusError.self) { try ReplayPacer(path: Self.write("# only a comment\n")) }
        do {
            _ = try ReplayPacer(path: Self.write("tag,anchor,range_m\nT1,1,2\n"))
            Issue.record("no error")
        } catch {
            #expect(error.code == .csvMissingColumn && error.message.contains("no t column"))
            #expect(error.context.file?.hasSuffix("trace.csv") == true)
        }
    }

    @Test("the pacer reads a long trace in bounded pieces and hands on every byte once")
    func pacerLong() throws {
        var text = "t,tag,anchor,range_m\n"
        for i in 0..<100_000 { text += "\(Double(i) * 0.01),T\(i % 7),\(i % 4 + 1),\(3 + Double(i % 10) * 0.1)\n" }
        var pacer = try ReplayPacer(path: Self.write(text))
        var out: [UInt8] = [], steps = 0
        var due = 0.0
        while !pacer.isFinished {
            try pacer.take(dueSeconds: due, maximumBytes: 64 << 10, into: &out)
            due += 7.3
            steps += 1
        }
        #expect(pacer.header.count + out.count == text.utf8.count)
        #expect(String(decoding: pacer.header + out, as: UTF8.self) == text)
        #expect(steps > 10)
    }

    @Test("frames: fixes with truth and error, events as replay writes them, callInout false enter/exit marked silent, heard locators")
    func frames() throws {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        let quiet = site.floors[0].zones.first { !$0.rules.callInout }!
        let loud = site.floors[0].zones.first { $0.rules.callInout }!
        let judged = ServeFrames.judgedSite(site)
        #expect(judged.floors[0].zones.allSatisfy { $0.rules.callInout })
        let truth = try GroundTruth.read(path: TestPaths.fixture("traces/hall-walk-truth.csv"))
        var frames = ServeFrames(site: site, truth: truth)
        let none = frames.frame(heard: [], clockSeconds: 1)
        #expect(none == nil)
        let fix = PositionFix(timeSeconds: 10, tag: TagID("T1"), floor: site.floors[0].id, position: Point3(x: 5, y: 6, z: 1.1),
                              covariance: SymmetricMatrix3(xx: 0.01, yy: 0.01, zz: 0),
                              quality: FixQuality(hdop: 1, pdop: 1, residualRMSMeters: 0.1, locatorsUsed: 4))
        let events = [ZoneEvent(timeSeconds: 10, tag: TagID("T1"), floor: site.floors[0].id, zone: quiet.id, kind: .enter),
                      ZoneEvent(timeSeconds: 10, tag: TagID("T1"), floor: site.floors[0].id, zone: loud.id, kind: .enter),
                      ZoneEvent(timeSeconds: 15, tag: TagID("T1"), floor: site.floors[0].id, zone: quiet.id, kind: .dwell, dwellSeconds: 5)]
        frames.add(fixes: [fix], events: events)
        let written = frames.frame(heard: [(site.floors[0].id, LocatorAddress(0x9DD7), 9.5)], clockSeconds: 10)
        let bytes = try #require(written)
        #expect(!bytes.contains(0x0A))
        let json = try JSONParser.parse(bytes)
        let fixJSON = try #require(json["fixes"]?.arrayValue?.first)
        let p = try #require(truth.position(tag: TagID("T1"), at: 10))
        #expect(abs((fixJSON["err"]?.doubleValue ?? -1) - ((5 - p.x) * (5 - p.x) + (6 - p.y) * (6 - p.y)).squareRoot()) < 1e-3)
        #expect(fixJSON["r95"]?.doubleValue == (fix.horizontalAccuracy95Meters * 1000).rounded() / 1000)
        let listed = try #require(json["events"]?.arrayValue)
        #expect(listed.map { $0["silent"]?.boolValue } == [true, nil, nil])
        #expect(listed[1] == ZoneEventWriter.json(events[1]))
        #expect(json["heard"]?.arrayValue?.first?["address"]?.stringValue == "0x9DD7")
        #expect(frames.pendingCount == 0)
        let empty = frames.frame(heard: [], clockSeconds: 11)
        #expect(empty == nil)
    }

    @Test("hearing: each locator heard since the last take, once, with its latest time; unknown addresses and floors ignored")
    func hearing() throws {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        var hearing = LocatorHearing(site: site)
        let a = site.floors[0].locators[0].address, b = site.floors[0].locators[1].address
        hearing.hear(floor: 0, address: a.rawValue, at: 1)
        hearing.hear(floor: 0, address: b.rawValue, at: 2)
        hearing.hear(floor: 0, address: a.rawValue, at: 3)
        hearing.hear(floor: 0, address: 0xFFFE, at: 3)
        hearing.hear(floor: 7, address: a.rawValue, at: 3)
        hearing.hear(floor: 0, address: a.rawValue, at: .nan)
        var taken = hearing.take()
        #expect(taken.map(\.address) == [a, b] && taken.map(\.timeSeconds) == [3, 2])
        taken = hearing.take()
        #expect(taken.isEmpty)
        hearing.hear(floor: 0, address: b.rawValue, at: 1)  // older than known: the latest stays
        taken = hearing.take()
        #expect(taken.map(\.timeSeconds) == [2])
    }

    @Test("site JSON: floors, locators by address, zones with their rules, the mode; geometry JSON: a cell per grid cell")
    func siteAndGeometry() throws {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        let json = try JSONParser.parse(ServeSiteJSON.bytes(site: site, mode: .replay(source: "hall-walk.csv", speed: 2, hasTruth: true)))
        #expect(json["mode"]?.stringValue == "replay" && json["speed"]?.doubleValue == 2 && json["hasTruth"]?.boolValue == true)
        let floor = try #require(json["floors"]?.arrayValue?.first)
        #expect(floor["locators"]?.arrayValue?.count == site.floors[0].locators.count)
        #expect(floor["zones"]?.arrayValue?.map { $0["id"]?.stringValue } == site.floors[0].zones.map { $0.id.rawValue })
        let geometry = try JSONParser.parse(ServeGeometryJSON.bytes(floor: site.floors[0], sigmaMeters: 0.1))
        let nx = Int(geometry["nx"]?.doubleValue ?? -1), ny = Int(geometry["ny"]?.doubleValue ?? -1)
        #expect(nx > 0 && ny > 0 && geometry["hdop"]?.arrayValue?.count == nx * ny)
        #expect(geometry["hdop"]?.arrayValue?.contains { $0.doubleValue != nil } == true)
    }

    @Test("--listen: IPv4 HOST:PORT or localhost; anything else is a usage error")
    func listen() throws {
        let parsed = try ListenAddress(parsing: "127.0.0.1:8080")
        #expect(parsed.host == "127.0.0.1" && parsed.port == 8080)
        #expect(try ListenAddress(parsing: "localhost:0").host == "127.0.0.1")
        for bad in ["8080", "127.0.0.1", "example.com:80", "127.0.0.1:70000", "1.2.3:4", "127.0.0.1:-1", "[::1]:80"] {
            #expect(throws: LocusError.self, "\(bad)") { try ListenAddress(parsing: bad) }
        }
    }
}
