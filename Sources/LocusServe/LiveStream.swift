#if canImport(Glibc)
import Glibc
#endif
import Locus
import LocusCore
import LocusIO
import LocusLive

/// `locus stream`'s engine side: rows arrive as bytes from any input — a standard-input chunk of whole
/// lines, a UDP datagram, an MQTT payload —, are decoded, checked and fed to one `PositioningEngine`,
/// and what the engine releases is handed to the outputs (`StreamOutputs`).
///
/// Decoding. CSV rows go through `TraceRowParser`, the reader of `locus replay`, so they are kept,
/// skipped and counted exactly alike: standard input starts with its header (SPEC §2); datagrams
/// and messages carry rows without one, in the SPEC's column order `t,tag,anchor,range_m[,floor]`.
/// JSON — standard input whose first byte is `{` (JSON Lines), a datagram or a message that is one
/// object or an array of them — names the same fields: `{"t": 12.25, "tag": "T1", "anchor": 4097,
/// "range_m": 3.52, "floor": "1F"}`; `t` may be left out (the receive time is used, seconds since
/// the Unix epoch), `tag` and `floor` too (as in the CSV); `anchor` is a number or a string of
/// decimal digits. A row that cannot be used is counted by the replay's reasons (`SkipReason`);
/// a message that is not JSON, or not an object or an array of objects, is counted as malformed —
/// never fatal.
///
/// Time. Every batch (a standard-input read, a datagram, a message) is stamped with its monotonic
/// arrival here, in one place, whatever the input; `clock` (`StreamClock`) turns the latest accepted
/// data time and that arrival into the stream's clock, which the wall-clock tick
/// (`advance(toSeconds:)`) follows while no data arrives, and refuses rows too far ahead of it as
/// `future_time` before they reach the engine.
struct LiveStream {
    /// The engine, driven as every single-engine face drives it.
    private(set) var driver: EngineDriver
    /// The driven engine, to read.
    var engine: PositioningEngine { driver.engine }
    private let site: Site
    /// The reader of standard input's CSV (made from its header) and of headerless CSV rows (with
    /// and without the floor column: a row that reaches every column of its reader takes the
    /// parser's fast path).
    private var headed: CSVRows?
    private var headerless: CSVRows
    private var headerlessWithoutFloor: CSVRows
    private var scratch: [TraceRow] = []
    /// JSON rows decoded so far (their `line` in skip reports).
    private var jsonRows = 0
    private var jsonScratch: [JSONRowFields] = []
    private var jsonDecided: [(decision: JSONRowFields.Decision, namesTime: Bool)] = []
    /// Skips found while decoding JSON rows (the engine counts the rest), by reason.
    private var decodeSkips = SkipTally()
    /// Messages (or standard-input lines) that were not JSON of rows, and the first one's reason.
    private(set) var malformed = 0
    private(set) var firstMalformed: String?
    /// Data rows received (kept or skipped).
    private(set) var rows = 0
    /// The stream's clock: arrivals, the latest accepted data time, the future-time check.
    private(set) var clock: StreamClock
    /// When each locator was last heard (`locus serve` only; nil for `locus stream`).
    var hearing: LocatorHearing?
    /// What standard input turned out to hold (`ingestLines`): nothing but blank lines yet, a CSV
    /// with its header, or JSON Lines.
    var standardInput: StandardInputForm = .unknown
    enum StandardInputForm { case unknown, csv, jsonLines }

    /// A CSV reader and its ids resolved against the engine (`LiveRouting`: checked against the
    /// engine's evictions, which hand indices to new ids); both forget their ids when they pile up
    /// (`idCap`).
    private struct CSVRows {
        var parser: TraceRowParser
        var routing = LiveRouting()
        /// Per reader floor: the site's floor index (−1: none), for `hearing`.
        var hearingFloors: [Int] = []

