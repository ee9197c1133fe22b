import Foundation
import Locus
import LocusTestSupport
import Testing

/// The SPEC files from Swift through the public API (`import Locus`, no `@testable`): sites read,
/// validated and written back, traces and truth read, positions and zone events written as `locus
/// replay` writes them (the golden files).
@Suite("Site, trace, truth, positions and events files (public API)")
struct FormatsAPITests {
    /// `trace` through a session on `site` configured with `configuration`: what its callbacks gave.
    static func run(site: Site, trace: RangeTrace, configuration: FloorSession.Configuration) throws -> SessionRecorder {
        let session = try FloorSession(site: site, configuration: configuration)
        let out = SessionRecorder()
        out.attach(to: session)
        try session.begin()
        try session.ingest(contentsOf: trace.measurements)
        session.end()
        return out
    }

    @Test("A site read, written and read again is the same site; the input's address notation is kept")
    func siteRoundTrip() throws {
        let path = TestPaths.fixture("sites/hall.json")
        let site = try SiteDecoder.load(path: path)
        #expect(try SiteDecoder.decode(SiteEncoder.encode(site), file: "<encoded>") == site)
        let (notated, notation) = try SiteDecoder.loadNotated(path: path)
        #expect(notated == site)
        let written = String(decoding: SiteEncoder.encode(site, addressNotation: notation), as: UTF8.self)
        let original = try String(contentsOfFile: path, encoding: .utf8)
        let addresses = { (text: String) in text.split(separator: "\"address\"").dropFirst().map { $0.prefix(12) } }
        #expect(addresses(written) == addresses(original))
    }

    @Test("An invalid site gives every error with its code and JSON path; load throws the first")
    func invalidSite() {
        let path = TestPaths.fixture("sites/invalid/duplicate-address.json")
        let (site, errors) = SiteDecoder.validate(path: path)
        #expect(site == nil && errors.first?.code == .siteDuplicateAddress)
        #expect(errors.first?.context.jsonPath?.contains("address") == true && errors.first?.context.file == path)
        do {
            _ = try SiteDecoder.load(path: path)
            Issue.record("an invalid site loaded")
        } catch {
            #expect(error == errors.first)
        }
        #expect(SiteDecoder.validate(path: "/nonexistent/site.json").errors.map(\.code) == [.fileUnreadable])
    }

    @Test("A trace's rows become measurements; bad rows are skipped and counted by reason with their first line")
    func traceRows() throws {
        let trace = try TraceReader.read(path: TestPaths.fixture("traces/hall-walk.csv"))
        #expect(trace.count > 1000 && trace.measurements.count == trace.count && trace.skipped.total == 0)
        #expect(trace.tags.count == 2)
        let directory = TestPaths.temporaryDirectory()
        let bad = directory + "/bad.csv"
        try Data("t,tag,anchor,range_m\n0.1,T1,0x9DD7,4.2\n0.2,T1,0x9DD7,-1\n0.3,T1,zzz,4.0\n0.4,T1,0x9DD8,nan\n".utf8)
            .write(to: URL(fileURLWithPath: bad))
        let read = try TraceReader.read(path: bad)
        #expect(read.count == 1 && read.skipped.total == 3)
        #expect(read.skipped.count(.negativeRange) == 1 && read.skipped.firstLine(.negativeRange) == 3)
        #expect(read.skipped.count(.invalidAnchor) == 1 && read.skipped.firstLine(.invalidAnchor) == 4)
        guard case .range(let r) = read.measurements[0] else { Issue.record("not a range"); return }
        #expect(r.tag == "T1" && r.locator == LocatorAddress(0x9DD7) && r.rangeMeters == 4.2 && r.timeSeconds == 0.1)
    }

    @Test("Positions and zone events written by PositionsWriter and ZoneEventWriter are locus replay's golden bytes")
    func goldenOutputs() throws {
        let site = try SiteDecoder.load(path: TestPaths.fixture("sites/hall.json"))
        let trace = try TraceReader.read(path: TestPaths.fixture("traces/hall-walk.csv"))
        let raw = try Self.run(site: site, trace: trace, configuration: .init(positioning: .leastSquares))
        var positions = PositionsWriter()
        for p in raw.positions { positions.append(p) }
        #expect(positions.bytes == TestPaths.bytes(TestPaths.fixture("golden/hall-walk.raw-positions.csv")))
        #expect(positions.bytes.starts(with: Array(PositionsWriter.header.utf8)))
        var events = ZoneEventWriter()
        for e in raw.events { events.append(e) }
        #expect(events.bytes == TestPaths.bytes(TestPaths.fixture("golden/hall-walk.raw-zones.events.jsonl")))
        let tracked = try Self.run(site: site, trace: trace, configuration: .standard)
        events.removeAll()
        for e in tracked.events { events.append(e) }
        #expect(events.bytes == TestPaths.bytes(TestPaths.fixture("golden/hall-walk.events.jsonl")))
    }

    @Test("Truth is interpolated per tag in time and is nil outside its samples")
    func truth() throws {
        let directory = TestPaths.temporaryDirectory()
        let path = directory + "/truth.csv"
        try Data("t,tag,x,y,z\n0,T1,0,0,1\n2,T1,4,2,1\n1,T2,5,5,1\n".utf8).write(to: URL(fileURLWithPath: path))
        let truth = try GroundTruth.read(path: path)
        #expect(truth.position(tag: "T1", at: 0.5) == Point3(x: 1, y: 0.5, z: 1))
        #expect(truth.position(tag: "T1", at: 2.5) == nil && truth.position(tag: "T3", at: 1) == nil)
        #expect(truth.samples(of: "T2")?.points == [Point3(x: 5, y: 5, z: 1)] && truth.skipped.total == 0)
    }
}
