import LocusCore

/// Cuts a session's positions into batches (`DeliveryPolicy`) and keeps the sealed ones until the
/// sink acknowledges them, journalling to the spool when there is one. Not thread-safe: lives in
/// the session's locked state.
struct PositionDelivery {
    let policy: DeliveryPolicy
    let spool: PositionSpool?
    /// The open batch.
    private(set) var open: [PositionFix] = []
    private var openStartSeconds = 0.0
    private(set) var openSequence: UInt64 = 1
    /// Sealed batches not yet acknowledged, in sequence order.
    private(set) var pending: [PositionBatch] = []
    private var journal: [UInt8] = []

    /// Delivery by `policy`; with a spool directory, recovers what an earlier process left.
    /// - Throws: `E5005`/`E5001` when the spool cannot be created or read.
    init(policy: DeliveryPolicy) throws(LocusError) {
        guard policy.maximumPositions > 0, policy.maximumDataSeconds > 0, !policy.maximumDataSeconds.isNaN else {
            throw LocusError(.invalidArgument, "a batch needs room for at least one position and a positive span")
        }
        self.policy = policy
        if let directory = policy.spoolDirectory {
            let spool = try PositionSpool(directory: directory)
            let (batches, next) = try spool.recover()
            self.spool = spool
            pending = batches
            openSequence = next
        } else {
            spool = nil
        }
    }

    /// Positions buffered or pending (not acknowledged).
    var undeliveredCount: Int { open.count + pending.reduce(0) { $0 + $1.positions.count } }

    /// Adds released fixes to the open batch, sealing at the policy's limits. Journals them first.
    /// Returns the spool failure, if any (the positions stay in memory).
    mutating func add(_ fixes: [PositionFix]) -> LocusError? {
        var failure: LocusError? = nil
        for fix in fixes {
            if !open.isEmpty && fix.timeSeconds - openStartSeconds >= policy.maximumDataSeconds {
                if let e = seal() { failure = e }
            }
            if open.isEmpty { openStartSeconds = fix.timeSeconds }
            open.append(fix)
            if spool != nil { PositionSpool.encode(fix, into: &journal) }
            if open.count >= policy.maximumPositions {
                if let e = seal() { failure = e }
            }
        }
        if let e = flushJournal() { failure = e }
        return failure
    }

    /// Seals the open batch (if any) into `pending`: with a spool, durable before it is offered.
    mutating func seal() -> LocusError? {
        guard !open.isEmpty else { return nil }
        var failure = flushJournal()
        if let spool {
            do throws(LocusError) { try spool.seal(sequence: openSequence) } catch { failure = error }
        }
        pending.append(PositionBatch(sequence: openSequence, positions: open))
        openSequence += 1
        open.removeAll(keepingCapacity: true)
        return failure
    }

    private mutating func flushJournal() -> LocusError? {
        guard let spool, !journal.isEmpty else { return nil }
        defer { journal.removeAll(keepingCapacity: true) }
        do throws(LocusError) { try spool.append(journal, sequence: openSequence) } catch { return error }
        return nil
    }

    /// The oldest pending batch.
    var nextPending: PositionBatch? { pending.first }

    /// The sink took batch `sequence`: forget it (and delete its file).
    mutating func acknowledge(_ sequence: UInt64) {
        guard let i = pending.firstIndex(where: { $0.sequence == sequence }) else { return }
        pending.remove(at: i)
        spool?.remove(sequence: sequence)
    }

    /// Drops the open batch and every pending one (`empty()`); returns how many positions.
    mutating func discard() -> Int {
        let n = undeliveredCount
        spool?.discardJournal(sequence: openSequence)
        for b in pending { spool?.remove(sequence: b.sequence) }
        pending.removeAll()
        if !open.isEmpty { openSequence += 1 }
        open.removeAll(keepingCapacity: true)
        journal.removeAll(keepingCapacity: true)
        return n
    }
}
