import LocusCore
@testable import LocusIO
import Testing

/// The trace reader's checks of what a sender writes (issue #41): tag ids (`TagIDRule`) on every
/// row path, and a live stream's future-time limit applied before a tag's clock admits a row.
@Suite("Trace reader: tag ids and future rows")
struct TraceRowParserTrustTests {
    /// Parses `text` (header included) with `fastRows`; the kept rows and the parser.
    static func parse(_ text: [UInt8], fastRows: Bool, configure: (inout TraceRowParser) -> Void = { _ in })
        throws -> (rows: [TraceRow], parser: TraceRowParser) {
        var parser = try TraceRowParser(header: text.span, file: "t.csv")
        configure(&parser)
        var rows: [TraceRow] = []
        let body = Array(text[parser.headerEnd...])
        _ = parser.parse(body.span, isLast: true, fastRows: fastRows, into: &rows)
        return (rows, parser)
    }

    @Test("ids over 128 bytes, not UTF-8, or with a control character are skipped as invalid_tag on the word, byte and scanner paths alike; none is interned")
    func invalidTagsEveryPath() throws {
        var text = Array("t,tag,anchor,range_m\n".utf8)
        let good = ["T1", "T-2", String(repeating: "B", count: 128), "\"q\"\"uote\"", "  T1  ", "é"]
        let bad: [[UInt8]] = [Array("T".utf8) + [0xFF], Array("T".utf8) + [0xFE], [0xC3], [0xED, 0xA0, 0x80],
                              Array(String(repeating: "A", count: 129).utf8), Array("\"T\u{1}\"".utf8), Array("T\u{7F}".utf8),
                              Array("\"\(String(repeating: "\"\"", count: 130))\"".utf8)]
        for (k, id) in good.enumerated() { text += Array("\(k).0,\(id),4097,1.5\n".utf8) }
        for (k, id) in bad.enumerated() { text += Array("\(k + 10).0,".utf8) + id + Array(",4097,1.5\n".utf8) }
        text += Array(repeating: 0x0A, count: 100)  // room for the word-at-a-time path
        for fast in [true, false] {
            let (rows, parser) = try Self.parse(text, fastRows: fast)
            #expect(rows.count == good.count, "fast \(fast)")
            #expect(parser.skipped.count(.invalidTag) == bad.count, "fast \(fast)")
            #expect(parser.tags.map(\.rawValue) == ["T1", "T-2", String(repeating: "B", count: 128), "q\"uote", "é"], "fast \(fast)")
            #expect(!parser.tags.contains { $0.rawValue.contains("\u{FFFD}") })
        }
    }

    @Test("with a horizon, a row beyond the limit is skipped as future_time before its tag is interned or its tag's clock sees it; the limit follows the latest kept time; off by default")
    func futureLimit() throws {
        let text = Array("t,tag,anchor,range_m\n12,T1,4097,1\n1e9,X9,4097,1\n18,T1,4097,1\n16,T1,4097,1\n16.5,T1,4097,1\n".utf8)
        for fast in [true, false] {
            let (rows, parser) = try Self.parse(text, fastRows: fast) { p in
                p.futureHorizonSeconds = 5
                p.futureLatestSeconds = 10
                p.futureLimitSeconds = 15
            }
            // 12 kept (limit → 17); 1e9 and 18 beyond it; 16 and 16.5 kept: T1's clock never saw 18.
            #expect(rows.map(\.timeSeconds) == [12, 16, 16.5], "fast \(fast)")
            #expect(parser.skipped.count(.futureTime) == 2 && parser.skipped.count(.timeBackwards) == 0, "fast \(fast)")
            #expect(parser.futureLatestSeconds == 16.5 && parser.futureLimitSeconds == 21.5)
            #expect(parser.tags == [TagID("T1")], "a refused row's new tag is not interned (fast \(fast))")
            let replay = try Self.parse(text, fastRows: fast)
            #expect(replay.parser.skipped.count(.futureTime) == 0, "replay: no horizon")
        }
    }
}
