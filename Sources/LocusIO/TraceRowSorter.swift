#if canImport(Glibc)
import Glibc
#endif
import LocusCore

/// The rows of a trace that is not in time order (per-tag or per-anchor exports concatenated,
/// recordings back to back), put into time order with bounded memory: an external merge sort.
///
/// Rows come in file order. Each block of `blockRows` rows is sorted by (time, position) — a stable
/// sort, so ties keep file order — and, once there is more than one block, spilled to a temporary
/// file in `TemporaryFiles.directory` (unlinked at once: the system deletes it when the sorter
/// goes, however the process ends). `next(into:)` then merges the blocks k-way by (time, block), so
/// the rows come out exactly as a stable sort of the whole trace by time would give them. Memory:
/// one block while sorting, a read buffer per block while merging (at most ~32 MiB in all).
package final class TraceRowSorter {
    private let blockRows: Int
    private var block: [TraceRow] = []
    /// The spill file (−1 until a second block is needed) and each spilled block's first row.
    private var spill: Int32 = -1
    private var blockStarts: [Int] = []
    private var spilledRows = 0
    /// Time-ordered runs met in the input (1 + the number of rows earlier than their predecessor).
    package private(set) var runs = 0
    private var lastTime = -Double.infinity
    /// Rows added.
    private(set) var count = 0

    // Merging.
    private struct Cursor {
        var next: Int
        var end: Int
        var buffer: [TraceRow] = []
        var position = 0
    }
    private var cursors: [Cursor] = []
    private struct Head: Comparable {
        var time: Double
        var block: Int
        static func < (a: Head, b: Head) -> Bool { a.time < b.time || (a.time == b.time && a.block < b.block) }
    }
    private var heads = MinHeap<Head>()
    private var merging = false
    private var memoryOffset = 0

    /// A sorter spilling blocks of `blockRows` rows (32 bytes each; default 1 Mi rows = 32 MiB).
    package init(blockRows: Int = 1 << 20) {
        self.blockRows = max(16, blockRows)
    }

    deinit {
        if spill >= 0 { Glibc.close(spill) }
    }

    /// Blocks written to the temporary file.
    package var spilledBlocks: Int { blockStarts.count }

    /// Adds rows in file order.
    /// - Throws: `E5005` when the temporary file cannot be written.
    package func add(_ rows: some Collection<TraceRow>) throws(LocusError) {
        precondition(!merging, "TraceRowSorter.add after the merge began")
        for r in rows {
            if r.timeSeconds < lastTime || runs == 0 { runs += 1 }
            lastTime = r.timeSeconds
            block.append(r)
            count += 1
            if block.count == blockRows { try spillBlock() }
        }
    }

    /// Appends up to `limit` rows in time order to `rows`; false when none are left.
    /// - Throws: `E5005`/`E5001` when the temporary file cannot be written or read back.
    package func next(into rows: inout [TraceRow], limit: Int = 1 << 15) throws(LocusError) -> Bool {
        if !merging { try beginMerge() }
        if blockStarts.isEmpty {
            // One block, sorted in memory.
            guard memoryOffset < block.count else { return false }
            let end = min(block.count, memoryOffset + limit)
            rows.append(contentsOf: block[memoryOffset..<end])
            memoryOffset = end
            return true
        }
        var produced = 0
        while produced < limit, let head = heads.top {
            let b = head.block
            rows.append(cursors[b].buffer[cursors[b].position])
            produced += 1
            cursors[b].position += 1
            if cursors[b].position == cursors[b].buffer.count { try refill(b) }
            if cursors[b].position < cursors[b].buffer.count {
                heads.replaceTop(with: Head(time: cursors[b].buffer[cursors[b].position].timeSeconds, block: b))
            } else {
                heads.pop()
            }
        }
        return produced > 0
    }

    /// Sorts the last block; with spilled blocks, spills it too and starts the k-way merge.
    private func beginMerge() throws(LocusError) {
        merging = true
        if blockStarts.isEmpty {
            Self.stableSortByTime(&block)
            return
        }
        if !block.isEmpty { try spillBlock() }
        block = []
        let total = spilledRows
        let perBlock = max(256, (32 << 20) / MemoryLayout<TraceRow>.stride / max(1, blockStarts.count))
        for (k, start) in blockStarts.enumerated() {
            let end = k + 1 < blockStarts.count ? blockStarts[k + 1] : total
            cursors.append(Cursor(next: start, end: end))
            cursors[k].buffer.reserveCapacity(min(perBlock, end - start))
            try refill(k, rows: perBlock)
            if let first = cursors[k].buffer.first { heads.push(Head(time: first.timeSeconds, block: k)) }
        }
    }

    /// Reads block `b`'s next rows into its buffer.
    private func refill(_ b: Int, rows limit: Int? = nil) throws(LocusError) {
        let want = min(limit ?? max(256, cursors[b].buffer.capacity), cursors[b].end - cursors[b].next)
        cursors[b].buffer.removeAll(keepingCapacity: true)
        cursors[b].position = 0
        guard want > 0 else { return }
        let stride = MemoryLayout<TraceRow>.stride
        let offset = cursors[b].next * stride
        let fd = spill
        let ok = withUnsafeTemporaryAllocation(of: TraceRow.self, capacity: want) { buffer -> Bool in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            var done = 0
            while done < raw.count {
                let n = pread(fd, raw.baseAddress! + done, raw.count - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                done += n
            }
            cursors[b].buffer.append(contentsOf: buffer)
            return true
        }
        guard ok else { throw LocusError(.fileUnreadable, "cannot read back the sorted rows", context: .init(file: TemporaryFiles.directory)) }
        cursors[b].next += want
    }

    /// Sorts the current block and writes it to the spill file.
    private func spillBlock() throws(LocusError) {
        if spill < 0 { spill = try TemporaryFiles.anonymous(purpose: "to sort the trace") }
        Self.stableSortByTime(&block)
        blockStarts.append(spilledRows)
        let fd = spill
        try block.withUnsafeBytes { raw in
            Result { () throws(LocusError) in
                try ByteSink.writeAll(fd, raw, name: TemporaryFiles.directory + " (the trace's sorted blocks)")
            }
        }.get()
        spilledRows += block.count
        block.removeAll(keepingCapacity: true)
    }

    /// Sorts by time, ties in their current order.
    private static func stableSortByTime(_ rows: inout [TraceRow]) {
        guard rows.count > 1 else { return }
        var order = Array(0..<rows.count)
        rows.withUnsafeBufferPointer { r in
            order.sort { a, b in r[a].timeSeconds < r[b].timeSeconds || (r[a].timeSeconds == r[b].timeSeconds && a < b) }
        }
        rows = order.map { rows[$0] }
    }
}
