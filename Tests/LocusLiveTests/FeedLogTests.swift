@testable import LocusLive
import Testing

@Suite("Feed log")
struct FeedLogTests {
    private func json(_ index: Int, padding: Int = 0) -> [UInt8] {
        Array("{\"n\":\(index),\"p\":\"\(String(repeating: "x", count: padding))\"}".utf8)
    }

    private func copyAll(_ log: FeedLog, from id: Int, lag: Int = .max) -> (text: String, copied: FeedLog.Copied) {
        var buffer: [UInt8] = []
        let copied = log.copy(from: id, into: &buffer, maximumBytes: .max / 2, lagBytes: lag)
        return (String(decoding: buffer, as: UTF8.self), copied)
    }

    @Test("ids count from 1; messages are framed id/data/blank line; lines with breaks are refused")
    func framing() {
        let log = FeedLog(capacityBytes: 1 << 20)
        #expect(log.append(Array("{\"a\":1}".utf8)) == 1)
        #expect(log.append(Array("{\"b\":2}".utf8)) == 2)
        #expect(log.append(Array("{\"c\":\n3}".utf8)) == nil)
        #expect(log.append(Array("{\"c\":\r3}".utf8)) == nil)
        let (text, copied) = copyAll(log, from: 1)
        #expect(text == "id: 1\ndata: {\"a\":1}\n\nid: 2\ndata: {\"b\":2}\n\n")
        #expect(copied == FeedLog.Copied(nextID: 3, messages: 2, dropped: 0))
        let counters = log.counters
        #expect(counters.appended == 2 && counters.rejected == 2 && counters.evicted == 0)
        #expect(counters.retainedMessages == 2)
        #expect(counters.retainedBytes == text.utf8.count)
        #expect(copyAll(log, from: 3).copied == FeedLog.Copied(nextID: 3, messages: 0, dropped: 0))
    }

    @Test("memory stays bounded: framed bytes within the capacity however many are appended")
    func eviction() {
        let capacity = 10_000
        let log = FeedLog(capacityBytes: capacity)
        for index in 1...100_000 {
            log.append(json(index, padding: index % 50))
            if index % 997 == 0 { #expect(log.counters.retainedBytes <= capacity) }
        }
        let counters = log.counters
        #expect(counters.appended == 100_000)
        #expect(counters.retainedBytes <= capacity)
        #expect(counters.retainedMessages + counters.evicted == 100_000)
        #expect(counters.retainedMessages > 100)
        // The retained ones are the newest, in order.
        let oldest = 100_000 - counters.retainedMessages + 1
        let (text, copied) = copyAll(log, from: oldest)
        #expect(copied.messages == counters.retainedMessages && copied.dropped == 0)
        #expect(text.hasPrefix("id: \(oldest)\n"))
        #expect(text.hasSuffix("data: {\"n\":100000,\"p\":\"\"}\n\n"))
        // A message larger than the capacity is kept alone.
        log.append(json(0, padding: 20_000))
        #expect(log.counters.retainedMessages == 1)
    }

    @Test("an evicted cursor skips to the oldest after a gap message; a lagging one to the newest")
    func gaps() {
        let log = FeedLog(capacityBytes: 1_000)
        for index in 1...100 { log.append(json(index)) }
        let oldest = 100 - log.counters.retainedMessages + 1
        let evicted = copyAll(log, from: 1)
        #expect(evicted.copied.dropped == oldest - 1)
        #expect(evicted.text.hasPrefix("data: {\"type\":\"gap\",\"dropped\":\(oldest - 1)}\n\nid: \(oldest)\n"))
        let lagging = copyAll(log, from: oldest, lag: 100)
        #expect(lagging.copied == FeedLog.Copied(nextID: 101, messages: 1, dropped: 100 - oldest))
        #expect(lagging.text == "data: {\"type\":\"gap\",\"dropped\":\(100 - oldest)}\n\nid: 100\ndata: {\"n\":100,\"p\":\"\"}\n\n")
    }

    @Test("a copy takes whole messages up to the chunk bound, at least one")
    func chunks() {
        let log = FeedLog(capacityBytes: 1 << 20)
        for index in 1...10 { log.append(json(index, padding: 100)) }
        var buffer: [UInt8] = []
        let first = log.copy(from: 1, into: &buffer, maximumBytes: 300, lagBytes: .max)
        #expect(first.messages == 2)
        #expect(buffer.count <= 300)
        buffer.removeAll()
        let tiny = log.copy(from: 3, into: &buffer, maximumBytes: 1, lagBytes: .max)
        #expect(tiny == FeedLog.Copied(nextID: 4, messages: 1, dropped: 0))
        #expect(String(decoding: buffer, as: UTF8.self).hasPrefix("id: 3\ndata: "))
    }

    @Test("a viewer starts at the oldest, after Last-Event-ID when it is known, at the oldest for a future id")
    func startIDs() {
        let log = FeedLog(capacityBytes: 500)
        #expect(log.startID(lastEventID: nil) == 1)
        for index in 1...50 { log.append(json(index)) }
        let oldest = 50 - log.counters.retainedMessages + 1
        #expect(log.startID(lastEventID: nil) == oldest)
        #expect(log.startID(lastEventID: 45) == 46)
        #expect(log.startID(lastEventID: 50) == 51)
        #expect(log.startID(lastEventID: 2) == 3)  // evicted: the first copy reports the gap
        #expect(log.startID(lastEventID: 5_000) == oldest)
        #expect(log.startID(lastEventID: -1) == oldest)
    }

    @Test("one thread appends while another copies: every id is copied or counted in a gap, once, in order")
    func concurrent() async {
        let log = FeedLog(capacityBytes: 64 * 1024)
        let count = 50_000
        let writer = Task.detached {
            for index in 1...count { log.append(Array("{\"n\":\(index)}".utf8)) }
        }
        var next = 1
        var copied = 0
        var dropped = 0
        var buffer: [UInt8] = []
        while next <= count {
            buffer.removeAll(keepingCapacity: true)
            let result = log.copy(from: next, into: &buffer, maximumBytes: 4_096, lagBytes: 16 * 1024)
            #expect(result.nextID == next + result.dropped + result.messages)
            copied += result.messages
            dropped += result.dropped
            next = result.nextID
            if result.messages == 0 { await Task.yield() }
        }
        await writer.value
        #expect(copied + dropped == count)
        #expect(log.counters.appended == count)
    }
}
