import Glibc

/// The append-only log of Server-Sent-Events messages that `locus serve` feeds: the engine thread
/// appends one line of JSON per message, the `HTTPServer` thread copies bounded chunks of it to each
/// viewer at that viewer's own pace.
///
/// Each message is stored framed as it goes on the wire, `id: N\ndata: <json>\n\n`, with ids 1, 2,
/// 3, … in append order, in a ring of messages. `capacityBytes` bounds the **framed** bytes retained
/// (the `id:`/`data:` lines and the blank line count, so the bound is what the server can send);
/// beyond it the oldest messages are evicted. The newest message is always kept, so the memory is
/// at most `capacityBytes` plus one message, however many are appended.
///
/// **Threads.** One short lock (a pthread mutex) guards the ring, the counters and the servers'
/// wake-up descriptors. `append` holds it for a copy of the message and, when a server is waiting
/// for news, one non-blocking one-byte `send` to that server's wake-up socket; it never waits for a
/// viewer, a socket or the server thread. Readers copy out of the lock's scope what they will write.
final class FeedLog: Sendable {
    /// What the log has done so far. Read with `counters`.
    struct Counters: Sendable, Equatable {
        /// Messages appended (the id of the newest one).
        var appended = 0
        /// Messages evicted to stay within `capacityBytes`.
        var evicted = 0
        /// Framed bytes retained now (`id: N\ndata: ` + JSON + `\n\n` per message).
        var retainedBytes = 0
        /// Messages retained now.
        var retainedMessages = 0
        /// Messages refused by `append` because their JSON contained a line break (not one SSE line).
        var rejected = 0
    }

    /// What one `copy` put into a viewer's buffer.
    struct Copied: Equatable {
        /// The id of the next message this viewer needs (the cursor after the copy).
        var nextID: Int
        /// Whole messages copied.
        var messages: Int
        /// Messages skipped for this viewer (evicted before it got them, or beyond its lag bound);
        /// when positive a `gap` message was written first.
        var dropped: Int
    }

    /// One retained message: its framed bytes and where it starts in the stream of every framed byte
    /// ever appended (for a viewer's lag in bytes).
    private struct Entry {
        var framed: [UInt8]
        var streamOffset: Int
    }

    private struct State {
        /// The ring: `entries[head...]` are the retained messages, oldest first; the taken front is
        /// dropped once it is at least 1,024 entries and half the array (as `FIFOQueue` does).
        var entries: [Entry] = []
        var head = 0
        var counters = Counters()
        /// Framed bytes ever appended (the stream offset after the newest message).
        var streamEnd = 0
        /// Wake-up sockets of the servers reading this log, and whether each asked to be woken.
        var wakeTargets: [(descriptor: Int32, armed: Bool)] = []

        var count: Int { entries.count - head }
        /// The id of the oldest retained message (newest + 1 when none is retained).
        var oldestID: Int { counters.appended - count + 1 }
    }

    /// The configured bound on retained framed bytes.
    let capacityBytes: Int
    private let state: ConditionLock<State>

    /// An empty log retaining at most `capacityBytes` framed bytes (plus the newest message when it
    /// alone is larger).
    init(capacityBytes: Int) {
        self.capacityBytes = max(0, capacityBytes)
        state = ConditionLock(State())
    }

    /// The counts so far (a consistent snapshot).
    var counters: Counters { state.withLock { $0.counters } }

    /// The id of the newest message (0 before the first append).
    var newestID: Int { state.withLock { $0.counters.appended } }

