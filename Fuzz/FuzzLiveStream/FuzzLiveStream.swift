import Locus
import LocusCore
@testable import LocusIO
import LocusTestSupport
@testable import LocusServe

/// libFuzzer entry point: arbitrary bytes as what a sender writes to `locus stream` or `locus serve`.
///
/// The first byte chooses the input: bit 0 — datagrams and messages may hold CSV rows (UDP) or JSON
/// only; bit 1 — a 5 s future-time horizon (else unchecked); bit 2 — standard input (whole lines, the
/// first of which decides CSV with a header or JSON Lines) instead of messages. The rest is cut at
/// each 0x1E byte (ASCII record separator) into messages, each arriving 0.25 s after the one before
/// (receive times near the Unix epoch's present, as a live stream stamps them). The engine holds at
/// most 3 tags (an idle one evicted after 2 s of data time), so floods of ids and evictions happen.
///
/// Invariants checked (a violation traps):
/// - `JSONRowScanner.scan` (the in-place reader of the plain spelling) reads a message only when
///   `JSONParser` reads it too, and then to the same fields, row for row;
/// - a message is never fatal: `ingestMessage` returns whatever the bytes, `ingestLines` throws only
///   a bad CSV header (`E5003`/`E5004`);
/// - every fix the stream releases is finite (time, position, covariance, DOP), each tag's fixes in
///   non-decreasing time across every drain; every event time finite, events in non-decreasing time
///   within each drain.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLiveStream(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let flags = data[0]
    let bytes = UnsafeBufferPointer(start: data + 1, count: size - 1)
    var messages: [UnsafeBufferPointer<UInt8>] = []
    var start = 0
    for i in 0...bytes.count where i == bytes.count || bytes[i] == 0x1E {
        messages.append(UnsafeBufferPointer(rebasing: bytes[start..<i]))
        start = i + 1
    }
    for message in messages { checkScannerAgainstParser(message) }

    guard var stream = try? LiveStream(site: FuzzSite.site, options: EngineOptions(), tagLimit: (maximumTags: 3, idleSeconds: 2),
                                       futureHorizonSeconds: flags & 2 != 0 ? 5 : 0) else {
        preconditionFailure("the fuzz site and options are valid")
    }
    var checker = OutputChecker()
    let allowsCSV = flags & 1 != 0
    let received = 1_780_000_000.0
    for (k, message) in messages.enumerated() {
        let at = received + 0.25 * Double(k)
        if flags & 4 != 0 {
            // Standard input hands on whole lines only: up to the last line break of the piece.
            guard let end = message.lastIndex(of: 0x0A) else { continue }
            do {
                try stream.ingestLines(UnsafeBufferPointer(rebasing: message[...end]).span, receivedSeconds: at)
            } catch {
                precondition(error.code == .csvMissingColumn || error.code == .malformedCSV, "unexpected error \(error)")
                return 0
            }
        } else {
            stream.ingestMessage(message.span, receivedSeconds: at, allowsCSV: allowsCSV)
        }
        if k % 3 == 2 {
            let latest = stream.clock.latestDataSeconds
            if latest.isFinite { stream.advance(toSeconds: latest + 0.5) }
        }
        checker.check(stream.drain())
    }
    stream.finish()
    checker.check(stream.drain())
    return 0
}

/// When the in-place scanner reads a message, the full parser must read it to the same rows.
private func checkScannerAgainstParser(_ message: UnsafeBufferPointer<UInt8>) {
    var scanned: [JSONRowFields] = []
    guard JSONRowScanner.scan(message, into: &scanned) else { return }
    var parsed: [JSONRowFields] = []
    JSONRowScanner.parse(message.span, into: &parsed) { preconditionFailure("the scanner read a message the parser calls malformed: \($0)") }
    precondition(scanned == parsed, "scanner and parser read the message differently: \(scanned) vs \(parsed)")
}

/// The stream's outputs across drains.
private struct OutputChecker {
    /// Each tag's latest fix time so far.
    var lastFixTime: [TagID: Double] = [:]

    mutating func check(_ out: (fixes: [PositionFix], events: [ZoneEvent])) {
        for fix in out.fixes {
            precondition(fix.timeSeconds.isFinite && fix.position.isFinite && fix.covariance.isFinite, "finite fix")
            precondition(fix.quality.hdop.isFinite && fix.quality.pdop.isFinite, "finite DOP")
            precondition(fix.timeSeconds >= lastFixTime[fix.tag, default: -.infinity], "a tag's fixes in time order")
            lastFixTime[fix.tag] = fix.timeSeconds
        }
        var lastEventTime = -Double.infinity
        for event in out.events {
            precondition(event.timeSeconds.isFinite, "finite event time")
            precondition(event.timeSeconds >= lastEventTime, "events in time order")
            lastEventTime = event.timeSeconds
        }
    }
}
