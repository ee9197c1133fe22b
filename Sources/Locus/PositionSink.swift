import LocusCore

/// A batch of positions handed to a `PositionSink`: at most `DeliveryPolicy.maximumPositions`
/// fixes spanning less than `maximumDataSeconds` of data time, in release order.
public struct PositionBatch: Sendable, Hashable {
    /// The batch's sequence number: increasing per session (and per spool across restarts), so
    /// a sink can recognise a batch delivered twice after a crash (delivery is at least once).
    public var sequence: UInt64
    /// The positions, in (time, tag) order.
    public var positions: [PositionFix]
    /// True for a batch recovered from the spool (written by an earlier process).
    public var isRecovered: Bool

    /// A batch.
    public init(sequence: UInt64, positions: [PositionFix], isRecovered: Bool = false) {
        self.sequence = sequence
        self.positions = positions
        self.isRecovered = isRecovered
    }
}

/// Where a session delivers its positions in batches (a server upload, a file, a queue).
public protocol PositionSink: Sendable {
    /// Takes `batch`. Returning normally acknowledges it (a spooled batch is then deleted);
    /// throwing keeps it pending: it is offered again, in order, at the next delivery.
    func deliver(_ batch: PositionBatch) throws
}

/// When batches are cut: at `maximumPositions` positions or `maximumDataSeconds` of data time,
/// whichever comes first, and on `send()` and `end()`.
public struct DeliveryPolicy: Sendable, Hashable {
    /// Positions per batch at most (> 0).
    public var maximumPositions: Int
    /// Data time a batch spans at most, seconds: a position at tₖ with tₖ − t₀ ≥ this starts a new batch.
    public var maximumDataSeconds: Double
    /// The directory of the durable spool, or nil for memory only. With a spool each batch is
    /// written and fsynced before it is handed to the sink and deleted once acknowledged, and each
    /// position is appended to the open batch's journal before any callback sees it, so a killed
    /// process loses no position; pending batches are delivered first on the next start.
    public var spoolDirectory: String?

    /// A policy.
    public init(maximumPositions: Int = 300, maximumDataSeconds: Double = 60, spoolDirectory: String? = nil) {
        self.maximumPositions = maximumPositions
        self.maximumDataSeconds = maximumDataSeconds
        self.spoolDirectory = spoolDirectory
    }

    /// 300 positions or 60 s, in memory.
    public static let standard = DeliveryPolicy()
}