    /// Appends one message whose SSE data is `json` (one line: it must contain neither `\n` nor
    /// `\r`; such a message is refused, counted in `rejected`, and nil is returned) and returns the
    /// id it got. Evicts the oldest messages beyond `capacityBytes`.
    ///
    /// Complexity: O(`json.count`) plus the evicted messages, under the lock; one `send` of one
    /// byte to each waiting server. Never blocks on a viewer.
    @discardableResult
    func append(_ json: [UInt8]) -> Int? {
        var isOneLine = true
        for byte in json where byte == 0x0A || byte == 0x0D {
            isOneLine = false
            break
        }
        guard isOneLine else {
            state.withLock { $0.counters.rejected += 1 }
            return nil
        }
        return state.withLock { shared -> Int in
            let id = shared.counters.appended + 1
            var framed: [UInt8] = []
            framed.reserveCapacity(json.count + 32)
            framed.append(contentsOf: "id: \(id)\ndata: ".utf8)
            framed.append(contentsOf: json)
            framed.append(0x0A)
            framed.append(0x0A)
            shared.entries.append(Entry(framed: framed, streamOffset: shared.streamEnd))
            shared.streamEnd += framed.count
            shared.counters.appended = id
            shared.counters.retainedBytes += framed.count
            shared.counters.retainedMessages += 1
            while shared.counters.retainedBytes > capacityBytes && shared.count > 1 {
                shared.counters.retainedBytes -= shared.entries[shared.head].framed.count
                shared.entries[shared.head] = Entry(framed: [], streamOffset: 0)
                shared.head += 1
                shared.counters.retainedMessages -= 1
                shared.counters.evicted += 1
            }
            if shared.head >= 1_024 && shared.head * 2 >= shared.entries.count {
                shared.entries.removeFirst(shared.head)
                shared.head = 0
            }
            for index in shared.wakeTargets.indices where shared.wakeTargets[index].armed {
                shared.wakeTargets[index].armed = false
                var byte: UInt8 = 1
                // Non-blocking: a full socket already holds a wake-up, so EAGAIN loses nothing.
                _ = send(shared.wakeTargets[index].descriptor, &byte, 1, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
            return id
        }
    }

    // MARK: the server's side

    /// Registers a server's wake-up socket: after `arm`, the next `append` sends it one byte.
    func attach(wakeDescriptor: Int32) {
        state.withLock { $0.wakeTargets.append((wakeDescriptor, false)) }
    }

    /// Forgets a wake-up socket; call before closing it (an `append` never writes to it afterwards).
    func detach(wakeDescriptor: Int32) {
        state.withLock { $0.wakeTargets.removeAll { $0.descriptor == wakeDescriptor } }
    }

    /// Asks to be woken by the next `append` and returns the newest id at this moment, so a server
    /// that finds nothing new to send can sleep without missing a message appended meanwhile.
    func arm(wakeDescriptor: Int32) -> Int {
        state.withLock { shared -> Int in
            for index in shared.wakeTargets.indices where shared.wakeTargets[index].descriptor == wakeDescriptor {
                shared.wakeTargets[index].armed = true
            }
            return shared.counters.appended
        }
    }

    /// The id a new viewer starts from: the oldest retained message; or, when it sent
    /// `Last-Event-ID: lastEventID`, the message after that one (an id already evicted gives a gap
    /// on the first `copy`; an id beyond the newest — a browser that saw an earlier run of the
    /// server — starts from the oldest).
    func startID(lastEventID: Int?) -> Int {
        state.withLock { shared -> Int in
            guard let lastEventID, lastEventID >= 0, lastEventID <= shared.counters.appended else { return shared.oldestID }
            return lastEventID + 1
        }
    }

    /// Appends to `buffer` the messages from id `nextID` on: whole messages only, at least one when
    /// any is due, and no more once `maximumBytes` are reached. When `nextID` was evicted the viewer
    /// skips to the oldest retained message; when it is more than `lagBytes` framed bytes behind the
    /// end of the newest message it skips to the newest; either way a
    /// `data: {"type":"gap","dropped":K}\n\n` message (no id, so `Last-Event-ID` stays) goes first.
    ///
    /// Complexity: O(bytes copied), under the lock.
    func copy(from nextID: Int, into buffer: inout [UInt8], maximumBytes: Int, lagBytes: Int) -> Copied {
        state.withLock { shared -> Copied in
            var next = nextID
            var dropped = 0
            let oldest = shared.oldestID
            let newest = shared.counters.appended
            guard next <= newest else { return Copied(nextID: next, messages: 0, dropped: 0) }
            if next < oldest {
                dropped += oldest - next
                next = oldest
            }
            let behind = shared.streamEnd - shared.entries[shared.head + next - oldest].streamOffset
            if behind > lagBytes && next < newest {
                dropped += newest - next
                next = newest
            }
            if dropped > 0 { buffer.append(contentsOf: "data: {\"type\":\"gap\",\"dropped\":\(dropped)}\n\n".utf8) }
            let limit = buffer.count + maximumBytes
            var messages = 0
            while next <= newest {
                let framed = shared.entries[shared.head + next - oldest].framed
                if messages > 0 && buffer.count + framed.count > limit { break }
                buffer.append(contentsOf: framed)
                next += 1
                messages += 1
            }
            return Copied(nextID: next, messages: messages, dropped: dropped)
        }
    }
}