        /// Parses whole lines into `rows` (tag and floor indices the parser's), rows from the future
        /// (`StreamClock`) skipped by the parser; returns the data rows met (kept or skipped).
        mutating func read(_ bytes: UnsafeBufferPointer<UInt8>, into rows: inout [TraceRow], clock: StreamClock) -> Int {
            rows.removeAll(keepingCapacity: true)
            // The stream's future-time rule, applied by the parser before a tag's clock admits a row.
            parser.limitFuture(horizonSeconds: clock.horizonSeconds, latestSeconds: clock.latestDataSeconds,
                               limitSeconds: clock.futureLimitSeconds)
            let before = parser.skipped.total
            _ = parser.parse(bytes.span, isLast: true, into: &rows)
            return rows.count + parser.skipped.total - before
        }

        /// Feeds `rows` (read by `read`) to the engine; then forgets the ids past `idCap`. Returns
        /// the latest finite row time (−∞ with none).
        mutating func feed(_ rows: [TraceRow], driver: inout EngineDriver, site: Site, idCap: Int,
                           hearing: inout LocatorHearing?) -> Double {
            var latest = -Double.infinity
            for r in rows {
                routing.feed(r, parser: parser, driver: &driver, site: site)
                if r.timeSeconds > latest, r.timeSeconds.isFinite { latest = r.timeSeconds }
            }
            if hearing != nil {
                for r in rows {
                    var floor = driver.engine.defaultFloor.rawValue
                    if r.floorIndex >= 0 {
                        let f = Int(r.floorIndex)
                        while hearingFloors.count <= f { hearingFloors.append(site.floorIndex(of: parser.floors[hearingFloors.count])?.rawValue ?? -1) }
                        floor = hearingFloors[f]
                    }
                    hearing!.hear(floor: floor, address: r.locator, at: r.timeSeconds)
                    if r.isDifference { hearing!.hear(floor: floor, address: r.reference, at: r.timeSeconds) }
                }
            }
            if parser.tags.count + parser.floors.count > idCap {
                parser.forgetIDs()
                routing.forget()
                hearingFloors = []
            }
            return latest
        }
    }
    /// A CSV reader forgets its tag and floor ids (`TraceRowParser.forgetIDs`) once it holds more
    /// than this many, after the batch that took it there: the engine's tag limit (at least
    /// 1,024). So a flood of new ids costs the reader at most that many entries, and a stream whose
    /// live tags stay within the limit never makes it forget (its output is then exactly replay's).
    private let idCap: Int

    /// `futureHorizonSeconds`: how far ahead of the stream's clock a row may be (0: unchecked; see
    /// `StreamClock`).
    /// `tagLimit`: at most `maximumTags` tags hold state at once, one idle for `idleSeconds` of data
    /// time is evicted (`EngineConfiguration(_:tagLimit:)`). `maximumLagSeconds`: fixes wait this long
    /// behind the clock, so that a tag's rows arriving up to that late still come out in time order
    /// and are judged at their own time (`EngineConfiguration.releaseLatenessSeconds`).
    init(site: Site, options: EngineOptions, tagLimit: (maximumTags: Int, idleSeconds: Double),
         futureHorizonSeconds: Double = 0, maximumLagSeconds: Double = 0) throws(LocusError) {
        self.site = site
        clock = StreamClock(horizonSeconds: futureHorizonSeconds)
        idCap = max(1024, tagLimit.maximumTags)
        driver = try EngineDriver(site: site, configuration: EngineConfiguration(options, tagLimit: tagLimit,
                                                                                releaseLatenessSeconds: maximumLagSeconds))
        func reader(_ header: String) throws(LocusError) -> CSVRows {
            CSVRows(parser: try TraceRowParser(header: Array(header.utf8).span, file: "<rows>"))
        }
        headerless = try reader("t,tag,anchor,range_m,floor\n")
        headerlessWithoutFloor = try reader("t,tag,anchor,range_m\n")
        scratch.reserveCapacity(4096)
    }

    /// Every skipped row by reason: the readers', the JSON decoding's and the engine's.
    var skipped: SkipTally {
        var all = decodeSkips
        all.merge(headerless.parser.skipped)
        all.merge(headerlessWithoutFloor.parser.skipped)
        if let headed { all.merge(headed.parser.skipped) }
        all.merge(engine.diagnostics.skipped)
        return all
    }

    // MARK: input

