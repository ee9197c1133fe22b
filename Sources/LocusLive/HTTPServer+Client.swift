import Glibc

extension HTTPServer {
    /// One accepted connection, owned by the server thread (never shared, so unsynchronised).
    ///
    /// It reads a request head, then either writes one response and closes, or becomes a viewer of
    /// the feed. `output[outputOffset...]` are the bytes still to write: a partial write leaves the
    /// rest there, so the next write resumes mid-message. A viewer's `nextID` is the id of the next
    /// message to copy out of the `FeedLog` once the output is empty.
    final class Client {
        enum Phase: Equatable {
            /// Reading the request head into `head` (at most 8 KiB + 1 byte).
            case readingHead
            /// Writing one complete response; the connection closes once it is written.
            case responding
            /// Response written and our side shut down: reading and discarding what the client still
            /// sends until it closes or `lingerDeadline` passes, so closing does not reset the
            /// connection before the client has read the answer.
            case lingering
            /// A feed viewer: writing messages as they come.
            case viewing
        }

        let descriptor: Int32
        var phase = Phase.readingHead
        var head: [UInt8] = []
        /// Monotonic seconds by which the request head must be complete.
        let headDeadline: Double
        var lingerDeadline = 0.0
        var output: [UInt8] = []
        var outputOffset = 0
        /// Monotonic seconds when the socket last took bytes, or when output became pending after
        /// none was (the stall clock).
        var lastProgress: Double
        /// Monotonic seconds of the last byte written (the heartbeat clock).
        var lastSent: Double
        /// False after a write met a full socket (`EAGAIN`), until `poll` says it is writable.
        var isWritable = true
        var nextID = 1
        var isClosed = false

        init(descriptor: Int32, now: Double, requestTimeoutSeconds: Double) {
            self.descriptor = descriptor
            headDeadline = now + requestTimeoutSeconds
            lastProgress = now
            lastSent = now
        }

        /// Bytes waiting to be written.
        var pendingBytes: Int { output.count - outputOffset }

        /// Replaces the output with `bytes` (the previous output was fully written or discarded).
        func setOutput(_ bytes: [UInt8], now: Double) {
            output = bytes
            outputOffset = 0
            lastProgress = now
        }

        /// Writes as much of the output as the socket takes, at most `budget` bytes; returns the
        /// bytes written, or nil when the connection failed (reset, broken pipe: close it).
        func write(budget: Int, now: Double) -> Int? {
            var written = 0
            while outputOffset < output.count && written < budget {
                let count = min(output.count - outputOffset, budget - written)
                let result = output.withUnsafeBytes { raw in
                    send(descriptor, raw.baseAddress! + outputOffset, count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
                if result > 0 {
                    outputOffset += result
                    written += result
                    lastProgress = now
                    lastSent = now
                    continue
                }
                let code = errno
                if result < 0 && code == EINTR { continue }
                if result < 0 && (code == EAGAIN || code == EWOULDBLOCK) {
                    isWritable = false
                    break
                }
                return nil
            }
            if outputOffset == output.count {
                output.removeAll(keepingCapacity: true)
                outputOffset = 0
            }
            return written
        }

        /// Reads what the socket holds into `scratch` (up to `limit` bytes); returns the count, 0 at
        /// the peer's end of stream, nil when nothing is there (`EAGAIN`), -1 on an error.
        func read(into scratch: inout [UInt8], limit: Int) -> Int? {
            while true {
                let result = scratch.withUnsafeMutableBytes { raw in
                    recv(descriptor, raw.baseAddress, min(limit, raw.count), Int32(MSG_DONTWAIT))
                }
                if result >= 0 { return result }
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return nil }
                return -1
            }
        }
    }
}
