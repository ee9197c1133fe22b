import Foundation
@testable import Locus
@testable import LocusCore
import LocusTestSupport
import Testing

@Suite("Batched delivery and the durable spool")
struct DeliveryTests {
    /// 2 tags × 120 s at 4 Hz standing still: 960 positions.
    static func ranges(seconds: Int = 120) -> [RangeMeasurement] {
        SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: seconds * 4, tag: "A")
            + SessionFixtures.rounds(at: Point3(x: 12, y: 4, z: 1.2), count: seconds * 4, tag: "B")
    }

    @Test("batches close at 300 positions or 60 s of data time, and on end()")
    func batchLimits() throws {
        let sink = RecordingSink()
        let session = try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "1F"), sink: sink)
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        try session.begin()
        try session.ingest(contentsOf: Self.ranges().sorted { $0.timeSeconds < $1.timeSeconds })
        session.end()
        let batches = sink.delivered
        let all = batches.flatMap(\.positions)
        #expect(all == recorder.positions)
        #expect(all.count > 900)
        for b in batches {
            #expect(b.positions.count <= 300)
            if let first = b.positions.first, let last = b.positions.last { #expect(last.timeSeconds - first.timeSeconds < 60) }
        }
        // 2 tags at 4 Hz: 300 positions span 37.5 s, so the count limit cuts first.
        #expect(batches.dropLast().allSatisfy { $0.positions.count == 300 })
        #expect(batches.map(\.sequence) == Array(1...UInt64(batches.count)))
        #expect(session.undeliveredPositionCount == 0)
    }

    @Test("the 60 s limit cuts a slow stream")
    func timeLimit() throws {
        let sink = RecordingSink()
        let session = try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "1F"), sink: sink)
        try session.begin()
        try session.ingest(contentsOf: SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: 4 * 150))
        session.end()
        let sizes = sink.delivered.map(\.positions.count)
        // One tag at 4 Hz: 240 positions per 60 s.
        #expect(sizes.dropLast().allSatisfy { $0 == 240 })
        #expect(sizes.reduce(0, +) >= 590)
    }

    @Test("send() delivers what is buffered now; empty() discards it")
    func sendAndEmpty() throws {
        let sink = RecordingSink()
        let session = try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "1F"), sink: sink)
        try session.begin()
        try session.ingest(contentsOf: SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: 20))
        #expect(sink.delivered.isEmpty)
        let buffered = session.undeliveredPositionCount
        #expect(buffered > 10)
        session.send()
        #expect(sink.delivered.count == 1)
        #expect(sink.delivered[0].positions.count == buffered)
        try session.ingest(contentsOf: SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: 20, start: 10))
        #expect(session.undeliveredPositionCount > 10)
        session.empty()
        #expect(session.undeliveredPositionCount == 0)
        session.end()
        // end() delivers only what came after empty(): the positions still waiting in the engine.
        #expect(sink.delivered.dropFirst().allSatisfy { $0.positions.allSatisfy { $0.timeSeconds > 14 } })
    }

    @Test("a refused batch stays pending with E5007 and is delivered, in order, once the sink takes it")
    func refusedBatch() throws {
        let sink = RecordingSink()
        sink.refuses.withLock { $0 = true }
        let session = try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "1F"), sink: sink)
        let recorder = SessionRecorder()
        recorder.attach(to: session)
        try session.begin()
        try session.ingest(contentsOf: SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: 20))
        session.send()
        #expect(recorder.logs.contains { $0.0 == .error && $0.1.hasPrefix("[E5007]") })
        try session.ingest(contentsOf: SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: 20, start: 10))
        session.send()
        #expect(sink.delivered.isEmpty)
        sink.refuses.withLock { $0 = false }
        session.end()
        #expect(sink.delivered.map(\.sequence) == [1, 2, 3])
        #expect(sink.delivered.flatMap(\.positions) == recorder.positions)
    }

    @Test("positions left undelivered when a session goes away are logged as E5006")
    func undeliveredAtExit() throws {
        let recorder = SessionRecorder()
        do {
            let session = try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "1F"), sink: RecordingSink())
            recorder.attach(to: session)
            try session.begin()
            try session.ingest(contentsOf: SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: 20))
        }
        #expect(recorder.logs.contains { $0.0 == .error && $0.1.hasPrefix("[E5006]") })
    }

    @Test("a spooled session's pending batches are delivered first, bit-identical, by the next session on the spool")
    func spoolRecovery() throws {
        let spool = TestPaths.temporaryDirectory() + "/spool"
        let policy = DeliveryPolicy(maximumPositions: 25, spoolDirectory: spool)
        let refusing = RecordingSink()
        refusing.refuses.withLock { $0 = true }
        let recorder = SessionRecorder()
        do {
            let session = try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "1F", delivery: policy), sink: refusing)
            recorder.attach(to: session)
            try session.begin()
            try session.ingest(contentsOf: SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: 60))
            // No end(): the open batch stays in its journal, the sealed ones as pending files.
        }
        let produced = recorder.positions
        #expect(produced.count > 50)
        let files = try FileManager.default.contentsOfDirectory(atPath: spool)
        #expect(files.contains { $0.hasSuffix(".pending") })
        #expect(files.contains { $0.hasSuffix(".journal") })

        let sink = RecordingSink()
        let next = try FloorSession(site: SessionFixtures.smallSite(), configuration: .init(floor: "1F", delivery: policy), sink: sink)
        #expect(next.undeliveredPositionCount == produced.count)
        try next.begin()
        #expect(sink.delivered.allSatisfy { $0.isRecovered })
        #expect(sink.delivered.flatMap(\.positions) == produced)
        try next.ingest(contentsOf: SessionFixtures.rounds(at: Point3(x: 8, y: 8, z: 1.2), count: 8, start: 100))
        next.end()
        let sequences = sink.delivered.map(\.sequence)
        #expect(sequences == sequences.sorted())
        #expect(Set(sequences).count == sequences.count)
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool).isEmpty)
    }

    @Test("spool lines round-trip every field, including escaped ids")
    func spoolEncoding() throws {
        let fix = PositionFix(timeSeconds: 0.1 + 0.2, tag: "tag\twith%odd\nchars", floor: "1F", position: Point3(x: 1.0 / 3, y: -2e-17, z: 1.1),
                              velocity: Vector3(x: 0.5, y: -0.25, z: 0), covariance: SymmetricMatrix3(xx: 0.01, xy: 1e-5, yy: 0.02, zz: 0),
                              quality: FixQuality(hdop: 1.25, vdop: nil, pdop: 1.5, residualRMSMeters: 0.07, locatorsUsed: 7,
                                                  rejected: LocatorList([LocatorAddress(0x9DD7)])))
        var bytes: [UInt8] = []
        PositionSpool.encode(fix, into: &bytes)
        PositionSpool.encode(fix, into: &bytes)
        bytes.append(contentsOf: Array("0.5\tcut".utf8))  // an incomplete last line is dropped
        let decoded = try PositionSpool.decode(bytes)
        #expect(decoded == [fix, fix])
    }
}