    /// Standard input's first bytes: its CSV header (returns the bytes it took), or nothing for JSON
    /// Lines (`{` first).
    /// - Throws: E5004/E5003 for a missing header or column, naming standard input.
    mutating func readHeader(_ bytes: UnsafeBufferPointer<UInt8>) throws(LocusError) -> Int {
        let parser = try TraceRowParser(header: bytes.span, file: "<stdin>")
        headed = CSVRows(parser: parser)
        return parser.headerEnd
    }

    /// True when standard input's first non-blank byte opens a JSON object or array.
    static func looksLikeJSON(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool? {
        for b in bytes where b != 0x20 && b != 0x09 && b != 0x0A && b != 0x0D {
            return b == UInt8(ascii: "{") || b == UInt8(ascii: "[")
        }
        return nil
    }

    /// Standard input's CSV rows after the header: whole lines (the caller keeps a partial last line
    /// for the next call).
    mutating func ingestCSVLines(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard headed != nil else { return }
        beginBatch()
        rows += headed!.read(bytes, into: &scratch, clock: clock)
        clock.accept(headed!.feed(scratch, driver: &driver, site: site, idCap: idCap, hearing: &hearing))
    }

    /// One datagram or message: JSON (an object or an array of objects) or, when `allowsCSV` (a
    /// datagram), headerless CSV rows. `receivedSeconds` stands for a JSON row's missing `t`.
    mutating func ingestMessage(_ bytes: UnsafeBufferPointer<UInt8>, receivedSeconds: Double, allowsCSV: Bool) {
        beginBatch()
        guard let json = Self.looksLikeJSON(bytes) else { noteMalformed("an empty message"); return }
        if json {
            ingestJSON(bytes, receivedSeconds: receivedSeconds)
        } else if !allowsCSV {
            noteMalformed("not a JSON object or array")
        } else {
            // The first line's commas tell whether the rows name a floor; the parser wants whole lines.
            var commas = 0
            for b in bytes { if b == 0x0A { break }; if b == UInt8(ascii: ",") { commas += 1 } }
            func read(_ lines: UnsafeBufferPointer<UInt8>) -> Int {
                commas >= 4 ? headerless.read(lines, into: &scratch, clock: clock)
                            : headerlessWithoutFloor.read(lines, into: &scratch, clock: clock)
            }
            if bytes.last == 0x0A {
                rows += read(bytes)
            } else {
                rows += (Array(bytes) + [0x0A]).withUnsafeBufferPointer { read($0) }
            }
            clock.accept(commas >= 4 ? headerless.feed(scratch, driver: &driver, site: site, idCap: idCap, hearing: &hearing)
                                   : headerlessWithoutFloor.feed(scratch, driver: &driver, site: site, idCap: idCap, hearing: &hearing))
        }
    }

    /// JSON Lines from standard input: each non-blank line is a message.
    mutating func ingestJSONLines(_ bytes: UnsafeBufferPointer<UInt8>, receivedSeconds: Double) {
        beginBatch()
        var start = 0
        for i in 0..<bytes.count where bytes[i] == 0x0A {
            if i > start { ingestJSON(UnsafeBufferPointer(rebasing: bytes[start..<i]), receivedSeconds: receivedSeconds) }
            start = i + 1
        }
        if start < bytes.count { ingestJSON(UnsafeBufferPointer(rebasing: bytes[start...]), receivedSeconds: receivedSeconds) }
    }


    private mutating func ingestJSON(_ bytes: UnsafeBufferPointer<UInt8>, receivedSeconds: Double) {
        guard Self.looksLikeJSON(bytes) != nil else { return }  // a blank line
        // The buffers, taken out while the scanner fills them (no copy), put back after.
        var scratch: [JSONRowFields] = [], decided: [(decision: JSONRowFields.Decision, namesTime: Bool)] = []
        swap(&scratch, &jsonScratch)
        swap(&decided, &jsonDecided)
        decided.removeAll(keepingCapacity: true)
        var reasons: [String] = []
        JSONRowScanner.decide(bytes.span, receivedSeconds: receivedSeconds, scratch: &scratch, into: &decided,
                              malformed: { reasons.append($0) })
        for reason in reasons { noteMalformed(reason) }
        for row in decided { ingest(row.decision, namesTime: row.namesTime) }
        swap(&scratch, &jsonScratch)
        swap(&decided, &jsonDecided)
    }

    private mutating func noteMalformed(_ reason: String) {
        malformed += 1
        if firstMalformed == nil { firstMalformed = reason }
    }

    /// One JSON row, decided field by field with the CSV reader's reasons (`JSONRowFields.decide`);
    /// `namesTime`: whether it named its time (else the receive time stands in, checked against
    /// the missing-time horizon).
    private mutating func ingest(_ decision: JSONRowFields.Decision, namesTime: Bool) {
        rows += 1
        jsonRows += 1
        let line = jsonRows
        switch decision {
        case .skip(let reason):
            decodeSkips.record(reason, line: line)
        case .use(let t, let tagID, let floorID, let locator, let range):
            // Before the tag is registered: a row from the future creates no tag either.
            if clock.isFuture(t, hasTime: namesTime) { decodeSkips.record(.futureTime, line: line); return }
            // By id (the engine applies its tag limit, registers the tag, then checks the floor).
            driver.ingest(RangeMeasurement(timeSeconds: t, tag: tagID.map { TagID($0) } ?? .single, locator: LocatorAddress(locator),
                                           rangeMeters: range, floor: floorID.map { FloorID($0) }),
                          line: line)
            hear(floorID, locator, t)
            clock.accept(t)
        case .useDifference(let t, let tagID, let floorID, let reference, let locator, let difference):
            if clock.isFuture(t, hasTime: namesTime) { decodeSkips.record(.futureTime, line: line); return }
            driver.ingest(RangeDifference(timeSeconds: t, tag: tagID.map { TagID($0) } ?? .single, reference: LocatorAddress(reference),
                                          locator: LocatorAddress(locator), differenceMeters: difference,
                                          floor: floorID.map { FloorID($0) }),
                          line: line)
            hear(floorID, locator, t)
            hear(floorID, reference, t)
            clock.accept(t)
        }
    }

    /// Stamps a batch with its monotonic arrival (`StreamClock`), and keeps the first arrival since
    /// the last `takeArrival()` (`locus serve`'s latency).
    private mutating func beginBatch() {
        let now = LiveClock.monotonicSeconds()
        clock.beginBatch(arrivedAt: now)
        if firstArrival == nil { firstArrival = now }
    }
    private var firstArrival: Double?

    /// The monotonic arrival of the first batch since the previous call, if any came.
    mutating func takeArrival() -> Double? {
        defer { firstArrival = nil }
        return firstArrival
    }

    /// Notes a JSON row's locator as heard (`locus serve`).
    private mutating func hear(_ floorID: String?, _ locator: UInt16, _ t: Double) {
        guard hearing != nil else { return }
        let floor = floorID.map { site.floorIndex(of: FloorID($0))?.rawValue ?? -1 } ?? engine.defaultFloor.rawValue
        hearing!.hear(floor: floor, address: locator, at: t)
    }

    // MARK: clock and end

    /// Moves the engine's clock to `t` (the wall-clock tick).
    mutating func advance(toSeconds t: Double) { driver.advance(toSeconds: t) }

    /// The stream's clock now (`StreamClock`; −∞ before the first accepted row).
    var clockSeconds: Double { clock.seconds(at: LiveClock.monotonicSeconds()) }

    /// Ends the stream: every open epoch solved, every fix released.
    mutating func finish() {
        do { try driver.finish() } catch { preconditionFailure("a stream without a smoother does not fail: \(error)") }
    }

    /// Hands what the engine released to `outputs`, interleaved in time order.
    mutating func drain(into outputs: inout StreamOutputs) throws(LocusError) {
        let (fixes, events) = drain()
        guard !fixes.isEmpty || !events.isEmpty else { return }
        try outputs.write(fixes: fixes, events: events)
    }

    /// What the engine released since the last drain: fixes in (time, tag) order, events in SPEC
    /// §4.7 order.
    mutating func drain() -> (fixes: [PositionFix], events: [ZoneEvent]) {
        (driver.drainFixes(), driver.drainEvents())
    }
}
