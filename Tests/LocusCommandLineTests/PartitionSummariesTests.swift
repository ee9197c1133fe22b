@testable import Locus
@testable import LocusCore
@testable import LocusEvaluation
@testable import LocusIO
import LocusTestSupport
import Testing

@Suite("Partition summaries")
struct PartitionSummariesTests {
    /// The summary of `trace` replayed by one engine, or by partition `index` of `count`.
    private static func summary(site: Site, trace: RangeTrace, partition: (index: Int, count: Int)?) throws -> JSONValue {
        var driver = try EngineDriver(site: site, configuration: .standard)
        if let partition { try driver.setPartition(index: partition.index, count: partition.count) }
        let out = try driver.replay(trace)
        let engine = driver.engine
        var skipped = trace.skipped
        skipped.merge(engine.diagnostics.skipped)
        var events: [ZoneEvent.Kind: Int] = [:]
        for e in out.events { events[e.kind, default: 0] += 1 }
        return ReplaySummary(fixes: out.fixes.count, ranges: trace.rows.count + trace.skipped.total, tags: engine.tagCount, skipped: skipped,
                             diagnostics: engine.diagnostics, events: events, elapsedSeconds: 1,
                             filter: "kalman", smooth: false).json
    }

    @Test("1, 2, 3 and 5 partitions' summaries merge into the single run's (late_range summed, rows read once)",
          arguments: ["hall", "corridor"])
    func mergesToTheSingleRun(fixture: String) throws {
        let site = try SiteDecoder.load(path: StreamingReplayTests.site(fixture))
        let trace = try TraceReader.read(path: StreamingReplayTests.trace(fixture))
        let single = try Self.summary(site: site, trace: trace, partition: nil)
        for count in [1, 2, 3, 5] {
            let parts = try (0..<count).map { try Self.summary(site: site, trace: trace, partition: ($0, count)) }
            #expect(try PartitionSummaries.merge(parts) == single, "\(fixture), \(count) partitions")
        }
        if fixture == "corridor" { #expect(single["skipped"]?["late_range"]?.intValue ?? 0 > 0, "the corridor has stragglers") }
    }

    @Test("summaries that disagree on what every partition reads, with truth, with unknown keys, or none: refused (E1003)")
    func refusals() throws {
        func object(_ s: String) throws -> JSONValue { try JSONParser.parse(Array(s.utf8)) }
        let a = try object(#"{"fixes":3,"ranges":10,"tags":2,"skipped":{"late_range":1,"unknown_anchor":2},"filter":"kalman"}"#)
        let b = try object(#"{"fixes":4,"ranges":10,"tags":2,"skipped":{"unknown_anchor":2},"filter":"kalman"}"#)
        #expect(try PartitionSummaries.merge([a, b])
                == object(#"{"fixes":7,"ranges":10,"tags":2,"skipped":{"late_range":1,"unknown_anchor":2},"filter":"kalman"}"#))
        let bad = [
            [a, try object(#"{"fixes":4,"ranges":11,"tags":2,"skipped":{"unknown_anchor":2},"filter":"kalman"}"#)],
            [a, try object(#"{"fixes":4,"ranges":10,"tags":2,"skipped":{"unknown_anchor":3},"filter":"kalman"}"#)],
            [a, try object(#"{"fixes":4,"ranges":10,"tags":2,"skipped":{},"filter":"none"}"#)],
            [try object(#"{"fixes":1,"rmse_m":0.1}"#)],
            [a, try object(#"{"fixes":4}"#)],
            [],
        ]
        for parts in bad {
            #expect(throws: LocusError.self) { try PartitionSummaries.merge(parts) }
        }
    }
}
