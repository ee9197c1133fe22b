import Locus
import LocusTestSupport
import Testing

/// The vocabulary's public helpers and the session's solver and filter settings, through `import Locus`
/// alone (no `@testable`).
@Suite("Vocabulary helpers and FloorSession.Configuration (public API)")
struct VocabularyAPITests {
    @Test("Addresses parse in hex or decimal, the bias model inverts a range, points measure, matrices and vectors check and scale")
    func helpers() {
        #expect(LocatorAddress(parsing: "0x9dd7") == LocatorAddress(0x9DD7) && LocatorAddress(parsing: " 40407 ") == LocatorAddress(0x9DD7))
        #expect(LocatorAddress(parsing: "0x1_0000") == nil && LocatorAddress(parsing: "65536") == nil && LocatorAddress(parsing: "9DD7") == nil)
        let l = Locator(address: LocatorAddress(1), position: Point3(x: 0, y: 0, z: 2), biasMeters: 0.2, biasSlope: 0.01)
        #expect(abs(l.correctedRange(0.2 + 1.01 * 7) - 7) < 1e-12)
        #expect(Point2(x: 0, y: 0).distance(to: Point2(x: 3, y: 4)) == 5)
        #expect(SymmetricMatrix3(xx: 1, yy: 1, zz: 0).isFinite && !SymmetricMatrix3(xx: .nan, yy: 1, zz: 0).isFinite)
        let v = Vector3(x: 2, y: -4, z: 6)
        #expect(0.5 * v == Vector3(x: 1, y: -2, z: 3) && v / 2 == Vector3(x: 1, y: -2, z: 3) && (v / 2).norm == 14.0.squareRoot())
    }

    @Test("ZoneEvent.precedes is SPEC §4.7's order: time, then exit before enter before dwell, then tag")
    func eventOrder() {
        func event(_ t: Double, _ kind: ZoneEvent.Kind, _ tag: TagID) -> ZoneEvent {
            ZoneEvent(timeSeconds: t, tag: tag, floor: "1F", zone: "Z1", kind: kind, dwellSeconds: kind == .dwell ? 5 : nil)
        }
        let shuffled = [event(2, .enter, "A"), event(1, .dwell, "A"), event(1, .enter, "B"), event(1, .exit, "C"), event(1, .enter, "A")]
        let sorted = shuffled.sorted(by: ZoneEvent.precedes)
        #expect(sorted.map(\.kind) == [.exit, .enter, .enter, .dwell, .enter])
        #expect(sorted.map(\.tag) == ["C", "A", "B", "A", "A"])
    }

    @Test("A session's mode, coupling and tag offset give locus replay's bytes with the same options (each changes them)",
          arguments: [(["--coupling", "loose", "--mode", "planar", "--tag-offset", "off"],
                       FloorSession.Configuration(mode: .planar, coupling: .loose, tagOffset: .off)),
                      (["--tag-offset", "on"], FloorSession.Configuration(tagOffset: .on)),
                      ([], FloorSession.Configuration.standard)])
    func configurationMatchesReplay(options: [String], configuration: FloorSession.Configuration) throws {
        let site = TestPaths.fixture("sites/hall.json"), trace = TestPaths.fixture("traces/hall-walk.csv")
        let directory = TestPaths.temporaryDirectory()
        func replay(_ extra: [String], to path: String) throws {
            let run = try ExampleTests.run(["replay", "--site", site, "--trace", trace, "--positions", path] + extra, example: "locus")
            #expect(run.status == 0, "\(run.err)")
        }
        try replay(options, to: directory + "/cli.csv")
        try replay([], to: directory + "/default.csv")
        let session = try FloorSession(site: try SiteDecoder.load(path: site), configuration: configuration)
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        try session.begin()
        try session.ingest(contentsOf: try TraceReader.read(path: trace).measurements)
        session.end()
        var writer = PositionsWriter()
        for f in recorder.positions { writer.append(f) }
        #expect(recorder.positions.count > 600 && writer.bytes == TestPaths.bytes(directory + "/cli.csv"))
        #expect(options.isEmpty == (writer.bytes == TestPaths.bytes(directory + "/default.csv")))
    }
}
